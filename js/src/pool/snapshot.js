// @ts-check
// Inputs are copied when a task is submitted, so what the caller does to them afterwards
// (writing into a typed array, transferring or detaching its buffer) cannot reach the task. The
// copies are compact (a subarray copies its own bytes, not its whole buffer) and are then
// transferred to the worker, not copied a second time.

import { InputError } from './errors.js';
import { messageOf } from './fields.js';
import { bufferOf, byteLengthOf, classOf, lengthOf } from './typed.js';

/**
 * @template {ArrayBufferLike} [B=ArrayBufferLike]
 * @typedef {Int8Array<B> | Uint8Array<B> | Uint8ClampedArray<B> | Int16Array<B> | Uint16Array<B> |
 *   Int32Array<B> | Uint32Array<B> | Float32Array<B> | Float64Array<B> | BigInt64Array<B> |
 *   BigUint64Array<B>} AnyTypedArray
 */
/** @typedef {new (length: number) => AnyTypedArray<ArrayBuffer>} TypedArrayClass  a typed array class */

/**
 * A compact copy of the view `source` in a fresh buffer of class `Cls` (its own). Allocating
 * and then `set` runs as one memcpy; constructing from the view or `ArrayBuffer#slice` took
 * 4-6x as long for 4 MiB in Node 20 (1.4-1.5 ms against 0.27 in a one-off probe; the
 * committed `js/bench/plan.js` shows the effect in its submission column). `set` throws a TypeError for a detached source, as the constructor did.
 *
 * @template {AnyTypedArray} T
 * @param {new (length: number) => T} Cls
 * @param {AnyTypedArray} source
 * @returns {T}
 */
function copyOf(Cls, source) {
  const copy = new Cls(lengthOf.call(source));
  /** @type {any} same class: set copies the bytes */ (copy).set(source);
  return copy;
}

/**
 * A deep copy of `value` and the ArrayBuffers to transfer with it. Plain objects, arrays, typed
 * arrays, DataViews and ArrayBuffers are walked (aliases and cycles kept); other cloneable
 * objects (Map, Date, ...) go through structuredClone.
 *
 * Throws InputError for a detached buffer, a function or symbol, or anything structuredClone
 * refuses, naming where in the input it is. Class instances other than those go through
 * structuredClone too, and so arrive as plain objects. Two views of one buffer become two
 * separate copies (each holds its own bytes only).
 *
 * @param {unknown} value
 * @returns {{ value: unknown, transfer: ArrayBuffer[] }}
 */
