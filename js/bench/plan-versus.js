// The acceptance's pair on its own (figures, not a test): the 64-node 1M f32 chain through the
// addon against lockstep-bench's in-process executor, at 1 and 2 workers, interleaved over
// --rounds rounds (a process of the CLI's bench each round), with the addon's time taken apart:
//
// - runPlan: `runPlan(plan, [x], { backend: 'native', placement: 'sync', outputs })` (what
//   bench/plan.js reports);
// - addon run: the addon's `PlanProgram.run(inputs, outputs, workers)` alone, compiled once (the
//   engine and the napi crossing, none of runPlan's JS);
// - runPlan fixed: runPlan of the same plan over one element (its checks, layout and the await);
//
// the three alternated run by run, so the machine's noise falls on each alike.
//
//   node bench/plan-versus.js [--rounds 7] [--repeats 21]
//
// Medians of the rounds' medians, ms. Needs scripts/build-node and the release lockstep-bench.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runPlan } from '../src/index.js';
import { loadAddon } from '../src/engines/native.js';
import { chain } from '../test/plan-chain.js';

const { values: args } = parseArgs({
  options: { rounds: { type: 'string', default: '7' }, repeats: { type: 'string', default: '21' } },
});
const ROUNDS = Number(args.rounds);
const REPEATS = Number(args.repeats);
const N = 1 << 20;
const root = fileURLToPath(new URL('../../', import.meta.url));
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};


function cliTimes() {
  const bin = `${root}target/release/lockstep-bench`;
  if (!existsSync(bin)) throw new Error(`${bin} is missing: cargo build --release -p lockstep-bench`);
  const out = execFileSync(bin, ['--workers', '1,2', 'plan', '--no-peers', '--quiet', '--dtypes', 'f32', '--nodes', '64', '--elements', String(N), '--repeats', String(REPEATS)], { encoding: 'utf8', cwd: root });
  for (const line of out.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells[1] === 'f32') return { 1: Number(cells[4]), 2: Number(cells[5]) };
  }
  throw new Error(`no f32 row in lockstep-bench's output:\n${out}`);
}

const { addon, reason } = await loadAddon();
if (!addon) throw new Error(`the native addon does not load (${reason}): run scripts/build-node`);
const plan = JSON.stringify(chain(64));
const program = addon.PlanProgram.fromJson(plan);
const x = new Float32Array(N).fill(0.5);
const out = new Float32Array(N);
const one = new Float32Array(1).fill(0.5);
const oneOut = new Float32Array(1);
const rows = { 1: { runPlan: [], addon: [], fixed: [], cli: [] }, 2: { runPlan: [], addon: [], fixed: [], cli: [] } };
/**
 * The median ms of each of `runs`, alternated run by run (so the machine's noise falls on all
 * alike), after warm-ups.
 *
 * @param {Record<string, () => unknown>} runs
 */
async function alternated(runs) {
  const times = Object.fromEntries(Object.keys(runs).map((k) => [k, []]));
  for (let r = 0; r < REPEATS + 3; r++) {
    for (const [name, run] of Object.entries(runs)) {
      const start = performance.now();
      await run();
      if (r >= 3) times[name].push(performance.now() - start);
    }
  }
  return Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
}

for (let round = 0; round < ROUNDS; round++) {
  for (const w of [1, 2]) {
    const m = await alternated({
      runPlan: () => runPlan(plan, [x], { backend: 'native', placement: 'sync', workers: w, outputs: [out] }),
      addon: () => program.run([x], [out], w),
      fixed: () => runPlan(plan, [one], { backend: 'native', placement: 'sync', workers: w, outputs: [oneOut] }),
    });
    for (const name of ['runPlan', 'addon', 'fixed']) rows[w][name].push(m[name]);
  }
  const cli = cliTimes();
  for (const w of [1, 2]) rows[w].cli.push(cli[w]);
}
const f = (v) => v.toFixed(3);
console.log(`node ${process.version}; the 64-node f32 chain over ${N} elements; medians of ${ROUNDS} rounds' medians of ${REPEATS}, ms\n`);
console.log('| workers | runPlan | addon run | runPlan fixed (1 element) | CLI in-process | runPlan / CLI | addon run / CLI |');
console.log('|---|---|---|---|---|---|---|');
for (const w of [1, 2]) {
  const m = Object.fromEntries(Object.entries(rows[w]).map(([k, v]) => [k, median(v)]));
  console.log(`| ${w} | ${f(m.runPlan)} | ${f(m.addon)} | ${f(m.fixed)} | ${f(m.cli)} | ${(m.runPlan / m.cli).toFixed(2)} | ${(m.addon / m.cli).toFixed(2)} |`);
}
