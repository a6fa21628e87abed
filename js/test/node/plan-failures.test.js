// Plans on the supervised pool when things go wrong, on the native addon and on wasm: a worker
// that crashes mid-plan or hangs is replaced, an abort during a run ends it, the pool's budget
// refuses a run by the memory the engine states for it, and reservations return to zero. And
// the refusals of bad input: a typed PlanError with a code before any work (no run task: on a
// worker, only the task that reads and lays out the plan there), nothing written into the
// caller's outputs.
import { ABI_VERSION } from '../../src/engines/abi.js';
import { test } from '../bounded.js';
import assert from 'node:assert/strict';
import { AbortError, BudgetError, Pool, PlanError, WorkerCrashError, WorkerHangError, closePlanPools, createPlanPool, runPlan } from '../../src/index.js';
import { chain } from '../plan-chain.js';

const FAULTY = new URL('../fixtures/plan-faulty-worker.js', import.meta.url);
const BACKENDS = [{ backend: 'native' }, { backend: 'wasm', wasm: 'simd' }];

const big = () => new Float32Array(1 << 24).fill(0.5);
/** A pool that counts the tasks submitted to it, by op. */
class CountingPool extends Pool {
  tasks = 0;
  ops = {};
  run(op, ...args) {
    this.tasks++;
    this.ops[op] = (this.ops[op] ?? 0) + 1;
    return super.run(op, ...args);
  }
}
const settled = async (pool) => {
  for (let i = 0; i < 200 && pool.reservedBytes !== 0; i++) await new Promise((r) => setTimeout(r, 10));
  return pool.reservedBytes;
};

