// @ts-check
// The typed arrays a plan reads and writes: which of the engine's eight dtypes each holds, and
// the checks a run makes on them before any work (a detached buffer, a kind the engine has no
// dtype for). The plan's own rules (dtypes against the plan, lengths against views) are the
// engine's: a front end passes the shapes it finds here to the engine's `layout`.

import { PlanError } from '../errors.js';

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

/** @type {Map<Function, DType>} */
const DTYPE_OF = new Map(Object.entries(ARRAY_OF).map(([dtype, cls]) => [cls, /** @type {DType} */ (dtype)]));

const TypedArray = Object.getPrototypeOf(Uint8Array);

/**
 * The intrinsic class of a typed array (Uint8Array for a Node Buffer), or undefined for
 * anything else.
 *
 * @param {unknown} value
 */
function intrinsicOf(value) {
  if (!ArrayBuffer.isView(value) || value instanceof DataView) return undefined;
  let proto = Object.getPrototypeOf(value);
  while (proto !== null && Object.getPrototypeOf(proto) !== TypedArray.prototype) proto = Object.getPrototypeOf(proto);
  return proto?.constructor;
}

/**
 * Whether `buffer` is detached (transferred or closed): its views then read as empty.
 *
 * @param {ArrayBufferLike} buffer
 */
export function isDetached(buffer) {
  if ('detached' in buffer && typeof buffer.detached === 'boolean') return buffer.detached;
  if (buffer.byteLength > 0) return false;
  try {
    // Constructing a view of a detached buffer throws; of an empty one, not.
    new Uint8Array(buffer, 0, 0);
    return false;
  } catch {
    return true;
  }
}

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
  const cls = intrinsicOf(value);
  const dtype = cls === undefined ? undefined : DTYPE_OF.get(cls);
  if (dtype === undefined) {
    const kind = cls?.name ?? (value === null ? 'null' : typeof value === 'object' ? (value.constructor?.name ?? 'object') : typeof value);
    throw new PlanError(
      `${at}: ${kind}, not one of the typed arrays a plan reads (Int8Array, Uint8Array, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array)`,
      'PLAN_BINDING',
    );
  }
  const view = /** @type {PlanArray} */ (value);
  if (isDetached(view.buffer)) throw new PlanError(`${at}: its buffer is detached`, 'PLAN_DETACHED');
  return dtype;
}

/** @param {PlanArray} array */
const isShared = (array) => typeof SharedArrayBuffer === 'function' && array.buffer instanceof SharedArrayBuffer;

/** @param {PlanArray} a @param {PlanArray} b */
const overlap = (a, b) =>
  a.buffer === b.buffer &&
  a.byteLength > 0 &&
  b.byteLength > 0 &&
  a.byteOffset < b.byteOffset + b.byteLength &&
  b.byteOffset < a.byteOffset + a.byteLength;

/**
 * The arrays a run on this thread must not read or write in place (the native addon reads and
 * writes the caller's memory directly): those backed by a SharedArrayBuffer (another thread may
 * write them meanwhile) and outputs that share memory with an input or another output. Such a
 * run goes through copies, and so gives the bytes a run over separate arrays gives (the wasm
 * module's, which always copies).
 *
 * @param {PlanArray[]} inputs
 * @param {Array<PlanArray | undefined>} outputs
 */
export function needsCopies(inputs, outputs) {
  const outs = /** @type {PlanArray[]} */ (outputs.filter(Boolean));
  return (
    inputs.some(isShared) ||
    outs.some(isShared) ||
    outs.some((out, i) => inputs.some((input) => overlap(out, input)) || outs.slice(0, i).some((other) => overlap(out, other)))
  );
}
