// @ts-check
// PSI on the supervised pool: a joiner's request computed in a worker by lockstep's native addon
// (Node, where its platform package loads) or its wasm module, byte-identical to
// `lockstep psi request` for the same key and rows: both group the rows' values into distinct
// keys with the CLI's own code (lockstep_psi::linkage).

import { Pool } from '../pool/pool.js';
import { WASM_ABI } from '../engines/wasm.js';
import { platformPackage, psiEngine } from '../engines/native.js';

export { WASM_ABI };

/**
 * The config every PSI worker's `load` gets (psi/worker.js).
 *
 * @typedef {object} PsiConfig
 * @property {import('../engines/native.js').PsiAsset} [asset]
 * @property {string} [assetBase]  the folder holding scalar/ and simd/, a relative one resolved against the package's src/ (engines/wasm.js)
 */

/**
 * The input of the 'psi.request' op (psi/worker.js): the key and packed values (packValues).
 *
 * @typedef {object} PsiInput
 * @property {Uint8Array} key     a copy, wiped by the wasm module
 * @property {Uint8Array} values
 * @property {Uint32Array} ends
 * @property {boolean} reveal
 * @property {boolean} normalize
 */

/** The module the PSI pool's workers run. */
export const PSI_WORKER_URL = new URL('./worker.js', import.meta.url);

/**
 * A pool whose workers each load a PSI engine. `asset`: 'auto' (the native addon where its
 * platform package loads, else the wasm build faster for PSI, scalar today: see engines/native.js),
 * 'native' (the addon, else a startup error saying why), 'simd' (refused where the engine has
 * no simd128) or 'scalar'; `assetBase`: the folder holding `scalar/` and `simd/` (default: the
 * package's `wasm/`). Other options are the Pool's. Every engine gives the same bytes.
 *
 * @param {import('../index.js').PsiPoolOptions} [options]
 */
export function createPsiPool({ asset = 'auto', assetBase, ...options } = {}) {
  return new Pool({
    name: 'lockstep-psi',
    ...options,
    worker: PSI_WORKER_URL,
    abi: WASM_ABI,
    config: { asset, assetBase: assetBase === undefined ? undefined : String(assetBase) },
  });
}

/**
 * Which engine a PSI pool's workers load for `asset` in this realm, as their `load` decides it:
 * `{ asset: 'native' | 'wasm-scalar' | 'wasm-simd', asked, reason, nativePackage }`, `reason`
 * saying why 'auto' fell back to wasm (undefined otherwise). Rejects as a worker's start would
 * for 'native' without the addon.
 *
 * @param {{ asset?: import('../engines/native.js').PsiAsset }} [options]
 */
export async function psiInfo({ asset = 'auto' } = {}) {
  const { asset: loaded, reason } = await psiEngine(asset);
  return { asset: loaded, asked: asset, reason, nativePackage: platformPackage() };
}

const encoder = new TextEncoder();

/**
 * `values` (strings, as UTF-8, or Uint8Arrays) packed as the wasm module takes them: their bytes
 * back to back and the end offset of each.
 *
 * @param {Array<string | Uint8Array>} values
 */
export function packValues(values) {
  if (!Array.isArray(values)) throw new TypeError('values must be an array of strings or Uint8Arrays');
  const parts = values.map((value, index) => {
    if (typeof value === 'string') return encoder.encode(value);
    if (value instanceof Uint8Array) return value;
    throw new TypeError(`values[${index}] is neither a string nor a Uint8Array`);
  });
  const total = parts.reduce((sum, part) => sum + part.length, 0);
  if (total > 0xffff_ffff) throw new RangeError('values: more than 4 GiB of bytes in one request');
  const bytes = new Uint8Array(total);
  const ends = new Uint32Array(parts.length);
  let at = 0;
  parts.forEach((part, index) => {
    bytes.set(part, at);
    at += part.length;
    ends[index] = at;
  });
  return { bytes, ends };
}

/**
 * A copy of `bytes` in a fresh ArrayBuffer of exactly its length: what a task sent `owned` may
 * move to its worker. Not `bytes.slice()`: a Node Buffer's slice is a view of the same memory,
 * often of an 8 KiB slab shared with other Buffers, which would then be sent (or detached) whole.
 * Not `new Uint8Array(n)` either: V8 keeps a typed array that small (a key) on its heap, and
 * reading its `.buffer` for the transfer copies the bytes out and leaves them there, unwiped;
 * a `new ArrayBuffer` is a backing store apart from the heap, which the transfer moves whole
 * (test/node/key-copies.test.js). Nothing is copied on the way, so nothing is left to wipe.
 *
 * @param {Uint8Array} bytes
 */
export function ownCopy(bytes) {
  const copy = new Uint8Array(new ArrayBuffer(bytes.length));
  copy.set(bytes);
  return copy;
}

/**
 * The joiner's `psi_proto.Request` bytes for its rows' `values` masked with `key` (big-endian
 * scalar bytes, as `lockstep psi key new` writes them): the values grouped into distinct keys
 * (each masked once, in order of first appearance; empty values left out; trimmed, lowercased
 * and whitespace-collapsed first with `normalize: true`), byte for byte what
 * `lockstep psi request --input FILE [--normalize]` writes for a FILE of these values, one per
 * line. `reveal: false` asks for the size only. `options` are `run`'s (signal, onProgress,
 * timeout, reserve); progress counts distinct keys.
 *
 * Key material: `key` is copied once here, into a buffer of exactly its length (whatever buffer
 * the caller's array is a view of: a Node Buffer, a subarray); that copy moves to the worker,
 * where the engine (the addon or the wasm module) wipes it after use. The caller's array and its
 * buffer are untouched.
 *
 * @param {import('../index.js').Pool} pool
 * @param {{ key: Uint8Array, values: Array<string | Uint8Array>, reveal?: boolean, normalize?: boolean }} request
 * @param {Omit<import('../index.js').RunOptions<Uint8Array>, 'owned' | 'validate'>} [options]
 * @returns {Promise<Uint8Array>}
 */
export function psiRequest(pool, { key, values, reveal = true, normalize = false }, options = {}) {
  /** @type {PsiInput} */
  let input;
  try {
    if (!(key instanceof Uint8Array)) throw new TypeError('key must be a Uint8Array');
    const { bytes, ends } = packValues(values);
    input = { key: ownCopy(key), values: bytes, ends, reveal: Boolean(reveal), normalize: Boolean(normalize) };
  } catch (error) {
    return Promise.reject(error);
  }
  return pool.run('psi.request', input, {
    ...options,
    owned: true,
    validate: (output) => {
      if (!(output instanceof Uint8Array)) throw new TypeError('a request must be a Uint8Array');
    },
  });
}