for (const { backend, wasm } of BACKENDS) {
  const label = backend === 'native' ? 'native' : `wasm ${wasm}`;
  const faulty = (fault, options = {}) =>
    new Pool({ worker: FAULTY, workers: 1, abi: ABI_VERSION, config: { backend, wasm, fault }, ...options });

  test(`${label}: a worker that crashes mid-plan fails the run and is replaced`, async () => {
    const pool = faulty('crash');
    await assert.rejects(runPlan(chain(256), [big()], { backend, wasm, pool }), WorkerCrashError);
    assert.equal(await settled(pool), 0);
    const [y] = await runPlan(chain(3), [new Float32Array([1, 2])], { backend, wasm, pool });
    assert.deepEqual([...y], [4, 5]);
    await pool.close();
  });

  test(`${label}: a worker that hangs mid-plan is detected and replaced`, async () => {
    const pool = faulty('hang', { silence: { initial: 1500, min: 300 } });
    await assert.rejects(runPlan(chain(256), [big()], { backend, wasm, pool }), WorkerHangError);
    assert.equal(await settled(pool), 0);
    const [y] = await runPlan(chain(3), [new Float32Array([1])], { backend, wasm, pool });
    assert.deepEqual([...y], [4]);
    await pool.close();
  });

  test(`${label}: an abort during a run ends it and returns its reservation`, async () => {
    const pool = createPlanPool({ backend, wasm, workers: 1 });
    const controller = new AbortController();
    const outputs = [new Float32Array(1 << 24).fill(-1)];
    let beats = 0;
    await assert.rejects(
      runPlan(chain(256), [big()], {
        backend, wasm, pool, outputs, signal: controller.signal,
        onProgress: () => {
          beats++;
          controller.abort(new Error('enough'));
        },
      }),
      AbortError,
    );
    assert.ok(beats >= 1, 'the run had started');
    assert.ok(outputs[0].every((v) => v === -1), 'nothing written into the caller\'s outputs');
    assert.equal(await settled(pool), 0);
    const [y] = await runPlan(chain(2), [new Float32Array([1])], { backend, wasm, pool });
    assert.deepEqual([...y], [3]);
    await pool.close();
  });

  test(`${label}: the pool's budget refuses a run by the memory the engine states for it`, async () => {
    const x = new Float32Array(1 << 20);
    // The engine's figure for this run, from its own refusal.
    const refusal = await runPlan(chain(64), [x], { backend, wasm, placement: 'sync', budget: 1 }).catch((e) => e);
    assert.equal(refusal.code, 'PLAN_BUDGET');
    const needed = Number(/needs (\d+) bytes/.exec(refusal.message)[1]);
    assert.ok(needed > 8 << 20, `inputs and outputs (8 MiB) and working memory: ${needed}`);
    const tight = createPlanPool({ backend, wasm, workers: 1, memoryBudget: needed - 1 });
    await assert.rejects(runPlan(chain(64), [x], { backend, wasm, pool: tight }), (e) => e instanceof BudgetError && e.requested === needed);
    assert.equal(tight.stats.busy + tight.stats.queued, 0, 'refused before it reached a worker');
    await tight.close();
    const fits = createPlanPool({ backend, wasm, workers: 1, memoryBudget: needed });
    const [y] = await runPlan(chain(64), [x], { backend, wasm, pool: fits });
    assert.equal(y[0], 64);
    assert.equal(await settled(fits), 0);
    await fits.close();
  });

  for (const placement of ['sync', 'worker']) {
    test(`${label} ${placement}: bad input is a typed error before any work, the caller's outputs untouched`, async () => {
      const pool = new CountingPool({ worker: new URL('../../src/plan/worker.js', import.meta.url), workers: 1, abi: ABI_VERSION, config: { backend, wasm } });
      const options = { backend, wasm, placement, pool };
      const plan = {
        version: 1,
        inputs: [{ id: 'x', dtype: 'i32' }, { id: 'k', dtype: 'i32', view: { offset: 1 } }],
        nodes: [{ id: 'q', op: 'div', args: ['x', 'k'] }],
        outputs: [{ id: 'y', from: 'q' }],
      };
      const x = new Int32Array([10, 20, 30]);
      const k = new Int32Array([9, 1, 2, 5]);
      const fresh = () => [new Int32Array(3).fill(-7)];
      const refuse = async (p, inputs, extra, code, message) => {
        const outputs = fresh();
        const error = await runPlan(p, inputs, { ...options, outputs, ...extra }).catch((e) => e);
        assert.ok(error instanceof PlanError, `${code}: ${error}`);
        assert.equal(error.code, code);
        assert.match(error.message, message);
        assert.deepEqual([...outputs[0]], [-7, -7, -7], `${code}: outputs untouched`);
      };
      await refuse({ ...plan, nodes: [{ id: 'q', op: 'pow', args: ['x', 'k'] }] }, [x, k], {}, 'PLAN_INVALID', /nodes\[0\] "q"\.op: unknown op "pow"/);
      await refuse('{ "version": 1, ', [x, k], {}, 'PLAN_INVALID', /not a plan in format v1/);
      await refuse(plan, [new Float32Array(3), k], {}, 'PLAN_BINDING', /inputs\[0\] "x": the plan reads i32, the array holds f32/);
      await refuse(plan, [x, new Int32Array(3)], {}, 'PLAN_BINDING', /inputs\[1\] "k": its view takes 2 elements of its 3 but inputs\[0\] "x" has 3/);
      await refuse(plan, [x, [1, 2, 3, 4]], {}, 'PLAN_BINDING', /inputs\[1\] "k": Array, not one of the typed arrays a plan reads/);
      const detached = new Int32Array(4);
      structuredClone(detached.buffer, { transfer: [detached.buffer] });
      await refuse(plan, [x, detached], {}, 'PLAN_DETACHED', /inputs\[1\] "k": its buffer is detached/);
      await refuse(plan, [x, k], { budget: 20 }, 'PLAN_BUDGET', /over its budget of 20 bytes/);
      await refuse(plan, [x, k], { outputs: [new Int32Array(2)] }, 'PLAN_BINDING', /outputs\[0\] "y": 3 elements at offset 0 stride 1 reach past its 2 elements/);
      if (placement === 'sync') assert.equal(pool.tasks, 0, 'none of them reached the pool');
      // On a worker the plan is read and laid out there first ('plan.describe'); no run was asked.
      else assert.deepEqual(pool.ops, { 'plan.describe': 8 }, 'no run reached the pool');
      // Division by zero is found during the run: an error with the element, outputs untouched.
      await refuse(plan, [x, new Int32Array([1, 2, 0, 3])], {}, 'PLAN_DIVISION_BY_ZERO', /node "q": integer division by zero at element 1/);
      const outputs = fresh();
      await runPlan(plan, [x, k], { ...options, outputs });
      assert.deepEqual([...outputs[0]], [10, 10, 6]);
      assert.equal(await settled(pool), 0);
      await pool.close();
    });
  }
}

