// Where a plan is read and compiled (issue 28, item 3): with placement 'worker' the calling
// thread never parses, validates nor compiles the plan (the page's backend's `compile` is never
// called, counted on the very object runPlan loads: loadBackend keeps one per realm); the pool's
// worker does it ('plan.describe', then 'plan.run'), for the cap's 200,000-node chain too, with
// the refusals the calling thread gives; a repeat over the same shapes reuses the description.
// Placement 'sync' compiles on the calling thread.
import { ABI_VERSION } from '../../src/engines/abi.js';
import { test } from '../bounded.js';
import assert from 'node:assert/strict';
import { Pool, PlanError, runPlan } from '../../src/index.js';
import { loadBackend } from '../../src/plan/backends.js';
import { chain } from '../plan-chain.js';

const PLAN_WORKER = new URL('../../src/plan/worker.js', import.meta.url);
const BACKENDS = [
  { label: 'native', backend: 'native' },
  { label: 'wasm simd', backend: 'wasm', wasm: 'simd' },
  { label: 'wasm scalar', backend: 'wasm', wasm: 'scalar' },
];

/** A pool that counts the tasks submitted to it, by op. */
class CountingPool extends Pool {
  ops = {};
  run(op, ...args) {
    this.ops[op] = (this.ops[op] ?? 0) + 1;
    return super.run(op, ...args);
  }
}

/** Counts the calls of `compile` on this thread's backend for `backend` and `wasm`, until restored. */
async function countCompiles(backend, wasm) {
  const { backend: loaded } = await loadBackend(backend, { wasm });
  const compile = loaded.compile;
  const counter = {
    calls: 0,
    restore: () => {
      loaded.compile = compile;
    },
  };
  loaded.compile = (json) => {
    counter.calls++;
    return compile.call(loaded, json);
  };
  return counter;
}

/** The longest gap (ms) between two ticks of a 1 ms interval while `run` runs. */
async function longestGap(run) {
  let last = performance.now();
  let gap = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
  }, 1);
  try {
    return { value: await run(), gap };
  } finally {
    clearInterval(tick);
  }
}

for (const { label, backend, wasm } of BACKENDS) {
  test(`${label}: placement 'worker' reads, validates and compiles the plan on its worker, never on the calling thread`, { timeout: 120_000 }, async (t) => {
    const compiles = await countCompiles(backend, wasm);
    const pool = new CountingPool({ worker: PLAN_WORKER, workers: 1, abi: ABI_VERSION, config: { backend, wasm } });
    const options = { backend, wasm, pool };
    try {
      // The cap: a chain of 200,000 nodes, 10.4 MB of JSON (0.5 s to read and validate on the
      // addon here, 1 s on wasm).
      const json = JSON.stringify(chain(200_000));
      const { value: [y], gap } = await longestGap(() => runPlan(json, [new Float32Array([1, 2])], options));
      assert.deepEqual([...y], [200_001, 200_002]);
      t.diagnostic(`the 200,000-node chain on a worker: the calling thread's longest gap between 1 ms ticks ${gap.toFixed(0)} ms`);
      // Run again over arrays of the same shapes: the worker's description serves again (no
      // round trip), the worker's compiled program too. Other shapes are laid out anew.
      const [again] = await runPlan(json, [new Float32Array([3, 4])], options);
      assert.deepEqual([...again], [200_003, 200_004]);
      assert.deepEqual(pool.ops, { 'plan.describe': 1, 'plan.run': 2 });
      const [longer] = await runPlan(json, [new Float32Array([5, 6, 7])], options);
      assert.deepEqual([...longer], [200_005, 200_006, 200_007]);
      assert.deepEqual(pool.ops, { 'plan.describe': 2, 'plan.run': 3 });

      // By id, into the caller's outputs, an object plan.
      const out = new Float32Array(3).fill(-1);
      const [z] = await runPlan(chain(3), { x: new Float32Array([1, 2, 3]) }, { ...options, outputs: { y: out } });
      assert.equal(z, out);
      assert.deepEqual([...out], [4, 5, 6]);
      // Inputs by an id the object inherits: laid out again in the plan's order, once read.
      const [w] = await runPlan(chain(2), Object.create({ x: new Float32Array([5]) }), options);
      assert.deepEqual([...w], [7]);

      // The refusals come from the worker with the codes and words the calling thread gives.
      const bad = { ...chain(1), nodes: [{ id: 'n0', op: 'pow', args: ['x', 'one'] }] };
      const refusals = [
        [bad, [new Float32Array(1)], {}],
        [chain(1), [new Float64Array(1)], {}],
        [chain(1), { x: new Float32Array(1), z: new Float32Array(1) }, {}],
        [chain(1), [new Float32Array(4)], { budget: 8 }],
        [chain(1), [new Float32Array(4)], { outputs: [new Float32Array(3)] }],
      ];
      const onWorker = [];
      for (const [plan, inputs, extra] of refusals) {
        onWorker.push(await runPlan(plan, inputs, { ...options, ...extra }).catch((e) => e));
      }
      assert.equal(compiles.calls, 0, "the calling thread's backend compiled nothing");
      assert.deepEqual(pool.ops, { 'plan.describe': 5 + refusals.length, 'plan.run': 5 });

      // Sync compiles here, and refuses alike.
      for (const [i, [plan, inputs, extra]] of refusals.entries()) {
        const here = await runPlan(plan, inputs, { ...options, ...extra, placement: 'sync' }).catch((e) => e);
        assert.ok(here instanceof PlanError && onWorker[i] instanceof PlanError, `${here} / ${onWorker[i]}`);
        assert.deepEqual([onWorker[i].code, onWorker[i].message], [here.code, here.message]);
      }
      assert.deepEqual(
        onWorker.map((e) => e.code),
        ['PLAN_INVALID', 'PLAN_BINDING', 'PLAN_BINDING', 'PLAN_BUDGET', 'PLAN_BINDING'],
      );
      assert.ok(compiles.calls >= 1, 'sync placement compiles on the calling thread');
      assert.equal(pool.reservedBytes, 0);
    } finally {
      compiles.restore();
      await pool.close();
    }
  });
}
