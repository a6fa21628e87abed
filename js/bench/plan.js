// The plan bench in Node: chains of f32 additions (x + 1 + 1 ..., 3 and 64 nodes) over 1K, 256K
// and 1M elements through runPlan, on the native addon and both wasm builds, on the calling
// thread and on a worker; beside, in the same run: the CLI's executor in process
// (lockstep-bench plan), numpy (a new array per node), numpy in place and numexpr
// (peers/plan.py), a node-by-node loop in JS over typed arrays, and the wasm simd128 build run
// node by node (the prior system's way: every node a full pass). Medians of --repeats.
//
//   node bench/plan.js [--repeats 21] [--elements 1024,262144,1048576] [--nodes 3,64]
//
// Columns: end-to-end ms (runPlan called to its outputs in hand: for a worker, the snapshot of
// the inputs, the round trip and the copies included); submission ms (worker: runPlan called to
// the task posted); the event loop's longest gap (ms between two ticks of a 1 ms timer, or
// from the last tick to the end of the run) while the run is in flight; worker startup (a new
// pool's first run of one element). Needs scripts/build-wasm, scripts/build-node, the release
// lockstep-bench (cargo build --release -p lockstep-bench) and scripts/install-peers.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool, closePlanPools, createPlanPool, planInfo, runPlan } from '../src/index.js';
import { defaultWorkers } from '../src/limits.js';
import { ABI_VERSION } from '../src/engines/abi.js';
import { chain } from '../test/plan-chain.js';

const { values: args } = parseArgs({
  options: {
    repeats: { type: 'string', default: '21' },
    elements: { type: 'string', default: '1024,262144,1048576' },
    nodes: { type: 'string', default: '3,64' },
    'addon-only': { type: 'boolean', default: false },
  },
});
const REPEATS = Number(args.repeats);
const ELEMENTS = args.elements.split(',').map(Number);
const NODES = args.nodes.split(',').map(Number);
const root = fileURLToPath(new URL('../../', import.meta.url));
const now = () => performance.now();
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};
const fmt = (ms) => (ms === undefined ? '-' : ms.toFixed(3));
const ratio = (a, b) => (a === undefined || b === undefined ? '-' : `${(a / b).toFixed(2)}x`);


/** A pool that notes when each task has been posted (run returns after the snapshot and post). */
class TimedPool extends Pool {
  posted = 0;
  run(op, input, options) {
    const promise = super.run(op, input, options);
    this.posted = now();
    return promise;
  }
}

/** The median ms of `run()` and the median longest event-loop gap during it. */
async function timed(run, repeats = REPEATS, warm = true) {
  if (warm) await run();
  const times = [];
  const gaps = [];
  const submissions = [];
  for (let r = 0; r < repeats; r++) {
    let last = now();
    let gap = 0;
    const tick = setInterval(() => {
      const t = now();
      gap = Math.max(gap, t - last);
      last = t;
    }, 1);
    // Let the timer start ticking before the run.
    await new Promise((resolve) => setTimeout(resolve, 3));
    last = now();
    gap = 0;
    const start = now();
    const submitted = await run();
    const end = now();
    clearInterval(tick);
    gaps.push(Math.max(gap, end - last));
    times.push(end - start);
    if (typeof submitted === 'number') submissions.push(submitted - start);
  }
  return { ms: median(times), gap: median(gaps), submission: submissions.length ? median(submissions) : undefined };
}

/**
 * `contenders` ({ name: run, or { setup, run } }) timed round-robin, `REPEATS` rounds after a
 * warm-up: each's median ms, median longest event-loop gap and median submission (when its run
 * returns the time its task was posted).
 */
async function interleaved(contenders) {
  const entries = Object.entries(contenders).map(([name, c]) => [name, typeof c === 'function' ? { setup: () => undefined, run: c } : c]);
  for (const [, c] of entries) await c.run(c.setup());
  const samples = Object.fromEntries(entries.map(([name]) => [name, { times: [], gaps: [], submissions: [] }]));
  for (let r = 0; r < REPEATS; r++) {
    for (const [name, c] of entries) {
      const input = c.setup();
      const one = await timed(() => c.run(input), 1, false);
      samples[name].times.push(one.ms);
      samples[name].gaps.push(one.gap);
      if (one.submission !== undefined) samples[name].submissions.push(one.submission);
    }
  }
  return Object.fromEntries(
    Object.entries(samples).map(([name, s]) => [name, { ms: median(s.times), gap: median(s.gaps), submission: s.submissions.length ? median(s.submissions) : undefined }]),
  );
}

/**
 * The median ms of `run()` back to back, as lockstep-bench times its runs (no pause between
 * them: `timed` waits for the event loop's timer before each run, which lets the native pool's
 * threads fall asleep).
 */
