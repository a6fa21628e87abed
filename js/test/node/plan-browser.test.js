// Plans through the package in headless Chromium, Firefox and WebKit (test/browser/plan.html): every op
// x dtype on both wasm builds, on the page and on a Web Worker, with subviews and an odd length,
// byte for byte against `lockstep plan run`; and 'auto' falls back to wasm, saying why.
import { after, before, test } from '../bounded.js';
import assert from 'node:assert/strict';
import { openPage as openChromium } from './chromium.js';
import { openPage as openFirefox } from './firefox.js';
import { openPage as openWebkit } from './webkit.js';
import { planCases } from './plan-cases.js';
import { serve } from './serve.js';

const LENGTH = 4_099; // odd, past a block of every dtype
let server;

before(async () => {
  planCases(LENGTH);
  server = await serve();
});
after(() => server?.close());

for (const [label, openPage] of [['chromium', openChromium], ['firefox', openFirefox], ['webkit', openWebkit]]) {
  test(`${label}: every op x dtype gives the CLI bytes on both wasm builds, on the page and on a worker`, { timeout: 180_000 }, async () => {
    const browser = await openPage();
    try {
      await browser.page.goto(`${server.url}test/browser/plan.html`);
      await browser.page.waitForFunction(() => window.ready === true);
      const info = await browser.page.evaluate(() => window.planInfo());
      assert.equal(info.backend, 'wasm-simd');
      assert.equal(info.asked, 'auto');
      assert.equal(info.reason, 'the native addon runs in Node only');
      const outcome = await browser.page.evaluate((folder) => window.checkPlans(folder), `plan-cases-${LENGTH}`);
      assert.ok(outcome.ok, outcome.error);
      assert.equal(outcome.runs, outcome.cases * outcome.combos * 2);
      assert.deepEqual(browser.problems, []);
    } finally {
      await browser.close();
    }
  });
}
