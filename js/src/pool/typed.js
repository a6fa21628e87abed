// @ts-check
// Facts about a typed array read through the built-in getters of %TypedArray%.prototype (its
// internal slots), not through the array's own properties: a caller's object can shadow
// `buffer` or `length`, or change its prototype, but not the slots these read. The pool's
// snapshot (snapshot.js) and the plan's checks (plan/arrays.js) both read arrays this way: in
// pool/ with the snapshot, the first of them.

const TypedArrayProto = Object.getPrototypeOf(Uint8Array.prototype);
/** @param {object} proto @param {string | symbol} key */
const getter = (proto, key) => /** @type {(this: unknown) => any} */ (Object.getOwnPropertyDescriptor(proto, key)?.get);

/** The [[TypedArrayName]] of a typed array ('Uint8Array' for a Node Buffer), undefined for anything else (never throws). */
export const nameOf = getter(TypedArrayProto, Symbol.toStringTag);
/** The [[ViewedArrayBuffer]] of a typed array (throws for anything else). */
export const bufferOf = getter(TypedArrayProto, 'buffer');
/** Its byte offset. */
export const offsetOf = getter(TypedArrayProto, 'byteOffset');
/** Its length in bytes (0 once detached). */
export const byteLengthOf = getter(TypedArrayProto, 'byteLength');
/** Its length in elements (0 once detached). */
export const lengthOf = getter(TypedArrayProto, 'length');
/** A SharedArrayBuffer's byte length (throws for anything else); undefined where there is none. */
export const sharedByteLengthOf = typeof SharedArrayBuffer === 'function' ? getter(SharedArrayBuffer.prototype, 'byteLength') : undefined;

/** Every typed array class of this realm, by its name. */
const CLASSES = new Map(
  [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array, BigInt64Array, BigUint64Array, /** @type {any} */ (globalThis).Float16Array]
    .filter((cls) => typeof cls === 'function')
    .map((cls) => [cls.name, cls]),
);

/**
 * The intrinsic class of a typed array (Uint8Array for a Node Buffer, say), by its internal
 * name; undefined for a value that is not a typed array.
 *
 * @param {unknown} value
 */
export const classOf = (value) => {
  const name = nameOf.call(value);
  return typeof name === 'string' ? CLASSES.get(name) : undefined;
};
