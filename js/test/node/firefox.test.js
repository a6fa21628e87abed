// The pool's scenarios (test/scenarios/) in headless Firefox (page-suite.js).
import { openPage } from './firefox.js';
import { scenariosInPage } from './page-suite.js';

scenariosInPage('firefox', openPage);
