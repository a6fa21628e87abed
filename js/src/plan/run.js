// @ts-check
// runPlan: a plan of format v1 over typed arrays, on the native addon or the wasm module, on the
// calling thread ('sync') or on a supervised worker ('worker'). Every combination gives the
// bytes `lockstep plan run` gives.
//
// Order of a run, so that every refusal comes before any work and nothing reaches the caller's
// outputs unless the whole run succeeded:
//   1. the options, the arrays' kinds (typed arrays of the eight dtypes, not detached), the plan
//      validated by the engine (PLAN_INVALID), the arrays' shapes and the budget checked by the
//      engine's layout (PLAN_BINDING, PLAN_BUDGET);
//   2. sync: the run on this thread (into the caller's outputs directly only where no error
//      can come midway; else into arrays of its own, copied on success);
//      worker: a task reserving the run's memory (inputs, outputs, working memory: the
//      engine's figures), the inputs snapshotted, the run on a worker, its outputs checked and
//      copied into the caller's on success.

import { AbortError, PlanError, TaskError } from '../errors.js';
import { fieldOf } from '../fields.js';
import { availableParallelism } from '../platform.js';
import { Pool } from '../pool.js';
import { copiedInto, copyOf, dtypeOf, isShared, lengthOfArray, shapesOf, sharesMemoryWith } from './arrays.js';
import { allocated, checkTarget, loadBackend } from './backends.js';
import { snapshot } from '../snapshot.js';
import { WASM_ABI } from '../wasm.js';

/** @typedef {import('./arrays.js').PlanArray} PlanArray */
/** @typedef {import('./backends.js').Program} Program */
/** @typedef {import('./backends.js').Backend} Backend */
/** @typedef {import('./backends.js').BackendInfo} BackendInfo */

/** The module a plan pool's workers run. */
export const PLAN_WORKER_URL = new URL('../plan-worker.js', import.meta.url);

/** The most native workers a run may ask for (each count keeps a pool of threads in the addon). */
const MAX_WORKERS = 256;

/** Plans compiled per backend, by their JSON (a run repeats its plan): at most this many. */
const PROGRAMS_KEPT = 16;

/** @type {WeakMap<Backend, Map<string, Program>>} */
const programs = new WeakMap();

/**
 * `json` compiled by `backend`, kept for the next run of the same plan.
 *
 * @param {Backend} backend
 * @param {string} json
 */
export function compiled(backend, json) {
  let kept = programs.get(backend);
  if (!kept) programs.set(backend, (kept = new Map()));
  let program = kept.get(json);
  if (program) {
    kept.delete(json);
  } else {
    program = backend.compile(json);
    if (kept.size >= PROGRAMS_KEPT) kept.delete(/** @type {string} */ (kept.keys().next().value));
  }
  kept.set(json, program);
  return program;
}

/**
 * The plan's arrays in declaration order, from an array or an object by id, each's kind checked.
 *
 * @param {unknown} given
 * @param {import('./backends.js').Signature[]} signature
 * @param {'inputs' | 'outputs'} side
 * @returns {PlanArray[]}
 */
function arraysOf(given, signature, side) {
  /** @type {unknown[]} */
  let list;
  if (Array.isArray(given)) {
    list = given;
  } else if (given !== null && typeof given === 'object' && !ArrayBuffer.isView(given)) {
    const byId = /** @type {Record<string, unknown>} */ (given);
    const unknown = Object.keys(byId).filter((id) => !signature.some((s) => s.id === id));
    if (unknown.length > 0) {
      throw new PlanError(`${side}: the plan has no ${side.slice(0, -1)} ${JSON.stringify(unknown[0])}`, 'PLAN_BINDING');
    }
    list = signature.map((s) => byId[s.id]);
  } else {
    throw new PlanError(`${side} must be an array of typed arrays or an object of them by id`, 'PLAN_BINDING');
  }
  if (list.length !== signature.length) {
    throw new PlanError(`${side}: the plan has ${signature.length} ${side}, the run passed ${list.length}`, 'PLAN_BINDING');
  }
  return list.map((array, i) => {
    const at = `${side}[${i}] ${JSON.stringify(signature[i].id)}`;
    if (array === undefined && side === 'inputs') throw new PlanError(`${at}: missing`, 'PLAN_BINDING');
    dtypeOf(array, at);
    return /** @type {PlanArray} */ (array);
  });
}

/**
 * @param {string} name
 * @param {unknown} value
 */
function count(name, value) {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new PlanError(`${name} must be a whole number >= 0, not ${String(value)}`, 'PLAN_BINDING');
  }
  return value;
}

