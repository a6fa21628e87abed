// @ts-check
// The two places a plan runs: lockstep's native addon (bindings/node, through its platform
// package) and lockstep's wasm module (bindings/wasm, simd128 where the engine has it). Both hold
// the same engine (lockstep_plan), so both give the bytes `lockstep plan run` gives; this file
// makes them one shape (`Backend`, `Program`) and says which one loaded and why (`info`).
//
// 'auto' tries the native addon (native.js), then falls back to wasm when its platform package is
// not installed (MODULE_NOT_FOUND) or its binary cannot be loaded (ERR_DLOPEN_FAILED: another
// libc, a missing library); any other failure of the addon is an error, not a silent fallback.

import { PlanError } from '../errors.js';
import { fieldOf, messageOf } from '../fields.js';
import { loadAddon, platformPackage } from '../native.js';
import { loadWasm, simdSupported } from '../wasm.js';
import { ARRAY_OF, copiedInto, copyOf, dtypeOf, lengthOfArray, needsCopies } from './arrays.js';

/** @typedef {import('./arrays.js').DType} DType */
/** @typedef {import('./arrays.js').PlanArray} PlanArray */
/** @typedef {'native' | 'wasm' | 'auto'} BackendChoice */

/**
 * What the native addon and the wasm module both export for plans: `PlanProgram`.
 *
 * @typedef {object} EngineProgram
 * @property {() => string} describe
 * @property {(dtypes: string[], lengths: number[], outDtypes: string[] | undefined | null,
 *             outLengths: number[] | undefined | null, workers: number, budget: number | undefined | null) => ArrayLike<number>} layout
 * @property {(dtypes: string[], lengths: number[], outDtypes: string[] | undefined | null,
 *             outLengths: number[] | undefined | null, workers: number, budget: number | undefined | null) => ArrayLike<number> | [string, string]} [tryLayout]
 *   the addon's: `layout` with its failure returned, not thrown (see `refusedOrValue`)
 * @property {() => boolean} canFailMidway
 * @property {() => void} free
 */

/**
 * A plan compiled by one backend.
 *
 * @typedef {object} Program
 * @property {Signature[]} inputs   the plan's inputs (id and dtype), in order
 * @property {Signature[]} outputs  its outputs
 * @property {boolean} canFailMidway  whether a run can fail after writing part of its outputs
 * @property {(inputs: Shape[], outputs: Shape[] | undefined, workers: number, budget: number | undefined) => Layout} layout
 *   the engine's checks of a run over arrays of these shapes (PlanError before any work)
 * @property {(inputs: PlanArray[], outputs: Array<PlanArray | undefined>, layout: Layout,
 *             progress?: (done: number, total: number) => void) => PlanArray[]} run
 *   runs on the calling thread into `outputs` (the caller's arrays, checked by `layout`; an
 *   undefined one is allocated as long as the layout says) and returns them
 * @property {(inputs: PlanArray[], outputs: PlanArray[], workers: number,
 *             progress?: (done: number, total: number) => void) => { done: Promise<void>, cancel(): void }} [start]
 *   the native addon only: runs off the calling thread (cancel takes effect within a block)
 */

/** @typedef {{ dtype: DType, length: number }} Shape */
/** @typedef {{ id: string, dtype: DType }} Signature */
/**
 * @typedef {object} Layout
 * @property {number} elements
 * @property {number[]} outputs  each output's length in elements
 * @property {boolean[]} covered  whether the run writes every element of each output's array
 * @property {number} workers  the native workers asked for (0: the engine's policy; wasm: 1)
 * @property {{ inputs: number, outputs: number, working: number, total: number }} memory
 */

/**
 * A loaded backend.
 *
 * @typedef {object} Backend
 * @property {'native' | 'wasm-simd' | 'wasm-scalar'} kind
 * @property {(json: string) => Program} compile  PlanError PLAN_INVALID for a plan that does not validate
 * @property {number} abi  the version of its exports (bindings/wasm ABI_VERSION; the addon's
 *   plan exports share it)
 * @property {number} defaultWorkers  the workers a run takes when not told (wasm: 1, its
 *   current-thread pool; parallelism comes from the pool of workers)
 */

/**
 * Which backend loaded and why: `{ backend, asked, reason }`; `reason` says why 'auto' fell
 * back to wasm (the platform package missing or its binary refused), else undefined.
 *
 * @typedef {object} BackendInfo
 * @property {'native' | 'wasm-simd' | 'wasm-scalar'} backend
 * @property {BackendChoice} asked
 * @property {string | undefined} reason
 * @property {string | undefined} nativePackage  the platform package tried (Node only)
 */

/** @param {unknown} thrown */
const asPlanError = (thrown) => {
  if (thrown instanceof PlanError) return thrown;
  const code = fieldOf(thrown, 'code');
  const message = String(messageOf(thrown) ?? thrown);
  // The engine's codes are PLAN_*; anything else thrown by an engine is its runtime failing.
  return typeof code === 'string' && code.startsWith('PLAN_')
    ? new PlanError(message, code, { cause: thrown })
    : new PlanError(message, 'PLAN_RUNTIME', { cause: thrown });
};

