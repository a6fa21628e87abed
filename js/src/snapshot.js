// Inputs are copied when a task is submitted, so what the caller does to them afterwards
// (writing into a typed array, transferring or detaching its buffer) cannot reach the task. The
// copies are compact (a subarray copies its own bytes, not its whole buffer) and are then
// transferred to the worker, not copied a second time.

import { InputError } from './errors.js';

const TypedArray = Object.getPrototypeOf(Uint8Array);

function intrinsicOf(view) {
  let proto = Object.getPrototypeOf(view);
  while (Object.getPrototypeOf(proto) !== TypedArray.prototype) proto = Object.getPrototypeOf(proto);
  return proto.constructor;
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
 */
export function snapshot(value) {
  const transfer = [];
  const seen = new Map();
  const copy = (item, path) => {
    if (item === null || (typeof item !== 'object' && typeof item !== 'function')) {
      if (typeof item === 'symbol') throw new InputError(`input${path} is a symbol`);
      return item;
    }
    if (typeof item === 'function') throw new InputError(`input${path} is a function`);
    if (seen.has(item)) return seen.get(item);
    let out;
    try {
      if (item instanceof ArrayBuffer) {
        out = item.slice(0);
        transfer.push(out);
      } else if (item instanceof TypedArray) {
        // The intrinsic constructor, not item.slice(): Node's Buffer#slice does not copy.
        out = new (intrinsicOf(item))(item);
        transfer.push(out.buffer);
      } else if (item instanceof DataView) {
        const bytes = new Uint8Array(item.buffer, item.byteOffset, item.byteLength);
        out = new DataView(new Uint8Array(bytes).buffer);
        transfer.push(out.buffer);
      } else if (typeof SharedArrayBuffer === 'function' && item instanceof SharedArrayBuffer) {
        out = new Uint8Array(item).slice().buffer;
        transfer.push(out);
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
      out = new Array(item.length);
      seen.set(item, out);
      for (let i = 0; i < item.length; i++) out[i] = copy(item[i], `${path}[${i}]`);
      return out;
    }
    const proto = Object.getPrototypeOf(item);
    if (proto === Object.prototype || proto === null) {
      out = proto === null ? Object.create(null) : {};
      seen.set(item, out);
      for (const key of Object.keys(item)) {
        Object.defineProperty(out, key, { value: copy(item[key], `${path}.${key}`), writable: true, enumerable: true, configurable: true });
      }
      return out;
    }
    try {
      out = structuredClone(item);
    } catch (error) {
      throw new InputError(`input${path} cannot be cloned: ${error.message}`, { cause: error });
    }
    seen.set(item, out);
    return out;
  };
  return { value: copy(value, ''), transfer };
}

/**
 * The ArrayBuffers inside `value` (the caller's own, for an input it hands over with
 * `owned: true`): they are transferred, and so detached on the caller's side.
 */
export function ownedBuffers(value) {
  const buffers = new Set();
  const seen = new Set();
  const walk = (item) => {
    if (item === null || typeof item !== 'object' || seen.has(item)) return;
    seen.add(item);
    if (item instanceof ArrayBuffer) buffers.add(item);
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
 */
export function inputBytes(value) {
  let total = 0;
  const seen = new Set();
  const walk = (item) => {
    if (typeof item === 'string') {
      total += 2 * item.length;
      return;
    }
    if (item === null || typeof item !== 'object' || seen.has(item)) return;
    seen.add(item);
    if (item instanceof ArrayBuffer || ArrayBuffer.isView(item)) total += item.byteLength;
    else if (Array.isArray(item)) item.forEach(walk);
    else if (item instanceof Map) item.forEach((v, k) => (walk(k), walk(v)));
    else if (item instanceof Set) item.forEach(walk);
    else Object.values(item).forEach(walk);
  };
  walk(value);
  return total;
}
