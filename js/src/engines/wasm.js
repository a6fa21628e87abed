// @ts-check
// lockstep's wasm module (bindings/wasm), as every part of the package loads it: its scalar or
// simd128 build, from the package's wasm/ folder (or another), in Node or a browser, in a
// worker or on the page. One instance per call of `loadWasm`.

import { ABI_VERSION } from './abi.js';
import { AssetError } from '../pool/worker.js';
import { fieldOf, messageOf } from '../pool/fields.js';
import { isNode } from '../pool/platform.js';

/**
 * What an `assetBase` given as a relative URL is resolved against: the package's src/ folder,
 * where this file lived before src/ was split by domain, so that a relative folder a caller
 * names still means the same one. The default, '../wasm/', is the package's wasm/.
 */
const SOURCES = new URL('../', import.meta.url);

/** The ABI version of the wasm module (and the native addon) this package speaks: abi.js's. */
export const WASM_ABI = ABI_VERSION;

// (module (func (result v128) i32.const 0 i8x16.splat i8x16.popcnt)): valid only where the
// engine has simd128.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253,
  98, 11,
]);

/** Whether this engine runs wasm simd128. */
export const simdSupported = () => WebAssembly.validate(SIMD_PROBE);

/** @param {URL} url */
export const shown = (url) => (url.protocol === 'file:' ? decodeURIComponent(url.pathname) : url.href);

/** @param {URL} url */
async function readAsset(url) {
  if (isNode && url.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    try {
      return await readFile(url);
    } catch (error) {
      throw new AssetError(shown(url), `cannot read ${shown(url)}: ${fieldOf(error, 'code') ?? messageOf(error)}`, { cause: error });
    }
  }
  let response;
  try {
    response = await fetch(url);
  } catch (error) {
    throw new AssetError(shown(url), `cannot fetch ${shown(url)}: ${messageOf(error)}`, { cause: error });
  }
  if (!response.ok) throw new AssetError(shown(url), `cannot fetch ${shown(url)}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/**
 * A new instance of the `flavour` build, from `assetBase` (the folder holding scalar/ and
 * simd/; default the package's wasm/), checked to be that build. Throws AssetError (code
 * ERR_ASSET_MISSING, with the path) for a file it cannot read or import, an Error for a simd
 * build where the engine has no simd128, a file of the other build, or a module of another ABI
 * version (abi.js).
 *
 * @template G
 * @param {'simd' | 'scalar'} flavour
 * @param {string | URL} [assetBase]
 * @returns {Promise<{ glue: G & { simd(): boolean, abiVersion(): number }, memory: WebAssembly.Memory }>}
 */
export async function loadWasm(flavour, assetBase) {
  if (flavour === 'simd' && !simdSupported()) throw new Error('this engine has no wasm simd128');
  const base = new URL(assetBase ?? '../wasm/', SOURCES);
  const glueUrl = new URL(`${flavour}/lockstep_wasm.js`, base);
  const wasmUrl = new URL(`${flavour}/lockstep_wasm_bg.wasm`, base);
  const bytes = await readAsset(wasmUrl);
  let glue;
  try {
    glue = await import(glueUrl.href);
  } catch (error) {
    throw new AssetError(shown(glueUrl), `cannot import ${shown(glueUrl)}: ${messageOf(error)}`, { cause: error });
  }
  // wasm-bindgen's glue keeps one instance per module: a second init of the same glue would
  // replace the first's. Each caller here imports it once per realm (a worker, the page).
  const exports = await glue.default({ module_or_path: bytes });
  if (glue.simd() !== (flavour === 'simd')) throw new Error(`${shown(wasmUrl)} is not the ${flavour} build`);
  // The one number (abi.js) decides here too, for a module run on the calling thread as in a worker.
  const abi = glue.abiVersion();
  if (abi !== ABI_VERSION) {
    throw new Error(`${shown(wasmUrl)} has ABI version ${abi}; this package needs ABI version ${ABI_VERSION}`);
  }
  return { glue, memory: exports.memory };
}