/**
 * A Program over an engine's `PlanProgram`.
 *
 * @param {EngineProgram} engine
 * @param {Program['run']} run
 * @param {Program['start']} [start]
 * @returns {Program}
 */
function program(engine, run, start) {
  const described = JSON.parse(engine.describe());
  return {
    inputs: described.inputs,
    outputs: described.outputs,
    canFailMidway: engine.canFailMidway(),
    layout(inputs, outputs, workers, budget) {
      let raw;
      try {
        raw = refusedOrValue((engine.tryLayout ?? engine.layout).call(
          engine,
          inputs.map((s) => s.dtype),
          inputs.map((s) => s.length),
          outputs?.map((s) => s.dtype),
          outputs?.map((s) => s.length),
          workers,
          budget,
        ));
      } catch (error) {
        throw asPlanError(error);
      }
      const [elements, inBytes, outBytes, working, ...rest] = Array.from(raw);
      const count = rest.length / 2;
      return {
        elements,
        outputs: rest.slice(0, count),
        covered: rest.slice(count).map((flag) => flag === 1),
        workers,
        memory: { inputs: inBytes, outputs: outBytes, working, total: inBytes + outBytes + working },
      };
    },
    run(inputs, outputs, layout, progress) {
      try {
        return run(inputs, outputs, layout, progress);
      } catch (error) {
        throw asPlanError(error);
      }
    },
    start,
  };
}

/**
 * The wasm backend: an instance of the `flavour` build.
 *
 * @param {'simd' | 'scalar'} flavour
 * @param {string | URL} [assetBase]
 * @returns {Promise<Backend>}
 */
export async function wasmBackend(flavour, assetBase) {
  /** @type {{ glue: any }} */
  const { glue } = await loadWasm(flavour, assetBase);
  return {
    kind: flavour === 'simd' ? 'wasm-simd' : 'wasm-scalar',
    abi: glue.abiVersion(),
    defaultWorkers: 1,
    compile(json) {
      let engine;
      try {
        engine = glue.PlanProgram.fromJson(json);
      } catch (error) {
        throw asPlanError(error);
      }
      return program(engine, (inputs, outputs, layout, progress) => {
        // Copies in (a caller's output too, unless the run covers all of it: the elements its
        // view skips are kept), one run, copies out: into the caller's outputs only once the
        // whole run has succeeded and every one of them can take its result.
        inputs.forEach((array, i) => engine.setInput(i, array));
        outputs.forEach((array, i) => array && !layout.covered[i] && engine.setOutput(i, array));
        /** @type {{ error: unknown } | undefined} */
        let thrown;
        const beat = progress && ((/** @type {number} */ done, /** @type {number} */ total) => {
          try {
            progress(done, total);
          } catch (error) {
            thrown = { error };
            throw error;
          }
        });
        try {
          engine.run(beat);
        } catch (error) {
          // The caller's own exception (from onProgress) as it was thrown.
          throw thrown ? thrown.error : error;
        }
        outputs.forEach((array, i) => array && checkTarget(array, layout.outputs[i], i));
        return outputs.map((array, i) => {
          if (!array) return /** @type {PlanArray} */ (engine.takeOutput(i));
          engine.takeOutputInto(i, array);
          return array;
        });
      });
    },
  };
}

/**
 * What the addon's `try*` calls return, as a value or a thrown PlanError: they return a failure
 * as `[code, message]` (an `Array`; a value is never one: a program, a `Float64Array`, `null`)
 * instead of throwing it, because Node treats an exception an addon throws as uncaught even where
 * JS catches it, and so ends the process under `--abort-on-uncaught-exception`
 * (nodejs/node#28409; bindings/node/src/lib.rs, "Outcome"). The wasm module throws from its JS
 * glue, which JS catches as any exception: its values pass through.
 *
 * @template T
 * @param {T | [string, string]} result
 * @returns {T}
 */
function refusedOrValue(result) {
  if (Array.isArray(result)) throw new PlanError(String(result[1]), String(result[0]));
  return /** @type {T} */ (result);
}

/**
 * The native backend over the addon's exports.
 *
 * @param {any} addon
 * @returns {Backend}
 */
