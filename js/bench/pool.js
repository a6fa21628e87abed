// Pool overhead bench (figures, not a test): worker startup, no-op round trip and throughput
// for lockstep's pool in Node and in headless Chromium, and for piscina 5 in Node, in one run.
//
//   node bench/pool.js [--samples 15] [--tasks 2000] [--rounds 7] [--psi-values 5000]
//
// Startup: ms from a new pool to its first answer (one worker: spawn, module load, handshake);
// "wasm" adds loading the PSI wasm module. Round trip: µs per no-op task awaited one by one on
// one warm worker. Throughput: no-op tasks per second, all submitted at once, two workers.
// Medians. Ratios are piscina's figure over ours for times (above 1: we are faster) and ours
// over piscina's for throughput. PSI: values per second of one request of --psi-values values
// (5,000) on one worker, scalar and simd128 builds, against @openmined/psi.js 2.0.6's
// createRequest on the same values (wasm too, on the calling thread; from peers/).
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Piscina } from 'piscina';
import { Pool, createPsiPool, psiRequest } from '../src/index.js';
import { median, psiRate, roundTrip, startup, throughput } from './measure.js';
import { openPage } from '../test/node/chromium.js';
import { serve } from '../test/node/serve.js';

const { values: args } = parseArgs({
  options: {
    samples: { type: 'string', default: '15' },
    tasks: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '7' },
    'psi-values': { type: 'string', default: '5000' },
  },
});
const sizes = {
  samples: Number(args.samples),
  tasks: Number(args.tasks),
  rounds: Number(args.rounds),
  psiValues: Number(args['psi-values']),
};

const worker = new URL('./noop-worker.js', import.meta.url);
const ours = (workers) => ({
  make: () => new Pool({ worker, workers }),
  run: (pool) => pool.run('noop', 1),
  close: (pool) => pool.close(),
});
const piscina = (workers) => ({
  make: () =>
    new Piscina({ filename: new URL('./piscina-noop.js', import.meta.url).href, minThreads: workers, maxThreads: workers }),
  run: (pool) => pool.run(1),
  close: (pool) => pool.destroy(),
});
const psi = {
  make: () => createPsiPool({ workers: 1 }),
  run: (pool) => pool.run('noop', 1),
  close: (pool) => pool.close(),
};

const node = {
  startup: await startup(ours(1), sizes.samples),
  startupWasm: await startup(psi, sizes.samples),
  roundTrip: await roundTrip(ours(1), sizes.tasks, sizes.rounds),
  throughput2: await throughput(ours(2), sizes.tasks, sizes.rounds),
  psiScalar: await psiRate(() => createPsiPool({ workers: 1, asset: 'scalar' }), psiRequest, sizes.psiValues, 3),
  psiSimd: await psiRate(() => createPsiPool({ workers: 1, asset: 'simd' }), psiRequest, sizes.psiValues, 3),
};
const peer = {
  startup: await startup(piscina(1), sizes.samples),
  roundTrip: await roundTrip(piscina(1), sizes.tasks, sizes.rounds),
  throughput2: await throughput(piscina(2), sizes.tasks, sizes.rounds),
};

// The peer for the wasm rows: @openmined/psi.js 2.0.6 (wasm, on the calling thread), from
// peers/ (scripts/install-peers), on the same values.
const psiJs = await (async () => {
  const peers = createRequire(new URL('../../peers/package.json', import.meta.url));
  const PSI = (await import(pathToFileURL(peers.resolve('@openmined/psi.js')).href)).default;
  const psi = await PSI();
  const client = psi.client.createWithNewKey(true);
  const values = Array.from({ length: sizes.psiValues }, (_, i) => `person-${i}@example.org`);
  const rates = [];
  for (let r = 0; r < 3; r++) {
    const start = performance.now();
    client.createRequest(values).serializeBinary();
    rates.push(sizes.psiValues / ((performance.now() - start) / 1000));
  }
  return median(rates);
})();

const server = await serve();
const browser = await openPage();
let chromium;
try {
  await browser.page.goto(`${server.url}bench/browser.html`);
  await browser.page.waitForFunction(() => window.ready === true);
  chromium = await browser.page.evaluate((s) => window.bench(s), sizes);
} finally {
  await browser.close();
  await server.close();
}

const f = (value, digits = 2) => value.toFixed(digits);
const rows = [
  ['worker startup, ms', f(node.startup), f(peer.startup), f(peer.startup / node.startup), f(chromium.startup)],
  ['worker startup + PSI wasm, ms', f(node.startupWasm), '-', '-', f(chromium.startupWasm)],
  ['no-op round trip, µs/task', f(node.roundTrip, 1), f(peer.roundTrip, 1), f(peer.roundTrip / node.roundTrip), f(chromium.roundTrip, 1)],
  ['no-op throughput, 2 workers, tasks/s', f(node.throughput2, 0), f(peer.throughput2, 0), f(node.throughput2 / peer.throughput2), f(chromium.throughput2, 0)],
  ['PSI request, 1 worker, wasm scalar, values/s (peer: psi.js)', f(node.psiScalar, 0), f(psiJs, 0), f(node.psiScalar / psiJs), f(chromium.psiScalar, 0)],
  ['PSI request, 1 worker, wasm simd128, values/s (peer: psi.js)', f(node.psiSimd, 0), f(psiJs, 0), f(node.psiSimd / psiJs), f(chromium.psiSimd, 0)],
];
console.log(`node ${process.version}, piscina 5, chromium; samples ${sizes.samples}, tasks ${sizes.tasks}, rounds ${sizes.rounds}\n`);
console.log('| measure | lockstep (Node) | peer (Node): piscina 5 or psi.js | ratio | lockstep (Chromium) |');
console.log('|---|---|---|---|---|');
for (const row of rows) console.log(`| ${row.join(' | ')} |`);