export function snapshot(value) {
  /** @type {ArrayBuffer[]} */
  const transfer = [];
  /** @type {Map<object, unknown>} the copy of each object met so far */
  const seen = new Map();
  /**
   * @param {unknown} item
   * @param {string} path  where `item` is in the input, as `input${path}` names it
   * @returns {unknown}
   */
  const copy = (item, path) => {
    if (item === null || (typeof item !== 'object' && typeof item !== 'function')) {
      if (typeof item === 'symbol') throw new InputError(`input${path} is a symbol`);
      return item;
    }
    if (typeof item === 'function') throw new InputError(`input${path} is a function`);
    if (seen.has(item)) return seen.get(item);
    /** @type {unknown} */
    let out;
    try {
      const cls = /** @type {TypedArrayClass | undefined} */ (classOf(item));
      if (cls !== undefined) {
        // A typed array (by its internal slots: a prototype or a shadowed property cannot fake
        // one), copied into its intrinsic class (a Node Buffer's is Uint8Array), not with
        // item.slice(): Node's Buffer#slice does not copy.
        const view = copyOf(cls, /** @type {AnyTypedArray} */ (item));
        transfer.push(view.buffer);
        out = view;
      } else if (item instanceof ArrayBuffer) {
        const buffer = copyOf(Uint8Array, new Uint8Array(item)).buffer;
        transfer.push(buffer);
        out = buffer;
      } else if (item instanceof DataView) {
        const bytes = new Uint8Array(item.buffer, item.byteOffset, item.byteLength);
        const view = new DataView(new Uint8Array(bytes).buffer);
        transfer.push(view.buffer);
        out = view;
      } else if (typeof SharedArrayBuffer === 'function' && item instanceof SharedArrayBuffer) {
        const buffer = new Uint8Array(item).slice().buffer;
        transfer.push(buffer);
        out = buffer;
      }
    } catch (error) {
      throw new InputError(`input${path} cannot be copied (is its buffer detached?)`, {
        cause: error,
      });
    }
    if (out !== undefined) {
      seen.set(item, out);
      return out;
    }
    if (Array.isArray(item)) {
      /** @type {unknown[]} */
      const list = new Array(item.length);
      seen.set(item, list);
      for (let i = 0; i < item.length; i++) list[i] = copy(item[i], `${path}[${i}]`);
      return list;
    }
    /** @type {object | null} */
    const proto = Object.getPrototypeOf(item);
    if (proto === Object.prototype || proto === null) {
      /** @type {object} */
      const record = proto === null ? Object.create(null) : {};
      seen.set(item, record);
      for (const key of Object.keys(item)) {
        /** @type {unknown} */
        const field = Reflect.get(item, key);
        Object.defineProperty(record, key, { value: copy(field, `${path}.${key}`), writable: true, enumerable: true, configurable: true });
      }
      return record;
    }
    try {
      out = structuredClone(item);
    } catch (error) {
      throw new InputError(`input${path} cannot be cloned: ${messageOf(error)}`, { cause: error });
    }
    seen.set(item, out);
    return out;
  };
  return { value: copy(value, ''), transfer };
}

/**
 * The ArrayBuffers and MessagePorts inside `value` (the caller's own, for an input it hands
 * over with `owned: true`): they are transferred, and so detached on the caller's side. A
 * MessagePort can reach a worker only this way (a snapshot cannot copy one).
 *
 * @param {unknown} value
 * @returns {Transferable[]}
 */
export function ownedBuffers(value) {
  /** @type {Set<Transferable>} */
  const buffers = new Set();
  /** @type {Set<object>} */
  const seen = new Set();
  /** @param {unknown} item */
  const walk = (item) => {
    if (item === null || typeof item !== 'object' || seen.has(item)) return;
    seen.add(item);
    if (classOf(item) !== undefined) {
      const buffer = bufferOf.call(item);
      if (buffer instanceof ArrayBuffer) buffers.add(buffer);
    } else if (item instanceof ArrayBuffer) buffers.add(item);
    else if (typeof MessagePort === 'function' && item instanceof MessagePort) buffers.add(item);
    else if (ArrayBuffer.isView(item)) {
      if (item.buffer instanceof ArrayBuffer) buffers.add(item.buffer);
    } else if (Array.isArray(item)) item.forEach(walk);
    else if (Object.getPrototypeOf(item) === Object.prototype) Object.values(item).forEach(walk);
  };
  walk(value);
  return [...buffers];
}

/**
 * The bytes `value` holds in buffers and strings (a string counts two bytes a character): the
 * size a task's default reservation is derived from. Computed before anything is copied.
 *
 * @param {unknown} value
 */
export function inputBytes(value) {
  let total = 0;
  /** @type {Set<object>} */
  const seen = new Set();
  /** @param {unknown} item */
  const walk = (item) => {
    if (typeof item === 'string') {
      total += 2 * item.length;
      return;
    }
    if (item === null || typeof item !== 'object' || seen.has(item)) return;
    seen.add(item);
    if (classOf(item) !== undefined) total += byteLengthOf.call(item);
    else if (item instanceof ArrayBuffer || ArrayBuffer.isView(item)) total += item.byteLength;
    else if (Array.isArray(item)) item.forEach(walk);
    else if (item instanceof Map) item.forEach((v, k) => (walk(k), walk(v)));
    else if (item instanceof Set) item.forEach(walk);
    else Object.values(item).forEach(walk);
  };
  walk(value);
  return total;
}