/** The default worker pools, one per backend kind (created on first use). */
/** @type {Map<string, Pool>} */
const pools = new Map();

/**
 * A supervised pool whose workers run plans on `backend` ('native', 'wasm', 'auto'; `wasm`:
 * the build, 'simd' or 'scalar', default the best the engine runs). Other options are the
 * Pool's; the default is `min(availableParallelism(), 4)` workers.
 *
 * @param {import('../index.js').PlanPoolOptions} [options]
 */
export function createPlanPool({ backend = 'auto', wasm, assetBase, ...options } = {}) {
  return new Pool({
    name: 'lockstep-plan',
    workers: Math.min(availableParallelism(), 4),
    ...options,
    worker: PLAN_WORKER_URL,
    abi: WASM_ABI,
    config: { backend, wasm, assetBase: assetBase === undefined ? undefined : String(assetBase) },
  });
}

/**
 * The shared pool for `info`'s backend.
 *
 * @param {BackendInfo} info
 * @param {string | URL | undefined} assetBase
 */
function sharedPool(info, assetBase) {
  const key = `${info.backend}/${assetBase ?? ''}`;
  let pool = pools.get(key);
  if (!pool) {
    pool = createPlanPool(
      info.backend === 'native'
        ? { backend: 'native' }
        : { backend: 'wasm', wasm: info.backend === 'wasm-simd' ? 'simd' : 'scalar', assetBase },
    );
    pools.set(key, pool);
  }
  return pool;
}

/** Closes the shared pools runPlan made (their workers end; a later run starts new ones). */
export async function closePlanPools() {
  const all = [...pools.values()];
  pools.clear();
  await Promise.all(all.map((pool) => pool.close()));
}

/**
 * Which backend `backend` loads here, and why (see BackendInfo).
 *
 * @param {{ backend?: import('./backends.js').BackendChoice, wasm?: 'simd' | 'scalar', assetBase?: string | URL }} [options]
 * @returns {Promise<BackendInfo>}
 */
export async function planInfo({ backend = 'auto', wasm, assetBase } = {}) {
  return (await loadBackend(backend, { wasm, assetBase })).info;
}

/**
 * Runs `plan` (format v1, as JSON text or an object) over `inputs`; see index.d.ts (runPlan).
 *
 * @param {string | object} plan
 * @param {PlanArray[] | Record<string, PlanArray>} inputs
 * @param {import('../index.js').RunPlanOptions} [options]
 * @returns {Promise<PlanArray[]>}
 */
