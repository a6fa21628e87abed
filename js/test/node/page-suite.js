// The pool's scenarios (test/scenarios/) in a headless browser, on Web Workers: each scenario
// is a test, run in one page (test/browser/index.html) served from 127.0.0.1. browser.test.js
// runs them in Chromium, firefox.test.js in Firefox, webkit.test.js in WebKit.
import { after, before, test } from '../bounded.js';
import assert from 'node:assert/strict';
import { psiRound } from './psi-round.js';
import { psiVector } from './psi-vector.js';
import { serve } from './serve.js';
import { scenarios } from '../scenarios/index.js';

/**
 * Defines one test per scenario, named `${label}: ${scenario}`, in the page of the browser
 * `openPage` launches ({ page, problems, close }, as chromium.js and firefox.js return it).
 */
export function scenariosInPage(label, openPage) {
  const vector = psiVector();
  const env = {
    psi: {
      key: [...vector.key],
      values: vector.values,
      request: [...vector.request],
      sizeOnly: [...vector.sizeOnly],
      normalized: [...vector.normalized],
      distinct: vector.distinct,
      round: psiRound(),
    },
  };
  let server;
  let browser;

  before(async () => {
    server = await serve();
    browser = await openPage();
    await browser.page.goto(`${server.url}test/browser/index.html`);
    await browser.page.waitForFunction(() => window.ready === true);
    const names = await browser.page.evaluate(() => window.scenarioNames());
    assert.deepEqual(names, scenarios.map(([name]) => name), 'the page runs the same scenarios');
    // Sent once: the vector is some 100 kB as JSON, which each scenario's call would resend.
    await browser.page.evaluate((e) => window.setEnv(e), env);
  });

  after(async () => {
    await browser?.close();
    await server?.close();
  });

  for (const [name] of scenarios) {
    test(`${label}: ${name}`, { timeout: 60_000 }, async (t) => {
      const outcome = await browser.page.evaluate((n) => window.runScenario(n), name);
      // Its figures (how soon a helper's worker was free) to the log, as pool.test.js's.
      for (const [figure, ms] of await browser.page.evaluate(() => window.takeFigures())) t.diagnostic(`${figure}: ${ms} ms`);
      assert.ok(outcome.ok, outcome.error);
      assert.deepEqual(browser.problems, [], 'no uncaught errors in the page');
    });
  }
}
