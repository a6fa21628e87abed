// Plans through the package in Node: every op x dtype on the native addon and both wasm builds,
// on the calling thread and on a worker, byte for byte against `lockstep plan run`
// (plan-cases.js, test/plan-check.js); what each backend reports; and refusals before any work.
import { before, test } from '../bounded.js';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { closePlanPools, createPlanPool, planInfo, runPlan } from '../../src/index.js';
import { checkPlanCases } from '../plan-check.js';
import { planCases } from './plan-cases.js';

const COMBOS = [
  { label: 'native sync', backend: 'native', placement: 'sync' },
  { label: 'native worker', backend: 'native', placement: 'worker' },
  { label: 'wasm simd sync', backend: 'wasm', wasm: 'simd', placement: 'sync' },
  { label: 'wasm simd worker', backend: 'wasm', wasm: 'simd', placement: 'worker' },
  { label: 'wasm scalar sync', backend: 'wasm', wasm: 'scalar', placement: 'sync' },
  { label: 'wasm scalar worker', backend: 'wasm', wasm: 'scalar', placement: 'worker' },
];

let cases;
before(() => {
  // Odd, past a block of every dtype and past the native executor's one-task size (32,768), so
  // the addon splits the run over workers.
  cases = planCases(33_001);
});

test('every op x dtype gives the CLI bytes on the addon and both wasm builds, sync and on a worker', { timeout: 300_000 }, async () => {
  const read = async (file) => new Uint8Array(readFileSync(join(cases.dir, file)));
  const runs = await checkPlanCases(cases.manifest, { read, runPlan, combos: COMBOS });
  assert.equal(runs, cases.manifest.cases.length * COMBOS.length * 2);
  await closePlanPools();
});

test('the addon loads here and says so; wasm says which build', async () => {
  assert.deepEqual(await planInfo(), { backend: 'native', asked: 'auto', reason: undefined, nativePackage: 'lockstep-linux-x64-gnu' });
  assert.equal((await planInfo({ backend: 'wasm' })).backend, 'wasm-simd');
  assert.equal((await planInfo({ backend: 'wasm', wasm: 'scalar' })).backend, 'wasm-scalar');
});

test('transfer hands the inputs over to the worker: the same bytes, the caller\'s inputs detached', async () => {
  const plan = { version: 1, inputs: [{ id: 'x', dtype: 'f64' }], nodes: [{ id: 'y', op: 'sqrt', args: ['x'] }], outputs: [{ id: 'o', from: 'y' }] };
  for (const backend of ['native', 'wasm']) {
    const x = Float64Array.from({ length: 50_001 }, (_, i) => i * 1.5);
    const [expected] = await runPlan(plan, [x], { backend, placement: 'sync' });
    const [got] = await runPlan(plan, [x], { backend, transfer: true });
    assert.deepEqual(got, expected);
    assert.equal(x.length, 0, 'the input was handed over');
    const shared = new Float64Array(new SharedArrayBuffer(8 * 4));
    await assert.rejects(runPlan(plan, [shared], { backend, transfer: true }), (e) => e.code === 'PLAN_BINDING' && /SharedArrayBuffer/.test(e.message));
  }
  await closePlanPools();
});