async function backToBack(run, repeats = REPEATS) {
  await run();
  const times = [];
  for (let r = 0; r < repeats; r++) {
    const start = now();
    await run();
    times.push(now() - start);
  }
  return median(times);
}

/** lockstep-bench plan's fused executor times (1 and 2 workers), in process, per (nodes, n). */
function cliTimes(nodes = NODES, elements = ELEMENTS) {
  const bin = `${root}target/release/lockstep-bench`;
  if (!existsSync(bin)) throw new Error(`${bin} is missing: cargo build --release -p lockstep-bench`);
  const out = execFileSync(bin, ['--workers', '1,2', 'plan', '--no-peers', '--quiet', '--dtypes', 'f32', '--nodes', nodes.join(','), '--elements', elements.join(','), '--repeats', String(REPEATS)], { encoding: 'utf8', cwd: root });
  const times = {};
  for (const line of out.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells[1] === 'f32') times[`${cells[2]}/${cells[3]}`] = { w1: Number(cells[4]), w2: Number(cells[5]) };
  }
  return times;
}

/** numpy, numpy in place, numexpr medians (peers/plan.py) for (nodes, n). */
function numpyTimes(nodes, n) {
  const python = `${root}peers/.venv/bin/python`;
  if (!existsSync(python)) return {};
  const out = execFileSync(python, [`${root}peers/plan.py`, 'bench', '--dtype', 'f32', '--elements', String(n), '--nodes', String(nodes), '--repeats', String(REPEATS)], { encoding: 'utf8' });
  return JSON.parse(out);
}

/** The JS loop node by node: every node a new full-size typed array. */
function jsNodeByNode(nodes, x) {
  let y = x;
  for (let k = 0; k < nodes; k++) {
    const next = new Float32Array(y.length);
    for (let i = 0; i < y.length; i++) next[i] = y[i] + 1;
    y = next;
  }
  return y;
}

/** The addon on one worker, sync, into the caller's output, per (nodes, n): its medians. */
async function addonInto() {
  const times = {};
  for (const nodes of NODES) {
    const plan = JSON.stringify(chain(nodes));
    for (const n of ELEMENTS) {
      const x = new Float32Array(n).fill(0.5);
      const outputs = [new Float32Array(n)];
      times[`${nodes}/${n}`] = (await timed(() => runPlan(plan, [x], { backend: 'native', placement: 'sync', workers: 1, outputs }))).ms;
    }
  }
  return times;
}

if (args['addon-only']) {
  // The child run of the baseline instruction set (LOCKSTEP_PLAN_ISA is read once a process).
  console.log(JSON.stringify(await addonInto()));
  process.exit(0);
}

/** The same in a child process on the executor's baseline build (SSE2: simd128's width). */
function baselineAddon() {
  const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--addon-only', '--repeats', String(REPEATS), '--elements', ELEMENTS.join(','), '--nodes', NODES.join(',')], {
    encoding: 'utf8',
    env: { ...process.env, LOCKSTEP_PLAN_ISA: 'baseline' },
  });
  return JSON.parse(out);
}

const info = await planInfo();
if (info.backend !== 'native') throw new Error(`the native addon does not load (${info.reason}): run scripts/build-node`);
const BACKENDS = [
  { label: 'native', options: { backend: 'native' } },
  { label: 'wasm simd128', options: { backend: 'wasm', wasm: 'simd' } },
  { label: 'wasm scalar', options: { backend: 'wasm', wasm: 'scalar' } },
];
const pools = new Map(BACKENDS.map((b) => [b.label, new TimedPool({ worker: new URL('../src/plan/worker.js', import.meta.url), workers: 1, abi: ABI_VERSION, config: { ...b.options } })]));

// The simd128 build's glue, as the package loaded it in this realm: node by node on it.
await runPlan(chain(1), [new Float32Array(1)], { backend: 'wasm', wasm: 'simd', placement: 'sync' });
const simdGlue = await import('../wasm/simd/lockstep_wasm.js');

