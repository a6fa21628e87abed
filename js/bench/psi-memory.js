// PSI memory bench (figures, not a test): one round at each size, each role in a pool of its own
// sharded over --workers, in Node and in headless Chromium; after each step the page's JS heap
// and each worker's bytes (its wasm instance's linear memory, which never shrinks, and its JS
// heap: Node's per-isolate figures; in Chromium performance.measureUserAgentSpecificMemory's
// per-worker breakdown, the page being cross-origin isolated), and bytes per row.
//
//   node bench/psi-memory.js [--values 100000,1000000] [--workers 2] [--only chromium]
import { parseArgs } from 'node:util';
import * as lockstep from '../src/index.js';
import { memoryRound } from '../test/psi-memory-round.js';
import { openPage } from '../test/node/chromium.js';
import { serve } from '../test/node/serve.js';

const { values: args } = parseArgs({
  options: {
    values: { type: 'string', default: '100000' },
    workers: { type: 'string', default: '2' },
    only: { type: 'string' },
  },
});
const sizes = args.values.split(',').map(Number);
const workers = Number(args.workers);

const mb = (bytes) => (bytes === undefined ? 'n/a' : (bytes / 2 ** 20).toFixed(1));
const perRow = (bytes, count) => (bytes === undefined ? 'n/a' : (bytes / count).toFixed(0));

console.log(`${workers} workers a party; MiB after each step (wasm: the instance's linear memory, its peak; heap: JS)\n`);
console.log('| env | values | step | s | values/s | page heap | party worker wasm | party worker heap | helper wasm (largest) | helper heap (largest) | party wasm B/value | browser: page | browser: largest worker |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
const print = (env, count, rows) => {
  for (const r of rows) {
    const [own, ...helpers] = r.workers;
    const helperWasm = Math.max(0, ...helpers.map((h) => h.wasmBytes));
    const helperHeaps = helpers.map((h) => h.heapBytes).filter((h) => h !== undefined);
    const row = [
      env, count, r.step, r.seconds.toFixed(1), (count / r.seconds).toFixed(0), mb(r.page), mb(own.wasmBytes), mb(own.heapBytes),
      mb(helperWasm), helperHeaps.length ? mb(Math.max(...helperHeaps)) : 'n/a', perRow(own.wasmBytes, count),
      mb(r.browser?.page), r.browser?.workers.length ? mb(r.browser.workers[0]) : 'n/a',
    ];
    console.log(`| ${row.join(' | ')} |`);
  }
};

if (args.only !== 'chromium') {
  for (const count of sizes) print('Node', count, await memoryRound(lockstep, count, workers, undefined));
}
if (args.only !== 'node') {
  const server = await serve();
  const browser = await openPage({ args: ['--enable-precise-memory-info', '--enable-blink-features=ForceEagerMeasureMemory'] });
  try {
    await browser.page.goto(`${server.url}bench/psi-memory.html`);
    await browser.page.waitForFunction(() => window.ready === true);
    for (const count of sizes) print('Chromium', count, await browser.page.evaluate((s) => window.bench(s), { count, workers }));
  } finally {
    await browser.close();
    await server.close();
  }
}