export function nativeBackend(addon) {
  return {
    kind: 'native',
    abi: addon.abiVersion(),
    // 0: the addon asks the shard policy (the plan's grain over this machine's cores).
    defaultWorkers: 0,
    compile(json) {
      let engine;
      try {
        engine = refusedOrValue(addon.PlanProgram.tryFromJson(json));
      } catch (error) {
        throw asPlanError(error);
      }
      const signature = JSON.parse(engine.describe()).outputs;
      return program(
        engine,
        (inputs, outputs, layout) => {
          if (!needsCopies(inputs, outputs)) {
            const all = allocated(outputs, layout, signature);
            refusedOrValue(engine.tryRun(inputs, all, layout.workers));
            return all;
          }
          // Through copies (a copy of a caller's output keeps what its view skips).
          const copies = allocated(outputs.map((array) => array && copyOf(array)), layout, signature);
          refusedOrValue(engine.tryRun(inputs.map(copyOf), copies, layout.workers));
          return copiedInto(outputs, copies);
        },
        (inputs, outputs, workers, progress) => {
          const control = new addon.PlanControl();
          const running = engine.runAsync(inputs, outputs, workers, control);
          /** @type {ReturnType<typeof setInterval> | undefined} */
          let timer;
          if (progress) {
            // The run reports to an atomic counter the addon's threads advance; read it here.
            timer = setInterval(() => {
              const [done, total] = control.progress();
              if (total > 0) progress(done, total);
            }, 20);
          }
          const done = running
            .then(
              (/** @type {[string, string] | null} */ outcome) => {
                if (outcome) throw new PlanError(outcome[1], outcome[0]);
              },
              (/** @type {unknown} */ error) => {
                throw asPlanError(error);
              },
            )
            .finally(() => clearInterval(timer));
          return { done, cancel: () => control.cancel() };
        },
      );
    },
  };
}

/**
 * `outputs` with each undefined one allocated (zeros) as long as `layout` says.
 *
 * @param {Array<PlanArray | undefined>} outputs
 * @param {Layout} layout
 * @param {Signature[]} signature  the plan's outputs
 * @returns {PlanArray[]}
 */
export function allocated(outputs, layout, signature) {
  return outputs.map((array, i) => {
    if (array) return array;
    try {
      return new ARRAY_OF[signature[i].dtype](layout.outputs[i]);
    } catch (error) {
      throw new PlanError(`outputs[${i}] ${JSON.stringify(signature[i].id)}: ${layout.outputs[i]} elements of ${signature[i].dtype} cannot be allocated`, 'PLAN_BINDING', { cause: error });
    }
  });
}

/**
 * Checks that a caller's output can still take its result (not detached, of its length since
 * the layout): a PlanError PLAN_DETACHED otherwise, before any result is copied into any output.
 *
 * @param {PlanArray} array
 * @param {number} length
 * @param {number} i
 */
export function checkTarget(array, length, i) {
  const at = `outputs[${i}]`;
  dtypeOf(array, at);
  if (lengthOfArray(array) < length) throw new PlanError(`${at}: its buffer shrank to ${lengthOfArray(array)} elements during the run`, 'PLAN_DETACHED');
}

/** @type {Map<string, Promise<{ backend: Backend, info: BackendInfo }>>} */
const loaded = new Map();

/**
 * The backend `asked` for in this realm (loaded once and kept): 'native' (the addon, else a
 * PlanError PLAN_BACKEND saying why), 'wasm' (the simd128 build where the engine has it, else
 * scalar), 'auto' (native, else wasm, saying why in `info`). `wasm` picks a build itself:
 * 'simd' or 'scalar' (tests and benches).
 *
 * @param {BackendChoice} asked
 * @param {{ wasm?: 'simd' | 'scalar', assetBase?: string | URL }} [options]
 */
export function loadBackend(asked, { wasm, assetBase } = {}) {
  const key = `${asked}/${wasm ?? ''}/${assetBase ?? ''}`;
  let entry = loaded.get(key);
  if (!entry) {
    entry = load(asked, wasm, assetBase);
    loaded.set(key, entry);
    // A failed load is not kept: the next call tries again.
    entry.catch(() => loaded.delete(key));
  }
  return entry;
}

/**
 * @param {BackendChoice} asked
 * @param {'simd' | 'scalar' | undefined} wasm
 * @param {string | URL | undefined} assetBase
 * @returns {Promise<{ backend: Backend, info: BackendInfo }>}
 */
async function load(asked, wasm, assetBase) {
  if (!['native', 'wasm', 'auto'].includes(asked)) {
    throw new PlanError(`backend must be 'native', 'wasm' or 'auto', not ${JSON.stringify(asked)}`, 'PLAN_BACKEND');
  }
  const nativePackage = platformPackage();
  let reason;
  if (asked !== 'wasm') {
    const { addon, reason: why } = await loadAddon();
    if (addon) return { backend: nativeBackend(addon), info: { backend: 'native', asked, reason: undefined, nativePackage } };
    if (asked === 'native') throw new PlanError(`backend 'native': ${why}`, 'PLAN_BACKEND');
    reason = why;
  }
  const flavour = wasm ?? (simdSupported() ? 'simd' : 'scalar');
  let backend;
  try {
    backend = await wasmBackend(flavour, assetBase);
  } catch (error) {
    throw new PlanError(`backend 'wasm' (${flavour}): ${messageOf(error)}`, 'PLAN_BACKEND', { cause: error });
  }
  return { backend, info: { backend: backend.kind, asked, reason, nativePackage } };
}