export async function runPlan(plan, inputs, options = {}) {
  const {
    backend: asked = 'auto',
    placement = 'worker',
    signal,
    onProgress,
    outputs: given,
    budget,
    workers,
    pool,
    timeout,
    wasm,
    assetBase,
    transfer = false,
  } = options;
  if (placement !== 'sync' && placement !== 'worker') {
    throw new PlanError(`placement must be 'sync' or 'worker', not ${JSON.stringify(placement)}`, 'PLAN_BINDING');
  }
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new PlanError('onProgress must be a function', 'PLAN_BINDING');
  }
  const budgetBytes = count('budget', budget);
  const workerCount = count('workers', workers);
  if (workerCount !== undefined && workerCount > MAX_WORKERS) {
    throw new PlanError(`workers must be at most ${MAX_WORKERS}, not ${workerCount}`, 'PLAN_BINDING');
  }
  const aborted = () => {
    if (signal?.aborted) throw new AbortError('runPlan: aborted before it started', { cause: signal.reason });
  };
  aborted();
  let json;
  if (typeof plan === 'string') {
    json = plan;
  } else if (plan !== null && typeof plan === 'object') {
    try {
      json = JSON.stringify(plan);
    } catch (error) {
      throw new PlanError(`plan: not JSON (${String(error)})`, 'PLAN_INVALID', { cause: error });
    }
  } else {
    throw new PlanError('plan must be a plan of format v1, as JSON text or an object', 'PLAN_INVALID');
  }
  const { backend, info } = await loadBackend(asked, { wasm, assetBase });
  aborted();
  const program = compiled(backend, json);
  const ins = arraysOf(inputs, program.inputs, 'inputs');
  const outs = given === undefined ? undefined : arraysOf(given, program.outputs, 'outputs');
  // wasm runs on its instance's one thread whatever is asked: its layout (and so the task's
  // reservation) is for one.
  const runWorkers = backend.kind === 'native' ? (workerCount ?? backend.defaultWorkers) : 1;
  const layout = program.layout(shapesOf(ins, 'inputs'), outs && shapesOf(outs, 'outputs'), runWorkers, budgetBytes);
  const progress = onProgress && ((/** @type {number} */ done, /** @type {number} */ total) => onProgress({ done, total }));

  if (placement === 'sync') {
    if (!outs) return program.run(ins, program.outputs.map(() => undefined), layout, progress);
    // Straight into the caller's outputs only where nothing can fail midway; else into copies
    // of them (which keep what the views skip), copied back on success.
    if (!program.canFailMidway) return program.run(ins, outs, layout, progress);
    const results = program.run(ins, outs.map(copyOf), layout, progress);
    return copiedBack(outs, results, layout);
  }

  if (transfer && ins.some(isShared)) {
    throw new PlanError('transfer: an input backed by a SharedArrayBuffer cannot be handed over (it stays shared); run without transfer', 'PLAN_BINDING');
  }
  if (transfer && outs?.some((array) => sharesMemoryWith(array, ins))) {
    throw new PlanError('transfer: an output shares a buffer with an input, which would be handed over with it; run without transfer', 'PLAN_BINDING');
  }
  const target = pool ?? sharedPool(info, assetBase);
  // The task carries the inputs' snapshot (or, handed over, the inputs themselves) and the
  // arrays the worker writes: made here and moved there and back, so that the memory a run's
  // outputs live in is allocated where they end up (fresh arrays made on the worker and freed
  // here ran 2-4x slower in a one-off probe, their pages faulted anew each run). The caller's outputs travel as
  // copies when the run leaves some of their elements as they are.
  const inputsSent = transfer ? ins : /** @type {PlanArray[]} */ (snapshot(ins).value);
  const outputsSent = outs
    ? outs.map((array, i) => (layout.covered[i] ? undefined : copyOf(array)))
    : program.outputs.map(() => undefined);
  const sent = allocated(outputsSent, layout, program.outputs);
  // Measured now: the task moves these buffers to the worker.
  const sentLengths = sent.map(lengthOfArray);
  // The worker's outputs, checked by `validate` against the plan and layout.
  const results = /** @type {PlanArray[]} */ (
    await target
      .run(
        'plan.run',
        { plan: json, inputs: inputsSent, outputs: sent, workers: runWorkers },
        {
          owned: true,
          signal,
          onProgress,
          timeout,
          reserve: layout.memory.total,
          validate: (/** @type {unknown} */ output) => checkResults(output, program, sentLengths),
        },
      )
      .catch((/** @type {unknown} */ error) => {
        throw engineError(error);
      })
  );
  return outs ? copiedBack(outs, results, layout) : results;
}

/**
 * `results` copied into the caller's `outputs`, once every one of them has been checked able to
 * take its result (none detached or shrunk while the run was in flight): all or none.
 *
 * @param {PlanArray[]} outputs
 * @param {PlanArray[]} results
 * @param {import('./backends.js').Layout} layout
 */
function copiedBack(outputs, results, layout) {
  outputs.forEach((array, i) => checkTarget(array, Math.max(layout.outputs[i], lengthOfArray(results[i])), i));
  return copiedInto(outputs, results);
}

/**
 * The engine's refusal on a worker (a TaskError carrying a PLAN_ code) as the PlanError it was
 * there; anything else (a crash, a hang, an abort) as it came.
 *
 * @param {unknown} error
 */
function engineError(error) {
  if (error instanceof TaskError) {
    const code = fieldOf(error.cause, 'code');
    if (typeof code === 'string' && code.startsWith('PLAN_')) {
      return new PlanError(String(fieldOf(error.cause, 'message')), code, { cause: error });
    }
  }
  return error;
}

/**
 * A worker's outputs, checked against the plan and layout (a wrong one is the worker's fault:
 * the pool makes it a ProtocolError).
 *
 * @param {unknown} output
 * @param {Program} program
 * @param {number[]} lengths  the arrays sent to the worker's lengths
 */
function checkResults(output, program, lengths) {
  if (!Array.isArray(output) || output.length !== program.outputs.length) {
    throw new TypeError(`a plan run must give ${program.outputs.length} arrays`);
  }
  output.forEach((array, i) => {
    const dtype = dtypeOf(array, `outputs[${i}]`);
    if (dtype !== program.outputs[i].dtype || lengthOfArray(array) !== lengths[i]) {
      throw new TypeError(`outputs[${i}]: ${dtype} x ${lengthOfArray(array)}, not ${program.outputs[i].dtype} x ${lengths[i]}`);
    }
  });
}
