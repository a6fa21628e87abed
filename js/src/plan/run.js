// @ts-check
// runPlan: a plan of format v1 over typed arrays, on the native addon or the wasm module, on the
// calling thread ('sync') or on a supervised worker ('worker'). Every combination gives the
// bytes `lockstep plan run` gives.
//
// Order of a run, so that every refusal comes before any work and nothing reaches the caller's
// outputs unless the whole run succeeded:
//   1. the options, the plan validated by the engine (PLAN_INVALID), the arrays' kinds (typed
//      arrays of the eight dtypes, not detached), their shapes and the budget checked by the
//      engine's layout (PLAN_BINDING, PLAN_BUDGET). sync: all on this thread. worker: the plan
//      is read, validated, compiled and laid out on a worker of the pool ('plan.describe',
//      worker-ops.js: this thread never parses nor compiles it), which answers the plan's
//      signature and the layout for the shapes found here; the kinds' checks and the plan's
//      order of the arrays are made here with that signature, then the worker's refusal of the
//      shapes, if any, is thrown: the same errors in the same order as sync;
//   2. sync: the run on this thread (into the caller's outputs directly only where no error
//      can come midway; else into arrays of its own, copied on success);
//      worker: a task reserving the run's memory (inputs, outputs, working memory: the
//      engine's figures), the inputs snapshotted, the run on a worker, its outputs checked and
//      copied into the caller's on success.

import { AbortError, PlanError, TaskError } from '../pool/errors.js';
import { fieldOf } from '../pool/fields.js';
import { Pool } from '../pool/pool.js';
import { ARRAY_OF, copiedInto, copyOf, dtypeOf, isShared, lengthOfArray, shapesOf, sharesMemoryWith } from './arrays.js';
import { allocated, checkTarget, loadBackend } from './backends.js';
import { snapshot } from '../pool/snapshot.js';
import { WASM_ABI } from '../engines/wasm.js';
import { MAX_WORKERS, defaultWorkers } from '../limits.js';

/** @typedef {import('./arrays.js').PlanArray} PlanArray */
/** @typedef {import('./backends.js').Program} Program */
/** @typedef {import('./backends.js').Backend} Backend */
/** @typedef {import('./backends.js').BackendInfo} BackendInfo */
/** @typedef {import('./backends.js').Shape} Shape */
/** @typedef {import('./backends.js').Signature} Signature */
/** @typedef {import('./backends.js').Layout} Layout */
/** @typedef {import('./worker-ops.js').PlanDescription} PlanDescription */

/** The module a plan pool's workers run. */
export const PLAN_WORKER_URL = new URL('./worker.js', import.meta.url);

/**
 * What a 'plan.describe' task reserves against the pool's memory budget: a bound on what reading,
 * validating and compiling the plan takes on its worker, DESCRIBE_BASE + DESCRIBE_PER_CHAR bytes
 * a character of its JSON. Measured here (chains of 20,000 and 200,000 nodes: 1.0 and 10.4 MB of
 * JSON): the engine's peak over what the worker held before was 14-17 bytes a byte of JSON on the
 * addon, 4-17 on wasm; the text's copy on the worker adds at most 2 bytes a character. The
 * compiled program then stays in the worker's kept programs (PROGRAMS_KEPT), as it stays on the
 * calling thread for sync placement: that memory is not reserved by any task.
 */
const DESCRIBE_BASE = 64 * 1024;
const DESCRIBE_PER_CHAR = 24;

/**
 * The silence a 'plan.describe' task may keep at the least (it reports no progress: its one
 * engine call cannot beat): 2 s + 1 µs a character of JSON, some 10x what the 200,000-node chain
 * (10.4 MB) took here (0.54 s on the addon, 1.0 s on wasm).
 *
 * @param {string} json
 */
const describeSilence = (json) => 2_000 + Math.ceil(json.length / 1_000);

/** Plans compiled per backend, by their JSON (a run repeats its plan): at most this many. */
const PROGRAMS_KEPT = 16;

/** The layouts kept a plan and pool (descriptions, below): at most this many. */
const LAYOUTS_KEPT = 8;

/**
 * The descriptions a pool's workers gave ('plan.describe'), by the plan's JSON (at most
 * PROGRAMS_KEPT a pool), then by the shapes, workers and budget described (at most LAYOUTS_KEPT):
 * only those with a layout. What a worker answers is the engine's, a function of these and the
 * pool's backend, so a run that repeats a plan over arrays of the same shapes skips the round
 * trip and this thread still reads nothing of the plan.
 *
 * @type {WeakMap<object, Map<string, Map<string, PlanDescription>>>}
 */