const cli = cliTimes();
const baseline = baselineAddon();
const rows = [];
for (const nodes of NODES) {
  const plan = JSON.stringify(chain(nodes));
  for (const n of ELEMENTS) {
    const x = new Float32Array(n).fill(0.5);
    const expect = 0.5 + nodes;
    const row = { nodes, n, runs: {} };
    for (const { label, options } of BACKENDS) {
      const pool = pools.get(label);
      // Interleaved, so that a noisy moment (a GC, the machine's other tenants) falls on both.
      const { sync, worker, handed } = await interleaved({
        sync: async () => {
          const [y] = await runPlan(plan, [x], { ...options, placement: 'sync' });
          if (y[n - 1] !== expect) throw new Error(`${label}: ${y[n - 1]}`);
        },
        worker: async () => {
          const [y] = await runPlan(plan, [x], { ...options, placement: 'worker', pool });
          if (y[n - 1] !== expect) throw new Error(`${label} worker: ${y[n - 1]}`);
          return pool.posted;
        },
        handed: {
          setup: () => new Float32Array(n).fill(0.5),
          run: async (input) => {
            const [y] = await runPlan(plan, [input], { ...options, placement: 'worker', pool, transfer: true });
            if (y[n - 1] !== expect) throw new Error(`${label} transfer: ${y[n - 1]}`);
            return pool.posted;
          },
        },
      });
      row.runs[label] = { sync, worker, handed };
    }
    // Into the caller's outputs (as the CLI's in-process bench reuses its output arrays): the
    // addon on the default workers (limits.js) and on one, wasm simd128.
    const outputs = [new Float32Array(n)];
    row.nativeInto = await timed(() => runPlan(plan, [x], { backend: 'native', placement: 'sync', outputs }));
    row.native1 = await timed(() => runPlan(plan, [x], { backend: 'native', placement: 'sync', workers: 1, outputs }));
    row.simdInto = await timed(() => runPlan(plan, [x], { backend: 'wasm', wasm: 'simd', placement: 'sync', outputs }));
    const nbn = simdGlue.PlanProgram.fromJson(plan);
    nbn.setNodeByNode(true);
    row.wasmNodeByNode = await timed(() => {
      nbn.setInput(0, x);
      nbn.run();
      return void nbn.takeOutput(0);
    });
    nbn.free();
    row.js = await timed(() => void jsNodeByNode(nodes, x), Math.min(REPEATS, nodes * n > 1e7 ? 7 : REPEATS));
    row.numpy = numpyTimes(nodes, n);
    row.cli = cli[`${nodes}/${n}`];
    rows.push(row);
  }
}

// The acceptance's pair, interleaved: the 64-node 1M chain through the addon into the caller's
// output against lockstep-bench's in-process executor, alternating over 7 rounds (a process
// of the CLI's bench each round), on 1 and 2 workers; medians of the rounds' medians.
const versus = { addon: { w1: [], w2: [] }, cli: { w1: [], w2: [] } };
{
  const n = 1 << 20;
  const plan = JSON.stringify(chain(64));
  const x = new Float32Array(n).fill(0.5);
  const outputs = [new Float32Array(n)];
  for (let round = 0; round < 7; round++) {
    for (const w of [1, 2]) {
      versus.addon[`w${w}`].push(await backToBack(() => runPlan(plan, [x], { backend: 'native', placement: 'sync', workers: w, outputs })));
    }
    const times = cliTimes([64], [n]);
    versus.cli.w1.push(times[`64/${n}`].w1);
    versus.cli.w2.push(times[`64/${n}`].w2);
  }
}

// The simd128 build's executor alone (no copies in or out), fused against node by node, on
// the 64-node chain at 1M elements (the intermediates fit this machine's 32 MiB L3) and 16M
// (they do not).
const cacheRows = [];
for (const n of [1 << 20, 1 << 24]) {
  const x = new Float32Array(n).fill(0.5);
  const program = simdGlue.PlanProgram.fromJson(JSON.stringify(chain(64)));
  const times = { fused: [], nbn: [] };
  for (let r = 0; r < Math.min(REPEATS, 7); r++) {
    for (const mode of ['fused', 'nbn']) {
      program.setNodeByNode(mode === 'nbn');
      program.setInput(0, x);
      const start = now();
      program.run();
      times[mode].push(now() - start);
      program.takeOutput(0);
    }
  }
  program.free();
  cacheRows.push({ n, fused: median(times.fused), nbn: median(times.nbn) });
}

// The pool's floor at each size: a worker op that only allocates and writes its output (n f32
// in, n f32 out), against the same allocation and write on this thread; interleaved.
const floors = {};
{
  const pool = new Pool({ worker: new URL('./fresh-worker.js', import.meta.url), workers: 1 });
  for (const n of ELEMENTS) {
    const x = new Float32Array(n).fill(0.5);
    floors[n] = await interleaved({
      sync: () => void new Float32Array(n).fill(1),
      worker: () => pool.run('fresh', { x }),
    });
  }
  await pool.close();
}

