// The package's one worker default (src/limits.js): LOCKSTEP_WORKERS in Node when set, read as
// the CLI reads it (crates/shard/src/policy.rs, in its words), else the hardware's concurrency;
// read by new Pool, createPsiPool and createPlanPool (a count from the hardware capped at 4).
// runPlan leaves its native threads to the engine's policy (crates/face/src/plan.rs `workers`),
// which reads LOCKSTEP_WORKERS by the same rule, in Rust.
import { test } from '../bounded.js';
import assert from 'node:assert/strict';
import { MAX_AUTO_WORKERS, MAX_WORKERS, WORKERS_ENV, defaultWorkers, workersFromEnv } from '../../src/limits.js';
import { availableParallelism } from '../../src/pool/platform.js';
import { Pool, closePlanPools, createPlanPool, createPsiPool, runPlan } from '../../src/index.js';
import { loadBackend } from '../../src/plan/backends.js';

const worker = new URL('../fixtures/ops.js', import.meta.url);

/** Runs `fn` with LOCKSTEP_WORKERS set to `value` (undefined: unset), then restores it. */
async function withEnv(value, fn) {
  const before = process.env[WORKERS_ENV];
  if (value === undefined) delete process.env[WORKERS_ENV];
  else process.env[WORKERS_ENV] = value;
  try {
    return await fn();
  } finally {
    if (before === undefined) delete process.env[WORKERS_ENV];
    else process.env[WORKERS_ENV] = before;
  }
}

test('LOCKSTEP_WORKERS is read as the CLI reads it, and refused in its words', () => {
  assert.equal(workersFromEnv(undefined), undefined);
  assert.equal(workersFromEnv(' '), undefined, 'blank: unset');
  assert.equal(workersFromEnv('3'), 3);
  assert.equal(workersFromEnv(' +7 '), 7);
  assert.equal(workersFromEnv('256'), MAX_WORKERS);
  for (const bad of ['two', '0', '-3', '1.5', '1e2', '99999999999999999999']) {
    assert.throws(() => workersFromEnv(bad), { name: 'RangeError', message: `LOCKSTEP_WORKERS must be a positive whole number of workers, got "${bad}"` });
  }
  assert.throws(() => workersFromEnv('257'), { name: 'RangeError', message: 'LOCKSTEP_WORKERS asks for 257 workers, above the cap of 256' });
});

test('every pool reads the one default: LOCKSTEP_WORKERS, else the hardware (a plan pool capped at 4 then)', async () => {
  const hardware = Math.min(availableParallelism(), MAX_WORKERS);
  const counts = () => {
    const pools = [new Pool({ worker }), createPsiPool(), createPlanPool()];
    const workers = pools.map((pool) => pool.workers);
    // No worker starts before a task: closing them ends nothing.
    return Promise.all(pools.map((pool) => pool.close())).then(() => workers);
  };
  await withEnv(undefined, async () => {
    assert.equal(defaultWorkers(), hardware);
    assert.deepEqual(await counts(), [hardware, hardware, Math.min(hardware, MAX_AUTO_WORKERS)]);
  });
  await withEnv('7', async () => {
    assert.equal(defaultWorkers(), 7);
    assert.deepEqual(await counts(), [7, 7, 7], 'a count LOCKSTEP_WORKERS names is taken as it is');
    const given = [new Pool({ worker, workers: 2 }), createPsiPool({ workers: 2 }), createPlanPool({ workers: 2 })];
    assert.deepEqual(given.map((pool) => pool.workers), [2, 2, 2], "the caller's count wins");
    await Promise.all(given.map((pool) => pool.close()));
  });
  await withEnv('many', async () => {
    const words = { name: 'RangeError', message: 'LOCKSTEP_WORKERS must be a positive whole number of workers, got "many"' };
    assert.throws(() => new Pool({ worker }), words);
    assert.throws(() => createPsiPool(), words);
    assert.throws(() => createPlanPool(), words);
    const named = new Pool({ worker, workers: 1 });
    assert.equal(named.workers, 1, 'read only when no count is given');
    await named.close();
  });
});

test("runPlan leaves the addon's threads to the engine's policy, which reads LOCKSTEP_WORKERS as the CLI does", async () => {
  const { backend } = await loadBackend('native');
  /** @type {number[]} */
  const laidOut = [];
  const compile = backend.compile;
  // The layout's workers are what the run asks the addon for (Program.layout, plan/backends.js).
  backend.compile = (json) => {
    const program = compile(json);
    const layout = program.layout;
    return { ...program, layout: (ins, outs, workers, budget) => (laidOut.push(workers), layout(ins, outs, workers, budget)) };
  };
  /** @type {unknown[]} */
  const described = [];
  const pool = /** @type {any} */ ({
    run: (/** @type {string} */ op, /** @type {any} */ input) => {
      described.push(input.workers);
      return Promise.reject(new Error(`${op}: stopped here`));
    },
  });
  // A new plan each run, so that no compiled program or description is reused.
  let n = 0;
  const plan = () => ({ version: 1, inputs: [{ id: 'x', dtype: 'f32' }], nodes: [{ id: `y${n++}`, op: 'sqrt', args: ['x'] }], outputs: [{ id: 'out', from: `y${n - 1}` }] });
  const x = [new Float32Array(8)];
  try {
    await withEnv('5', async () => {
      await runPlan(plan(), x, { backend: 'native', placement: 'sync' });
      await runPlan(plan(), x, { backend: 'native', placement: 'sync', workers: 2 });
      await assert.rejects(runPlan(plan(), x, { backend: 'native', pool }), /stopped here/);
    });
    assert.deepEqual(laidOut, [0, 2], '0: the engine decides');
    assert.deepEqual(described, [undefined]);
  } finally {
    backend.compile = compile;
    await closePlanPools();
  }
  // The engine's decision shows in the working memory it lays out: a block's scratch a worker.
  const program = compile(JSON.stringify(plan()));
  const large = [{ dtype: /** @type {const} */ ('f32'), length: 1 << 24 }];
  const working = (/** @type {string | undefined} */ env) => withEnv(env, () => program.layout(large, undefined, 0, undefined).memory.working);
  const [one, two, asked] = [await working('1'), await working('2'), program.layout(large, undefined, 2, undefined).memory.working];
  assert.ok(one > 0 && two > one, `LOCKSTEP_WORKERS=1: ${one} bytes, =2: ${two}`);
  assert.equal(asked, two, 'as if asked for 2');
  await withEnv('two', () =>
    assert.throws(() => program.layout(large, undefined, 0, undefined), {
      code: 'PLAN_BINDING',
      message: 'workers: LOCKSTEP_WORKERS must be a positive whole number of workers, got "two"',
    }),
  );
});