const descriptions = new WeakMap();

/**
 * The LRU `kept`'s entry for `key`, moved to the end (the most recent), or undefined.
 *
 * @template T
 * @param {Map<string, T>} kept
 * @param {string} key
 */
function recent(kept, key) {
  const value = kept.get(key);
  if (value !== undefined) {
    kept.delete(key);
    kept.set(key, value);
  }
  return value;
}

/**
 * `value` kept in the LRU `kept` under `key`, the oldest entry dropped past `most`.
 *
 * @template T
 * @param {Map<string, T>} kept
 * @param {string} key
 * @param {T} value
 * @param {number} most
 */
function keep(kept, key, value, most) {
  kept.delete(key);
  if (kept.size >= most) kept.delete(/** @type {string} */ (kept.keys().next().value));
  kept.set(key, value);
}

/** @type {WeakMap<Backend, Map<string, Program>>} */
const programs = new WeakMap();

/**
 * `json` compiled by `backend`, kept for the next run of the same plan: on the calling thread
 * for sync placement, on a plan worker for worker placement (worker-ops.js), never both.
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
 * @param {Signature[]} signature
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
 * Pool's; the default worker count is the package's (limits.js: LOCKSTEP_WORKERS in Node, else
 * the hardware's concurrency), a count from the hardware at most MAX_AUTO_WORKERS: each worker's
 * native runs start threads of their own.
 *
 * @param {import('../index.js').PlanPoolOptions} [options]
 */
