// @ts-check
// The PSI worker: one instance of lockstep's wasm module (bindings/wasm) per worker, scalar or
// simd128, serving the ops the psi.js front sends. Loaded by createPsiPool; not imported directly.

import { AssetError, serve } from './worker.js';
import { fieldOf, messageOf } from './fields.js';
import { isNode } from './platform.js';

/**
 * What this worker uses of the wasm-bindgen glue of bindings/wasm (lockstep_wasm.js).
 *
 * @typedef {object} WasmGlue
 * @property {(init: { module_or_path: BufferSource }) => Promise<unknown>} default
 * @property {() => boolean} simd
 * @property {() => number} abiVersion
 * @property {(key: Uint8Array, values: Uint8Array, ends: Uint32Array, reveal: boolean,
 *             normalize: boolean, progress: (done: number, total: number) => void) => Uint8Array} psiRequest
 */

// (module (func (result v128) i32.const 0 i8x16.splat i8x16.popcnt)): valid only where the
// engine has simd128.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15, 253,
  98, 11,
]);

/** Whether this engine runs wasm simd128. */
export const simdSupported = () => WebAssembly.validate(SIMD_PROBE);

/** @param {URL} url */
const shown = (url) => (url.protocol === 'file:' ? decodeURIComponent(url.pathname) : url.href);

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

serve({
  /** @param {unknown} sent  the config createPsiPool sent (PsiConfig) */
  async load(sent = {}) {
    const config = /** @type {import('./psi.js').PsiConfig} */ (sent);
    const wanted = config.asset ?? 'auto';
    if (!['auto', 'simd', 'scalar'].includes(wanted)) {
      throw new Error(`asset must be 'auto', 'simd' or 'scalar', not ${JSON.stringify(wanted)}`);
    }
    const flavour = wanted === 'auto' ? (simdSupported() ? 'simd' : 'scalar') : wanted;
    if (flavour === 'simd' && !simdSupported()) throw new Error('this engine has no wasm simd128');
    const base = new URL(config.assetBase ?? '../wasm/', import.meta.url);
    const glueUrl = new URL(`${flavour}/lockstep_wasm.js`, base);
    const wasmUrl = new URL(`${flavour}/lockstep_wasm_bg.wasm`, base);
    const bytes = await readAsset(wasmUrl);
    /** @type {WasmGlue} */
    let glue;
    try {
      glue = await import(glueUrl.href);
    } catch (error) {
      throw new AssetError(shown(glueUrl), `cannot import ${shown(glueUrl)}: ${messageOf(error)}`, { cause: error });
    }
    await glue.default({ module_or_path: bytes });
    if (glue.simd() !== (flavour === 'simd')) {
      throw new Error(`${shown(wasmUrl)} is not the ${flavour} build`);
    }
    return { asset: `wasm-${flavour}`, abi: glue.abiVersion(), context: glue };
  },
  ops: {
    /** @param {import('./psi.js').PsiInput} input @param {import('./worker.js').OpContext} op */
    'psi.request': ({ key, values, ends, reveal, normalize }, { progress, context }) =>
      /** @type {WasmGlue} what load returned */ (context).psiRequest(key, values, ends, reveal, normalize, progress),
    noop: (input) => input,
  },
});