// Worker startup: a new pool's first run of one element (median of 5).
const startups = {};
for (const { label, options } of BACKENDS) {
  const times = [];
  for (let i = 0; i < 5; i++) {
    const pool = createPlanPool({ ...options, workers: 1 });
    const start = now();
    await runPlan(chain(1), [new Float32Array(1)], { ...options, pool });
    times.push(now() - start);
    await pool.close();
  }
  startups[label] = median(times);
}
for (const pool of pools.values()) await pool.close();
await closePlanPools();

console.log(`plan bench (Node ${process.version}): f32 addition chains, medians of ${REPEATS}; addon workers: the package's default (LOCKSTEP_WORKERS, else the cores: ${defaultWorkers()} here)`);
console.log('\n| nodes | elements | backend | sync ms | worker ms | worker - sync ms | submission ms | worker, transfer ms | transfer - sync ms | sync gap ms | worker gap ms |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const row of rows) {
  for (const [label, { sync, worker, handed }] of Object.entries(row.runs)) {
    console.log(`| ${row.nodes} | ${row.n} | ${label} | ${fmt(sync.ms)} | ${fmt(worker.ms)} | ${fmt(worker.ms - sync.ms)} | ${fmt(worker.submission)} | ${fmt(handed.ms)} | ${fmt(handed.ms - sync.ms)} | ${fmt(sync.gap)} | ${fmt(worker.gap)} |`);
  }
}
console.log("\nInto the caller's outputs (the CLI's in-process bench reuses its arrays); addon 1w: one native worker; baseline: the executor's SSE2 build (LOCKSTEP_PLAN_ISA=baseline, the width of simd128) in a child process");
console.log('\n| nodes | elements | addon ms | CLI in-process 2w ms | addon / CLI 2w | addon 1w ms | CLI 1w ms | addon 1w / CLI 1w | addon 1w baseline ms | wasm simd fused ms | wasm simd / addon 1w | wasm simd / addon 1w baseline | wasm simd node-by-node ms | nbn / fused | JS node-by-node ms | numpy ms | numpy in place ms | numexpr ms |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
for (const row of rows) {
  const key = `${row.nodes}/${row.n}`;
  console.log(
    `| ${row.nodes} | ${row.n} | ${fmt(row.nativeInto.ms)} | ${fmt(row.cli?.w2)} | ${ratio(row.nativeInto.ms, row.cli?.w2)} | ${fmt(row.native1.ms)} | ${fmt(row.cli?.w1)} | ${ratio(row.native1.ms, row.cli?.w1)} | ${fmt(baseline[key])} | ${fmt(row.simdInto.ms)} | ${ratio(row.simdInto.ms, row.native1.ms)} | ${ratio(row.simdInto.ms, baseline[key])} | ${fmt(row.wasmNodeByNode.ms)} | ${ratio(row.wasmNodeByNode.ms, row.simdInto.ms)} | ${fmt(row.js.ms)} | ${fmt(row.numpy.numpy)} | ${fmt(row.numpy.numpy_in_place)} | ${fmt(row.numpy.numexpr)} |`,
  );
}
{
  const m = (list) => median(list);
  console.log('\nThe 64-node 1M f32 chain, the addon (sync, into the caller\'s output, runs back to back as lockstep-bench runs them) against the CLI\'s executor in process (lockstep-bench plan), interleaved over 7 rounds; medians of the rounds\' medians:');
  console.log('\n| workers | addon ms | CLI in-process ms | addon / CLI |');
  console.log('|---|---|---|---|');
  for (const w of ['w1', 'w2']) console.log(`| ${w.slice(1)} | ${fmt(m(versus.addon[w]))} | ${fmt(m(versus.cli[w]))} | ${ratio(m(versus.addon[w]), m(versus.cli[w]))} |`);
}
console.log('\nThe wasm simd128 executor alone (no copies), the 64-node chain, fused against node by node (every node a full pass), interleaved, medians of 7:');
console.log('\n| elements | fused ms | node-by-node ms | nbn / fused |');
console.log('|---|---|---|---|');
for (const r of cacheRows) console.log(`| ${r.n} | ${fmt(r.fused)} | ${fmt(r.nbn)} | ${ratio(r.nbn, r.fused)} |`);
console.log('\nThe floor of worker placement: a worker op that only allocates and writes an output of n f32 (n f32 in, the pool\'s snapshot), against the same on this thread, interleaved:');
console.log('\n| elements | this thread ms | worker ms | worker - this thread ms |');
console.log('|---|---|---|---|');
for (const [n, f] of Object.entries(floors)) console.log(`| ${n} | ${fmt(f.sync.ms)} | ${fmt(f.worker.ms)} | ${fmt(f.worker.ms - f.sync.ms)} |`);
console.log(`\nworker startup (a new pool's first run), ms: ${Object.entries(startups).map(([k, v]) => `${k} ${fmt(v)}`).join(', ')}`);
