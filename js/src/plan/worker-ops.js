// @ts-check
// What a plan worker does (plan-worker.js serves it; test fixtures wrap it): load one backend
// per worker, and run 'plan.run' tasks on it.
//
// On the native addon a run goes off the worker's thread (to a thread of the addon's own), so
// the worker keeps answering; the pool ends a run it aborts by terminating the worker, and the
// worker's teardown cancels the addon's run and waits for it (a block at most) before the
// arrays it holds are freed (bindings/node/src/flights.rs).

import { copiedInto, copyOf, needsCopies, shapesOf } from './arrays.js';
import { allocated, loadBackend } from './backends.js';
import { compiled } from './run.js';

/** @typedef {import('./arrays.js').PlanArray} PlanArray */
/** @typedef {{ plan: string, inputs: PlanArray[], outputs?: PlanArray[], workers: number }} PlanTask */

/**
 * The worker's `load`: the backend createPlanPool's config asks for.
 *
 * @param {unknown} sent
 */
export async function loadPlanWorker(sent = {}) {
  const config = /** @type {{ backend?: 'native' | 'wasm' | 'auto', wasm?: 'simd' | 'scalar', assetBase?: string }} */ (sent);
  const { backend, info } = await loadBackend(config.backend ?? 'auto', { wasm: config.wasm, assetBase: config.assetBase });
  return { asset: info.backend, abi: backend.abi, context: backend };
}

/**
 * The 'plan.run' op: the run's outputs (the caller's, when the task carried them, else new).
 *
 * @param {PlanTask} task
 * @param {import('../worker.js').OpContext} op
 */
export async function runPlanOp({ plan, inputs, outputs, workers }, { progress, context }) {
  const backend = /** @type {import('./backends.js').Backend} what load returned */ (context);
  const program = compiled(backend, plan);
  const layout = program.layout(shapesOf(inputs, 'inputs'), outputs && shapesOf(outputs, 'outputs'), workers, undefined);
  const given = outputs ?? program.outputs.map(() => undefined);
  if (program.start) {
    const all = allocated(given, layout, program.outputs);
    // The addon's threads read and write these arrays while this worker's JS runs on: they must
    // be this worker's alone (runPlan sends its own; a pool user's task might not).
    if (needsCopies(inputs, all)) {
      const copies = all.map(copyOf);
      await program.start(inputs.map(copyOf), copies, workers, progress).done;
      return copiedInto(all, copies);
    }
    await program.start(inputs, all, workers, progress).done;
    return all;
  }
  return program.run(inputs, given, layout, progress);
}