export function createPlanPool({ backend = 'auto', wasm, assetBase, workers = defaultWorkers({ capped: true }), ...options } = {}) {
  return new Pool({
    name: 'lockstep-plan',
    workers,
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
  const progress = onProgress && ((/** @type {number} */ done, /** @type {number} */ total) => onProgress({ done, total }));

  if (placement === 'sync') {
    const program = compiled(backend, json);
    const ins = arraysOf(inputs, program.inputs, 'inputs');
    const outs = given === undefined ? undefined : arraysOf(given, program.outputs, 'outputs');
    // wasm runs on its instance's one thread whatever is asked: its layout is for one.
    const runWorkers = backend.kind === 'native' ? (workerCount ?? backend.defaultWorkers) : 1;
    const layout = program.layout(shapesOf(ins, 'inputs'), outs && shapesOf(outs, 'outputs'), runWorkers, budgetBytes);
    if (!outs) return program.run(ins, program.outputs.map(() => undefined), layout, progress);
    // Straight into the caller's outputs only where nothing can fail midway; else into copies
    // of them (which keep what the views skip), copied back on success.
    if (!program.canFailMidway) return program.run(ins, outs, layout, progress);
    const results = program.run(ins, outs.map(copyOf), layout, progress);
    return copiedBack(outs, results, layout);
  }

  const target = pool ?? sharedPool(info, assetBase);
  const { description, ins, outs, layout } = await described(target, json, inputs, given, { workers: workerCount, budget: budgetBytes, signal }, aborted);
  if (transfer && ins.some(isShared)) {
    throw new PlanError('transfer: an input backed by a SharedArrayBuffer cannot be handed over (it stays shared); run without transfer', 'PLAN_BINDING');
  }
  if (transfer && outs?.some((array) => sharesMemoryWith(array, ins))) {
    throw new PlanError('transfer: an output shares a buffer with an input, which would be handed over with it; run without transfer', 'PLAN_BINDING');
  }
  // The task carries the inputs' snapshot (or, handed over, the inputs themselves) and the
  // arrays the worker writes: made here and moved there and back, so that the memory a run's
  // outputs live in is allocated where they end up (fresh arrays made on the worker and freed
  // here ran 2-4x slower in a one-off probe, their pages faulted anew each run). The caller's outputs travel as
  // copies when the run leaves some of their elements as they are.
  const inputsSent = transfer ? ins : /** @type {PlanArray[]} */ (snapshot(ins).value);
  const outputsSent = outs
    ? outs.map((array, i) => (layout.covered[i] ? undefined : copyOf(array)))
    : description.outputs.map(() => undefined);
  const sent = allocated(outputsSent, layout, description.outputs);
  // Measured now: the task moves these buffers to the worker.
  const sentLengths = sent.map(lengthOfArray);
  // The worker's outputs, checked by `validate` against the plan and layout.
  const results = /** @type {PlanArray[]} */ (
    await target
      .run(
        'plan.run',
        { plan: json, inputs: inputsSent, outputs: sent, workers: description.workers },
        {
          owned: true,
          signal,
          onProgress,
          timeout,
          reserve: layout.memory.total,
          validate: (/** @type {unknown} */ output) => checkResults(output, description.outputs, sentLengths),
        },
      )
      .catch((/** @type {unknown} */ error) => {
        throw engineError(error);
      })
  );
  return outs ? copiedBack(outs, results, layout) : results;
}

/**
 * The shape of `value`, one of the typed arrays a plan reads (else a PlanError).
 *
 * @param {unknown} value
 * @returns {Shape}
 */
const shapeOf = (value) => ({ dtype: dtypeOf(value, 'an array'), length: lengthOfArray(/** @type {PlanArray} */ (value)) });

/**
 * The shapes of the arrays as the caller gave them (a list, or an object by id), for the
 * worker's layout before this thread knows the plan's order; null if any is not a usable typed
 * array or cannot be read (arraysOf then refuses it with the plan's ids, or throws what reading
 * it throws, after the plan's own refusal as on the calling thread).
 *
 * @param {unknown} given
 * @returns {Shape[] | Record<string, Shape> | null}
 */
function givenShapes(given) {
  try {
    if (Array.isArray(given)) return Array.from(given, shapeOf);
    if (given !== null && typeof given === 'object' && !ArrayBuffer.isView(given)) {
      const byId = /** @type {Record<string, unknown>} */ (given);
      return Object.fromEntries(Object.keys(byId).map((id) => [id, shapeOf(byId[id])]));
    }
  } catch {
    // Refused below, in the calling thread's order.
  }
  return null;
}

/**
 * @param {Shape[] | undefined} a
 * @param {Shape[] | undefined} b
 */
const sameShapes = (a, b) =>
  a === undefined || b === undefined
    ? a === b
    : a.length === b.length && a.every((shape, i) => shape.dtype === b[i].dtype && shape.length === b[i].length);

/**
 * The plan described by a worker of `pool` ('plan.describe'), the caller's arrays in its order
 * and checked, and the engine's layout of a run over them (or its refusal, thrown): all a worker
 * run needs from the program, none of it parsed or compiled on this thread (a description kept
 * from an earlier run of the plan over the same shapes serves again: `descriptions`). The shapes
 * sent are those found before the task, as given; if the arrays read afterwards, in the plan's
 * order, do not have the shapes laid out (read through a getter that changed, inherited ids),
 * they are described once more in that order, and a second change is refused.
 *
 * @param {Pick<Pool, 'run'>} pool
 * @param {string} json
 * @param {unknown} inputs
 * @param {unknown} given  the caller's outputs, if any
 * @param {{ workers: number | undefined, budget: number | undefined, signal: AbortSignal | undefined }} options
 * @param {() => void} aborted
 * @returns {Promise<{ description: PlanDescription, ins: PlanArray[], outs: PlanArray[] | undefined, layout: Layout }>}
 */
async function described(pool, json, inputs, given, { workers, budget, signal }, aborted) {
  let plans = descriptions.get(pool);
  if (!plans) descriptions.set(pool, (plans = new Map()));
  // Kept once described: a plan the worker refuses holds no place.
  let layouts = recent(plans, json);
  /** @type {Pick<import('./worker-ops.js').DescribeTask, 'inputs' | 'outputs'>} */
  let shapes = { inputs: givenShapes(inputs), outputs: given === undefined ? undefined : givenShapes(given) };
  for (let attempt = 1; ; attempt++) {
    const key = JSON.stringify([shapes.inputs, shapes.outputs ?? null, workers ?? null, budget ?? null]);
    const description = (layouts && recent(layouts, key)) ?? /** @type {PlanDescription} checked by checkDescription */ (
      await pool
        .run(
          'plan.describe',
          { plan: json, ...shapes, workers, budget },
          {
            owned: true,
            signal,
            reserve: DESCRIBE_BASE + DESCRIBE_PER_CHAR * json.length,
            silence: { atLeast: describeSilence(json) },
            validate: checkDescription,
          },
        )
        .catch((/** @type {unknown} */ error) => {
          throw engineError(error);
        })
    );
    aborted();
    const ins = arraysOf(inputs, description.inputs, 'inputs');
    const outs = given === undefined ? undefined : arraysOf(given, description.outputs, 'outputs');
    const found = { inputs: shapesOf(ins, 'inputs'), outputs: outs && shapesOf(outs, 'outputs') };
    const { laidOut } = description;
    if (laidOut && sameShapes(laidOut.inputs, found.inputs) && sameShapes(laidOut.outputs, found.outputs)) {
      if (laidOut.refusal) throw new PlanError(laidOut.refusal.message, laidOut.refusal.code);
      if (!layouts) keep(plans, json, (layouts = new Map()), PROGRAMS_KEPT);
      keep(layouts, key, description, LAYOUTS_KEPT);
      return { description, ins, outs, layout: /** @type {Layout} checked */ (laidOut.layout) };
    }
    if (attempt === 2) {
      throw new PlanError('inputs and outputs: the arrays read changed while the plan was laid out on its worker; pass arrays, not getters that change', 'PLAN_BINDING');
    }
    shapes = found;
  }
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
 * @param {Signature[]} signature  the plan's outputs
 * @param {number[]} lengths  the arrays sent to the worker's lengths
 */
function checkResults(output, signature, lengths) {
  if (!Array.isArray(output) || output.length !== signature.length) {
    throw new TypeError(`a plan run must give ${signature.length} arrays`);
  }
  output.forEach((array, i) => {
    const dtype = dtypeOf(array, `outputs[${i}]`);
    if (dtype !== signature[i].dtype || lengthOfArray(array) !== lengths[i]) {
      throw new TypeError(`outputs[${i}]: ${dtype} x ${lengthOfArray(array)}, not ${signature[i].dtype} x ${lengths[i]}`);
    }
  });
}

/** @param {unknown} value */
const isCount = (value) => Number.isSafeInteger(value) && /** @type {number} */ (value) >= 0;

/**
 * @param {unknown} list
 * @param {(item: unknown) => boolean} each
 */
const listOf = (list, each) => Array.isArray(list) && list.every(each);

/** @param {unknown} shape */
const isShape = (shape) => Object.hasOwn(ARRAY_OF, String(fieldOf(shape, 'dtype'))) && isCount(fieldOf(shape, 'length'));

/**
 * A worker's description of a plan (PlanDescription), checked to be one: the run's reservation,
 * the arrays' order and the outputs allocated here come from it (a wrong one is the worker's
 * fault: the pool makes it a ProtocolError).
 *
 * @param {unknown} output
 */
function checkDescription(output) {
  const signature = (/** @type {unknown} */ s) => typeof fieldOf(s, 'id') === 'string' && Object.hasOwn(ARRAY_OF, String(fieldOf(s, 'dtype')));
  const outputs = fieldOf(output, 'outputs');
  if (!listOf(fieldOf(output, 'inputs'), signature) || !listOf(outputs, signature)) {
    throw new TypeError("'plan.describe' must give the plan's inputs and outputs as { id, dtype }");
  }
  if (typeof fieldOf(output, 'canFailMidway') !== 'boolean' || !isCount(fieldOf(output, 'workers'))) {
    throw new TypeError("'plan.describe' must give canFailMidway (a boolean) and workers (a count)");
  }
  const laidOut = fieldOf(output, 'laidOut');
  if (laidOut === null) return;
  const outShapes = fieldOf(laidOut, 'outputs');
  if (!listOf(fieldOf(laidOut, 'inputs'), isShape) || !(outShapes === undefined || listOf(outShapes, isShape))) {
    throw new TypeError("'plan.describe' must give the shapes it laid out");
  }
  const refusal = fieldOf(laidOut, 'refusal');
  if (refusal !== undefined) {
    const code = fieldOf(refusal, 'code');
    if (typeof code !== 'string' || !code.startsWith('PLAN_') || typeof fieldOf(refusal, 'message') !== 'string') {
      throw new TypeError("'plan.describe' must give a refusal as { code: 'PLAN_...', message }");
    }
    return;
  }
  const layout = fieldOf(laidOut, 'layout');
  const count = /** @type {unknown[]} */ (outputs).length;
  const memory = fieldOf(layout, 'memory');
  const lengths = fieldOf(layout, 'outputs');
  const covered = fieldOf(layout, 'covered');
  if (
    !isCount(fieldOf(layout, 'elements')) ||
    !listOf(lengths, isCount) || /** @type {unknown[]} */ (lengths).length !== count ||
    !listOf(covered, (flag) => typeof flag === 'boolean') || /** @type {unknown[]} */ (covered).length !== count ||
    !['inputs', 'outputs', 'working', 'total'].every((key) => isCount(fieldOf(memory, key)))
  ) {
    throw new TypeError("'plan.describe' must give the engine's layout: elements, outputs' lengths, covered, memory");
  }
}
