// The largest set the package states a browser tab supports, per role (js/README.md, "Memory"):
// one round at LARGEST values a party, each role pooled over 2 workers in a pool of its own, in
// headless Chromium, once (the bench repeats; this test does not). Each step's memory, as its
// report gives it and as Chromium's performance.measureUserAgentSpecificMemory sees it, must stay
// within the stated bounds; the figures go to test/artifacts/largest.json.
import { test } from '../bounded.js';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openPage } from '../node/chromium.js';
import { serve } from '../node/serve.js';

/** The largest set stated: values a party. LOCKSTEP_PSI_LARGEST overrides it for a quick look. */
const LARGEST = Number(process.env.LOCKSTEP_PSI_LARGEST ?? 1_000_000);
const MiB = 2 ** 20;
// The stated bounds (js/README.md): per value, plus a fixed part.
const BOUNDS = {
  partyWasm: (n) => 560 * n + 16 * MiB, // the party's worker's wasm instance, its peak
  helperWasm: () => 8 * MiB, // a helper maps 2,048-value chunks
  page: (n) => 300 * n + 32 * MiB, // the page's JS heap, both parties' values and messages in it
};

test(`chromium: both roles complete a round at the largest stated set (${LARGEST.toLocaleString('en-US')} values a party), pooled, within the stated memory`, { timeout: 1_200_000 }, async () => {
  const server = await serve();
  const browser = await openPage({ args: ['--enable-precise-memory-info', '--enable-blink-features=ForceEagerMeasureMemory'] });
  try {
    await browser.page.goto(`${server.url}bench/psi-memory.html`);
    await browser.page.waitForFunction(() => window.ready === true);
    const rows = await browser.page.evaluate((s) => window.bench(s), { count: LARGEST, workers: 2 });
    const dir = fileURLToPath(new URL('../artifacts/', import.meta.url));
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}largest.json`, JSON.stringify({ values: LARGEST, rows }, null, 2));
    assert.deepEqual(rows.map((r) => r.step), ['setup', 'request', 'respond', 'intersect']);
    for (const { step, workers, page, browser: seen } of rows) {
      const [own, ...helpers] = workers;
      assert.equal(helpers.length, 1, `${step}: one helper`);
      assert.ok(own.wasmBytes <= BOUNDS.partyWasm(LARGEST), `${step}: the party's worker holds ${own.wasmBytes} bytes`);
      for (const helper of helpers) assert.ok(helper.wasmBytes > 0 && helper.wasmBytes <= BOUNDS.helperWasm(), `${step}: a helper holds ${helper.wasmBytes} bytes`);
      assert.ok(page > 0 && page <= BOUNDS.page(LARGEST), `${step}: the page's heap is ${page} bytes`);
      assert.ok(seen && seen.page > 0 && seen.workers.length >= 2, `${step}: Chromium's own measure`);
    }
    assert.deepEqual(browser.problems, [], 'no errors in the page');
  } finally {
    await browser.close();
    await server.close();
  }
});
