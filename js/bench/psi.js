// PSI bench (figures, not a test): every step of a round for a party of this package on one
// worker, scalar and simd128 wasm builds (and in Node the native addon), and sharded over
// --shards workers (scalar; the addon in Node), against
// @openmined/psi.js 2.0.6 on the calling thread, on the same values, in Node and in headless
// Chromium, in one run.
//
//   node bench/psi.js [--values 5000] [--rounds 3] [--shards 2,4]
//
// Values per second (median of --rounds after a warm-up); the ratio is ours over psi.js's
// better run of two (one before ours, one after). psi.js comes from peers/ (scripts/install-peers).
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import * as lockstep from '../src/index.js';
import { availableParallelism } from '../src/pool/platform.js';
import { measureAll } from './psi-steps.js';
import { openPage } from '../test/node/chromium.js';
import { serve } from '../test/node/serve.js';

const { values: args } = parseArgs({
  options: {
    values: { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '3' },
    shards: { type: 'string', default: '2,4' },
  },
});
const count = Number(args.values);
const rounds = Number(args.rounds);
const shards = args.shards.split(',').filter(Boolean).map(Number);

const peers = createRequire(new URL('../../peers/package.json', import.meta.url));
const PSI = (await import(pathToFileURL(peers.resolve('@openmined/psi.js')).href)).default;
const engine = await lockstep.psiInfo({ asset: 'native' }).catch((error) => {
  throw new Error(`the native addon is needed here (scripts/build-node): ${error.message}`);
});
const node = await measureAll(lockstep, PSI, count, rounds, shards, { native: engine.asset === 'native' });

const server = await serve();
const browser = await openPage();
let chromium;
try {
  await browser.page.goto(`${server.url}bench/psi.html`);
  await browser.page.waitForFunction(() => window.ready === true);
  chromium = await browser.page.evaluate((s) => window.bench(s), { count, rounds, shards });
} finally {
  await browser.close();
  await server.close();
}

const f0 = (v) => v.toFixed(0);
const f2 = (v) => v.toFixed(2);
console.log(`node ${process.version}, chromium; ${count} values a set, median of ${rounds} rounds; values/s\n`);
console.log('| step | env | ours, scalar | ours, simd128 | psi.js | scalar / psi.js | simd128 / psi.js |');
console.log('|---|---|---|---|---|---|---|');
for (const step of ['setup', 'request', 'respond', 'intersect']) {
  for (const [env, m] of [['Node', node], ['Chromium', chromium]]) {
    const row = [step, env, f0(m.scalar[step]), f0(m.simd[step]), f0(m.psiJs[step]), f2(m.scalar[step] / m.psiJs[step]), f2(m.simd[step] / m.psiJs[step])];
    console.log(`| ${row.join(' | ')} |`);
  }
}

const counts = [1, ...shards];
console.log(`\nSharded (scalar build; values/s; the ratios over 1 worker, and over psi.js; ${availableParallelism()} CPUs here)\n`);
console.log(`| step | env | ${counts.map((w) => `${w} worker${w === 1 ? '' : 's'}`).join(' | ')} | ${shards.map((w) => `${w} / 1`).join(' | ')} | ${counts.map((w) => `${w} / psi.js`).join(' | ')} |`);
console.log(`|---|---|${counts.map(() => '---|').join('')}${shards.map(() => '---|').join('')}${counts.map(() => '---|').join('')}`);
for (const step of ['setup', 'request', 'respond', 'intersect']) {
  for (const [env, m] of [['Node', node], ['Chromium', chromium]]) {
    const row = [
      step,
      env,
      ...counts.map((w) => f0(m.sharded[w][step])),
      ...shards.map((w) => f2(m.sharded[w][step] / m.sharded[1][step])),
      ...counts.map((w) => f2(m.sharded[w][step] / m.psiJs[step])),
    ];
    console.log(`| ${row.join(' | ')} |`);
  }
}
console.log(`\nThe native addon in Node (${engine.nativePackage}; values/s; its ratio over the wasm scalar build at the same worker count, and over psi.js)\n`);
console.log(`| step | ${counts.map((w) => `${w} worker${w === 1 ? '' : 's'}`).join(' | ')} | ${counts.map((w) => `${w}: / scalar`).join(' | ')} | ${counts.map((w) => `${w} / psi.js`).join(' | ')} |`);
console.log(`|---|${counts.map(() => '---|').join('')}${counts.map(() => '---|').join('')}${counts.map(() => '---|').join('')}`);
for (const step of ['setup', 'request', 'respond', 'intersect']) {
  const row = [
    step,
    ...counts.map((w) => f0(node.native[w][step])),
    ...counts.map((w) => f2(node.native[w][step] / node.sharded[w][step])),
    ...counts.map((w) => f2(node.native[w][step] / node.psiJs[step])),
  ];
  console.log(`| ${row.join(' | ')} |`);
}
// The prior system's browser party: 100,000 rows and 14 linkage keys, about 1.4 million
// values to mask, "about 28 minutes" with psi.js on one thread.
const masks = 1_400_000;
const minutes = (rate) => (masks / rate / 60).toFixed(1);
console.log(`\n100,000 rows x 14 keys (${masks} masks), estimated from the request rates in Chromium: psi.js ${minutes(chromium.psiJs.request)} min; ours ${counts.map((w) => `${minutes(chromium.sharded[w].request)} min on ${w}`).join(', ')}`);
