// @ts-check
// The typed arrays a plan reads and writes: which of the engine's eight dtypes each holds, and
// the checks a run makes on them before any work (a detached buffer, a kind the engine has no
// dtype for, memory another thread shares). The plan's own rules (dtypes against the plan,
// lengths against views) are the engine's: a front end passes the shapes it finds here to the
// engine's `layout`.
//
// Every fact about an array is read through the built-in getters of %TypedArray%.prototype and
// SharedArrayBuffer.prototype (pool/typed.js), not through the array's own properties: a caller's
// object can shadow `buffer` or `length`, or change its prototype, but not the internal slots
// these read.
// The native addon's soundness rests on `isShared` and `copyOf` (bindings/node/src/js_memory.rs).

import { PlanError } from '../pool/errors.js';
import { bufferOf, byteLengthOf, lengthOf, nameOf, offsetOf, sharedByteLengthOf as sharedLength } from '../pool/typed.js';

/** @typedef {'i8' | 'u8' | 'i16' | 'u16' | 'i32' | 'u32' | 'f32' | 'f64'} DType */
/**
 * @typedef {Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array |
 *   Float32Array | Float64Array} PlanArray
 */

/** The class of each dtype's arrays. */
export const ARRAY_OF = /** @type {const} */ ({
  i8: Int8Array,
  u8: Uint8Array,
  i16: Int16Array,
  u16: Uint16Array,
  i32: Int32Array,
  u32: Uint32Array,
  f32: Float32Array,
  f64: Float64Array,
});

/** @type {Map<string, DType>} the dtype of each class's name */
const DTYPE_OF = new Map(Object.entries(ARRAY_OF).map(([dtype, cls]) => [cls.name, /** @type {DType} */ (dtype)]));

/** The number of elements of a typed array (0 once detached). @param {PlanArray} array */
export const lengthOfArray = (array) => /** @type {number} */ (lengthOf.call(array));

/**
 * Whether `buffer` is detached (transferred or closed): its views then read as empty.
 *
 * @param {ArrayBufferLike} buffer
 */
export function isDetached(buffer) {
  if (isSharedBuffer(buffer)) return false;
  try {
    // Constructing a view of a detached buffer throws; of any other ArrayBuffer, not.
    new Uint8Array(buffer, 0, 0);
    return false;
  } catch {
    return true;
  }
}

/**
 * Each buffer met's kind (shared or not), which never changes: the check throws for every buffer
 * that is not shared, and the throw cost more than the rest of a small run's checks together
 * (`node bench/plan-versus.js`, runPlan's fixed cost).
 *
 * @type {WeakMap<object, boolean>}
 */
const sharedKind = new WeakMap();

/** @param {unknown} buffer */
function isSharedBuffer(buffer) {
  if (sharedLength === undefined || buffer === null || typeof buffer !== 'object') return false;
  let shared = sharedKind.get(buffer);
  if (shared === undefined) {
    try {
      sharedLength.call(buffer);
      shared = true;
    } catch {
      shared = false;
    }
    sharedKind.set(buffer, shared);
  }
  return shared;
}

/** Whether `array`'s memory is a SharedArrayBuffer (other threads may write it). @param {PlanArray} array */
export const isShared = (array) => isSharedBuffer(bufferOf.call(array));

/**
 * The dtype of `value` (one of the eight typed arrays, a subview or a Node Buffer allowed),
 * checked to be usable: a PlanError `PLAN_BINDING` naming `at` for anything else, and
 * `PLAN_DETACHED` for a view of a detached buffer.
 *
 * @param {unknown} value
 * @param {string} at  e.g. 'inputs[0] "x"'
 * @returns {DType}
 */
export function dtypeOf(value, at) {
  const name = nameOf.call(value);
  const dtype = typeof name === 'string' ? DTYPE_OF.get(name) : undefined;
  if (dtype === undefined) {
    const kind =
      name ?? (value === null ? 'null' : typeof value === 'object' ? (value.constructor?.name ?? 'object') : typeof value);
    throw new PlanError(
      `${at}: ${kind}, not one of the typed arrays a plan reads (Int8Array, Uint8Array, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array)`,
      'PLAN_BINDING',
    );
  }
  if (isDetached(bufferOf.call(value))) throw new PlanError(`${at}: its buffer is detached`, 'PLAN_DETACHED');
  return dtype;
}

/**
 * A copy of `array` in a buffer of its own, of its dtype: allocate and `set` (one memcpy). Not
 * `slice`, which for a Node Buffer is a view of the same memory.
 *
 * @param {PlanArray} array
 * @returns {PlanArray}
 */
export function copyOf(array) {
  const copy = new ARRAY_OF[dtypeOf(array, 'an array')](lengthOfArray(array));
  copy.set(/** @type {any} same dtype */ (array));
  return copy;
}

/**
 * The arrays' dtypes and lengths, as the engine's layout checks them; `side` (`'inputs'`,
 * `'outputs'`) names them in errors.
 *
 * @param {PlanArray[]} arrays
 * @param {string} side
 */
export const shapesOf = (arrays, side) =>
  arrays.map((array, i) => ({ dtype: dtypeOf(array, `${side}[${i}]`), length: lengthOfArray(array) }));

/**
 * `sources` copied into `targets`, each of the same dtype and length (an undefined target takes
 * its source as it is): the targets.
 *
 * @param {Array<PlanArray | undefined>} targets
 * @param {PlanArray[]} sources
 * @returns {PlanArray[]}
 */
export function copiedInto(targets, sources) {
  return targets.map((array, i) => {
    if (!array) return sources[i];
    array.set(/** @type {any} same dtype and length */ (sources[i]));
    return array;
  });
}

/** @param {PlanArray} a @param {PlanArray} b */
const overlap = (a, b) => {
  if (bufferOf.call(a) !== bufferOf.call(b)) return false;
  const [aStart, aLength, bStart, bLength] = [offsetOf.call(a), byteLengthOf.call(a), offsetOf.call(b), byteLengthOf.call(b)];
  return aLength > 0 && bLength > 0 && aStart < bStart + bLength && bStart < aStart + aLength;
};

/** Whether `array` shares memory with any of `others`. @param {PlanArray} array @param {PlanArray[]} others */
export const sharesMemoryWith = (array, others) => others.some((other) => overlap(array, other));

/**
 * The arrays a run on this thread must not read or write in place (the native addon reads and
 * writes the caller's memory directly): those backed by a SharedArrayBuffer (another thread may
 * write them meanwhile) and outputs that share memory with an input or another output. Such a
 * run goes through copies (copyOf), and so gives the bytes a run over separate arrays gives
 * (the wasm module's, which always copies).
 *
 * @param {PlanArray[]} inputs
 * @param {Array<PlanArray | undefined>} outputs
 */
export function needsCopies(inputs, outputs) {
  const outs = /** @type {PlanArray[]} */ (outputs.filter(Boolean));
  return (
    inputs.some(isShared) ||
    outs.some(isShared) ||
    outs.some((out, i) => sharesMemoryWith(out, inputs) || sharesMemoryWith(out, outs.slice(0, i)))
  );
}
