// The pool's scenarios (test/scenarios/) in WebKit (WebKitGTK's MiniBrowser under Xvfb, over
// classic WebDriver: webkit.js; page-suite.js).
import { openPage } from './webkit.js';
import { scenariosInPage } from './page-suite.js';

scenariosInPage('webkit', openPage);
