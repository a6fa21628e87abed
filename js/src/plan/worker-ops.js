// @ts-check
// What a plan worker does (plan/worker.js serves it; test fixtures wrap it): load one backend
// per worker, and serve runPlan's two tasks on it: 'plan.describe' (read, validate and compile
// the plan, and lay out a run over the shapes the page found) and 'plan.run'. A worker keeps
// the plans it compiled (run.js `compiled`, by their JSON), so a run after its description on
// the same worker compiles nothing.
//
// On the native addon a run goes off the worker's thread (to a thread of the addon's own), so
// the worker keeps answering; the pool ends a run it aborts by terminating the worker, and the
// worker's teardown cancels the addon's run and waits for it (a block at most) before the
// arrays it holds are freed (bindings/node/src/flights.rs).

import { PlanError } from '../pool/errors.js';
import { copiedInto, copyOf, needsCopies, shapesOf } from './arrays.js';
import { allocated, loadBackend } from './backends.js';
import { compiled } from './run.js';

/** @typedef {import('./arrays.js').PlanArray} PlanArray */
/** @typedef {import('./backends.js').Shape} Shape */
/** @typedef {import('./backends.js').Signature} Signature */
/** @typedef {import('./backends.js').Layout} Layout */
/** @typedef {{ plan: string, inputs: PlanArray[], outputs?: PlanArray[], workers: number }} PlanTask */
/**
 * A 'plan.describe' task: the plan's JSON, and the shapes of the arrays the caller passed (in
 * the plan's order, or by id: the worker orders them by the plan's signature), null where the
 * page found one that is not a usable typed array (the page then refuses it itself, with the
 * plan's ids in its message); `outputs` undefined when the caller passed none.
 *
 * @typedef {object} DescribeTask
 * @property {string} plan
 * @property {Shape[] | Record<string, Shape> | null} inputs
 * @property {Shape[] | Record<string, Shape> | null | undefined} outputs
 * @property {number | undefined} workers  the native workers asked for (undefined: the backend's
 *   default, for the addon the engine's policy, which reads LOCKSTEP_WORKERS as the CLI does)
 * @property {number | undefined} budget
 */
/**
 * What 'plan.describe' answers: the compiled plan's signature and the run's native workers
 * (wasm: 1); and, when the shapes could be ordered, the shapes it laid out with the engine's
 * layout for them or the engine's refusal of them (PLAN_BINDING, PLAN_BUDGET), which the page
 * throws only after its own checks of the arrays, as the calling thread's order has it.
 *
 * @typedef {object} PlanDescription
 * @property {Signature[]} inputs
 * @property {Signature[]} outputs
 * @property {boolean} canFailMidway
 * @property {number} workers
 * @property {{ inputs: Shape[], outputs: Shape[] | undefined, layout?: Layout,
 *              refusal?: { code: string, message: string } } | null} laidOut
 */

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
 * `given`'s shapes in the order of `signature`: null if any is missing (the page says which).
 *
 * @param {Shape[] | Record<string, Shape> | null} given
 * @param {Signature[]} signature
 * @returns {Shape[] | null}
 */
function ordered(given, signature) {
  if (given === null) return null;
  if (Array.isArray(given)) return given;
  const list = signature.map((s) => (Object.hasOwn(given, s.id) ? given[s.id] : undefined));
  return list.every((shape) => shape !== undefined) ? /** @type {Shape[]} */ (list) : null;
}

/**
 * The 'plan.describe' op: the plan compiled here (PlanError PLAN_INVALID, thrown: the page
 * throws it as it came) and described (PlanDescription).
 *
 * @param {DescribeTask} task
 * @param {import('../pool/worker.js').OpContext} op
 * @returns {PlanDescription}
 */
export function describePlanOp({ plan, inputs, outputs, workers, budget }, { context }) {
  const backend = /** @type {import('./backends.js').Backend} what load returned */ (context);
  const program = compiled(backend, plan);
  // wasm runs on its instance's one thread whatever is asked: its layout (and so the run's
  // reservation) is for one.
  const runWorkers = backend.kind === 'native' ? (workers ?? backend.defaultWorkers) : 1;
  const description = { inputs: program.inputs, outputs: program.outputs, canFailMidway: program.canFailMidway, workers: runWorkers };
  const ins = ordered(inputs, program.inputs);
  const outs = outputs === undefined ? undefined : ordered(outputs, program.outputs);
  if (ins === null || outs === null) return { ...description, laidOut: null };
  try {
    return { ...description, laidOut: { inputs: ins, outputs: outs, layout: program.layout(ins, outs, runWorkers, budget) } };
  } catch (error) {
    if (!(error instanceof PlanError)) throw error;
    return { ...description, laidOut: { inputs: ins, outputs: outs, refusal: { code: error.code, message: error.message } } };
  }
}

/**
 * The 'plan.run' op: the run's outputs (the caller's, when the task carried them, else new).
 *
 * @param {PlanTask} task
 * @param {import('../pool/worker.js').OpContext} op
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

/** The ops a plan worker serves, by name (plan/worker.js; a fixture may wrap one). */
export const PLAN_OPS = Object.freeze({ 'plan.describe': describePlanOp, 'plan.run': runPlanOp });
