// The pool's scenarios (test/scenarios.js) in headless Chromium, on Web Workers: each scenario
// is a test here, run in one page served from 127.0.0.1.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { openPage } from './chromium.js';
import { psiVector } from './psi-vector.js';
import { serve } from './serve.js';
import { scenarios } from '../scenarios.js';

const vector = psiVector();
const env = {
  psi: {
    key: [...vector.key],
    values: vector.values,
    request: [...vector.request],
    sizeOnly: [...vector.sizeOnly],
    normalized: [...vector.normalized],
    distinct: vector.distinct,
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
});

after(async () => {
  await browser?.close();
  await server?.close();
});

for (const [name] of scenarios) {
  test(`chromium: ${name}`, { timeout: 60_000 }, async () => {
    const outcome = await browser.page.evaluate(([n, e]) => window.runScenario(n, e), [name, env]);
    assert.ok(outcome.ok, outcome.error);
    assert.deepEqual(browser.problems, [], 'no uncaught errors in the page');
  });
}
