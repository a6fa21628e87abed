// @ts-check
// lockstep's native addon (bindings/node) as the package finds it: the platform package for this
// machine (lockstep-<platform>-<arch>-<libc>, an optional dependency of the package), loaded
// once per realm. Its absence (MODULE_NOT_FOUND) or a binary this machine refuses
// (ERR_DLOPEN_FAILED: another libc, a missing library such as OpenSSL's libcrypto.so.3) is a
// reason to fall back to wasm, said in words, and so is an addon of another ABI version
// (abi.js); any other failure is an error, never a silent
// fallback. Plans (plan/backends.js) and PSI (psi/worker.js, psiInfo) both load it from here.

import { ABI_VERSION } from './abi.js';
import { fieldOf, messageOf } from '../pool/fields.js';
import { isNode } from '../pool/platform.js';

/** The platform package holding this machine's native addon, or undefined off Node. */
export function platformPackage() {
  if (!isNode) return undefined;
  const glibc = /** @type {any} */ (process.report?.getReport?.())?.header?.glibcVersionRuntime;
  const abi = process.platform === 'linux' ? (glibc ? '-gnu' : '-musl') : process.platform === 'win32' ? '-msvc' : '';
  return `lockstep-${process.platform}-${process.arch}${abi}`;
}

/** @type {Promise<{ addon: any, reason?: undefined } | { addon?: undefined, reason: string }> | undefined} */
let loading;

/**
 * The addon's exports, or why it cannot load: `{ addon }` or `{ reason }`, the same answer for
 * the realm's life (a require is cached anyway). Rejects for a failure other than a missing
 * package or a refused binary.
 *
 * @returns {Promise<{ addon: any, reason?: undefined } | { addon?: undefined, reason: string }>}
 */
export function loadAddon() {
  if (!loading) {
    const started = load();
    loading = started;
    // A failure that is not a reason to fall back is not kept: the next call tries again.
    started.catch(() => {
      if (loading === started) loading = undefined;
    });
  }
  return loading;
}

async function load() {
  const name = platformPackage();
  if (name === undefined) return { reason: 'the native addon runs in Node only' };
  const { createRequire } = await import('node:module');
  const require = createRequire(import.meta.url);
  let addon;
  try {
    addon = require(name);
  } catch (error) {
    const code = fieldOf(error, 'code');
    if (code === 'MODULE_NOT_FOUND' || code === 'ERR_DLOPEN_FAILED') {
      return { reason: `${name} ${code === 'MODULE_NOT_FOUND' ? 'is not installed' : 'cannot be loaded'} (${code}: ${String(messageOf(error)).split('\n')[0]})` };
    }
    throw error;
  }
  // An addon of another ABI is a reason to fall back, as a missing one is: the one number decides.
  const mismatch = abiMismatch(addon);
  return mismatch === undefined ? { addon } : { reason: mismatch };
}

/**
 * Why `addon` cannot serve this package, by the one ABI number (abi.js), or undefined when it can.
 *
 * @param {any} addon
 * @returns {string | undefined}
 */
function abiMismatch(addon) {
  const abi = typeof addon.abiVersion === 'function' ? addon.abiVersion() : undefined;
  if (abi === ABI_VERSION) return undefined;
  const has = abi === undefined ? 'no ABI version' : `ABI version ${abi}`;
  return `${platformPackage()} has ${has}; this package needs ABI version ${ABI_VERSION}`;
}

/** @typedef {'auto' | 'native' | 'simd' | 'scalar'} PsiAsset */

/**
 * The wasm build PSI's 'auto' loads where the addon does not: the faster one for PSI on every
 * engine measured (js/README.md, `node bench/psi.js`: the scalar build is 5-15% ahead of the
 * simd128 one in Node 20 and Chromium, since simd128 has no 64-bit multiply the 26-bit field
 * could use and LLVM's vectorized forms lose).
 */
const PSI_WASM_AUTO = 'scalar';

/**
 * Which engine a PSI worker runs for `asked`: 'native' (the addon, else an error saying why),
 * 'simd' or 'scalar' (that wasm build), 'auto' (the addon where it loads, else the wasm build
 * that is faster for PSI): `{ addon, asset, reason }`, `addon` set for the native engine,
 * `reason` saying why 'auto' fell back.
 *
 * @param {unknown} asked
 * @returns {Promise<{ addon?: any, asset: 'native' | 'wasm-simd' | 'wasm-scalar', reason?: string }>}
 */
export async function psiEngine(asked) {
  if (asked !== 'auto' && asked !== 'native' && asked !== 'simd' && asked !== 'scalar') {
    throw new Error(`asset must be 'auto', 'native', 'simd' or 'scalar', not ${JSON.stringify(asked)}`);
  }
  if (asked === 'simd' || asked === 'scalar') return { asset: `wasm-${asked}` };
  const { addon, reason } = await loadAddon();
  if (addon) return { addon, asset: 'native' };
  if (asked === 'native') throw new Error(`asset 'native': ${reason}`);
  return { asset: `wasm-${PSI_WASM_AUTO}`, reason };
}
