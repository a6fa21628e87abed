// The pool's scenarios (test/scenarios/) in headless Chromium (page-suite.js).
import { openPage } from './chromium.js';
import { scenariosInPage } from './page-suite.js';

scenariosInPage('chromium', openPage);