test('native: a worker terminated mid-run stops the addon\'s threads within a block, not at the end of the run', async () => {
  // A long run: 4,096 additions over 4M f32 (0.3-2 s on two native workers here).
  const plan = chain(4096);
  const x = new Float32Array(1 << 22).fill(0.5);
  const pool = createPlanPool({ backend: 'native', workers: 1 });
  await runPlan(chain(1), [new Float32Array(1)], { backend: 'native', pool }); // the worker started
  let start = performance.now();
  await runPlan(plan, [x], { backend: 'native', pool });
  const whole = performance.now() - start;
  const controller = new AbortController();
  start = performance.now();
  const run = runPlan(plan, [x], { backend: 'native', pool, signal: controller.signal, onProgress: () => controller.abort() });
  await assert.rejects(run, AbortError);
  // The reservation is held until the terminated worker is gone, and the worker is gone once its
  // teardown has cancelled the run and waited for its thread.
  assert.equal(await settled(pool), 0);
  const stopped = performance.now() - start;
  assert.ok(stopped < whole / 2, `the worker was gone ${stopped.toFixed(0)} ms after the start of a ${whole.toFixed(0)} ms run`);
  await pool.close();
});

test('the shared pools close', async () => {
  await closePlanPools();
});

test('Node Buffers: shared, overlapping and failing runs go through real copies on every backend', async () => {
  const plan = {
    version: 1,
    inputs: [{ id: 'x', dtype: 'u8' }, { id: 'k', dtype: 'u8' }],
    nodes: [{ id: 'q', op: 'div', args: ['x', 'k'] }],
    outputs: [{ id: 'y', from: 'q' }],
  };
  const n = 40_000;
  const x = Buffer.from(Array.from({ length: n }, (_, i) => (i * 7) & 0xff));
  const k = Buffer.from(Array.from({ length: n }, (_, i) => 1 + (i % 5)));
  const expected = Uint8Array.from(x, (v, i) => Math.floor(v / k[i]));
  for (const { backend, wasm } of BACKENDS) {
    const options = { backend, wasm, placement: 'sync' };
    // A division by zero midway: the caller's Buffer keeps every byte.
    const zero = Buffer.from(k);
    zero[30_000] = 0;
    const out = Buffer.alloc(n, 0xff);
    const error = await runPlan(plan, [x, zero], { ...options, outputs: [out] }).catch((e) => e);
    assert.equal(error.code, 'PLAN_DIVISION_BY_ZERO', `${backend}: ${error}`);
    assert.ok(out.every((b) => b === 0xff), `${backend}: nothing written into the caller's Buffer`);
    // Inputs in a SharedArrayBuffer, as Buffers over it.
    const shared = new SharedArrayBuffer(2 * n);
    const sx = Buffer.from(shared, 0, n);
    const sk = Buffer.from(shared, n, n);
    sx.set(x);
    sk.set(k);
    const [y] = await runPlan(plan, [sx, sk], options);
    assert.deepEqual(new Uint8Array(y), expected, `${backend}: shared inputs`);
    // The output over the input x's own memory: the bytes of separate arrays.
    const both = Buffer.from(x);
    const [z] = await runPlan(plan, [both, k], { ...options, outputs: [both] });
    assert.equal(z, both);
    assert.deepEqual(new Uint8Array(both), expected, `${backend}: an output over its input`);
  }
});
