// The largest set the package states a browser tab supports, per role (js/README.md, "Memory"):
// one round at LARGEST values a party, each role pooled over 2 workers in a pool of its own, once
// in each browser BROWSERS names (the bench repeats; this test does not). Each step's
// memory, as its report gives it, must stay within the stated bounds. Chromium also gives the
// page's JS heap (performance.memory) and its own breakdown (measureUserAgentSpecificMemory);
// Firefox and WebKit give neither, so there the test bounds instead the peak resident size of the
// content process that runs the page and all four workers. The figures go to test/artifacts/largest-*.json.
import { test } from '../bounded.js';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { openPage as openChromium } from '../node/chromium.js';
import { openPage as openFirefox } from '../node/firefox.js';
import { openPage as openWebkit } from '../node/webkit.js';
import { serve } from '../node/serve.js';

/** The largest set stated: values a party. LOCKSTEP_PSI_LARGEST overrides it for a quick look. */
const LARGEST = Number(process.env.LOCKSTEP_PSI_LARGEST ?? 1_000_000);
const MiB = 2 ** 20;
// The stated bounds (js/README.md): per value, plus a fixed part.
const BOUNDS = {
  partyWasm: (n) => 560 * n + 16 * MiB, // the party's worker's wasm instance, its peak
  helperWasm: () => 8 * MiB, // a helper maps 2,048-value chunks
  page: (n) => 300 * n + 32 * MiB, // the page's JS heap, both parties' values and messages in it
  // Firefox's or WebKit's content process at its peak: the page, both parties' workers and
  // helpers, and the engine's own. Stated from measure, not from the parts above: WebKitGTK 2.50's
  // peaked at 2,317 and 2,392 MiB at 1,000,000 values a party (2026-12-05, two runs; the parts
  // above sum to under 1.5 GiB; what holds the rest is not yet known) and at 327 MiB at 20,000 (an
  // idle page: some 230 MiB). Firefox ESR 153's at 20,000: 182 MiB; at 1,000,000: 1,494 MiB.
  webProcess: (n) => 2_400 * n + 384 * MiB,
};

const label = `${LARGEST.toLocaleString('en-US')} values a party`;

/**
 * The browsers to run it in: Chromium unless LOCKSTEP_LARGEST_BROWSERS names others
 * (comma-separated: `chromium,firefox,webkit` for all three). WebKit and Firefox are left out of
 * the suite for its clock (the suite's hour had a minute to spare on a slower host with WebKit
 * in it, and the Python package came next); at 1,000,000 values a party WebKit passed in 355-359 s
 * (2026-12-07 and earlier, content process peaks 2,317-2,392 MiB) and Firefox in 375 s (2026-12-05).
 */
const BROWSERS = (process.env.LOCKSTEP_LARGEST_BROWSERS ?? 'chromium').split(',').map((b) => b.trim());
for (const name of BROWSERS) {
  if (!['chromium', 'firefox', 'webkit'].includes(name)) throw new Error(`LOCKSTEP_LARGEST_BROWSERS: no browser ${JSON.stringify(name)} (chromium, firefox, webkit)`);
}

/** One round in the page; checks what every engine reports; returns the rows. */
async function round(browser, server, name) {
  await browser.page.goto(`${server.url}bench/psi-memory.html`);
  await browser.page.waitForFunction(() => window.ready === true);
  const rows = await browser.page.evaluate((s) => window.bench(s), { count: LARGEST, workers: 2 });
  assert.deepEqual(rows.map((r) => r.step), ['setup', 'request', 'respond', 'intersect']);
  for (const { step, workers } of rows) {
    const [own, ...helpers] = workers;
    assert.equal(helpers.length, 1, `${step}: one helper`);
    assert.ok(own.wasmBytes <= BOUNDS.partyWasm(LARGEST), `${step}: the party's worker holds ${own.wasmBytes} bytes`);
    for (const helper of helpers) assert.ok(helper.wasmBytes > 0 && helper.wasmBytes <= BOUNDS.helperWasm(), `${step}: a helper holds ${helper.wasmBytes} bytes`);
  }
  assert.deepEqual(browser.problems, [], 'no errors in the page');
  return rows;
}

/** The figures beside the test's output and in test/artifacts/largest-<name>.json. */
function keep(t, name, figures) {
  const dir = fileURLToPath(new URL('../artifacts/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}largest-${name}.json`, JSON.stringify({ values: LARGEST, ...figures }, null, 2));
  for (const { step, seconds, workers } of figures.rows) {
    t.diagnostic(`${name} ${step}: ${seconds.toFixed(1)} s, party's worker wasm ${(workers[0].wasmBytes / MiB).toFixed(0)} MiB`);
  }
  if (figures.webProcessPeak) t.diagnostic(`${name} content process peak: ${(figures.webProcessPeak / MiB).toFixed(0)} MiB`);
}

if (BROWSERS.includes('chromium')) {
  test(`chromium: both roles complete a round at the largest stated set (${label}), pooled, within the stated memory`, { timeout: 1_200_000 }, async (t) => {
    const server = await serve();
    const browser = await openChromium({ args: ['--enable-precise-memory-info', '--enable-blink-features=ForceEagerMeasureMemory'] });
    try {
      const rows = await round(browser, server, 'chromium');
      keep(t, 'chromium', { rows });
      for (const { step, page, browser: seen } of rows) {
        assert.ok(page > 0 && page <= BOUNDS.page(LARGEST), `${step}: the page's heap is ${page} bytes`);
        assert.ok(seen && seen.page > 0 && seen.workers.length >= 2, `${step}: Chromium's own measure`);
      }
    } finally {
      await browser.close();
      await server.close();
    }
  });
}

for (const [name, openPage] of [['firefox', openFirefox], ['webkit', openWebkit]].filter(([n]) => BROWSERS.includes(n))) {
  test(`${name}: both roles complete a round at the largest stated set (${label}), pooled, within the stated memory`, { timeout: 1_200_000 }, async (t) => {
    const server = await serve();
    const browser = await openPage();
    try {
      const rows = await round(browser, server, name);
      // The page's own heap is not reported here (no performance.memory): its content process is.
      for (const { step, page } of rows) assert.ok(page == null, `${step}: no page heap reported`);
      const processes = browser.webProcesses();
      assert.ok(processes.length > 0, 'the page runs in a content process under the browser');
      const webProcessPeak = Math.max(...processes.map((p) => p.peakBytes));
      keep(t, name, { rows, webProcessPeak });
      assert.ok(webProcessPeak <= BOUNDS.webProcess(LARGEST), `the content process peaked at ${webProcessPeak} bytes`);
    } finally {
      await browser.close();
      await server.close();
    }
  });
}
