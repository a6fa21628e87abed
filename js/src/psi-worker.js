// @ts-check
// The PSI worker: one engine per worker, serving the ops the psi.js front sends: lockstep's native
// addon (bindings/node, OpenSSL's P-256) where it loads, else an instance of lockstep's wasm
// module (bindings/wasm), scalar or simd128. Both export the same PSI functions (ABI 5) and give
// the same bytes. Loaded by createPsiPool; not imported directly.

import { serve } from './worker.js';
import { loadWasm } from './wasm.js';
import { psiEngine } from './native.js';
import { isNode } from './platform.js';
import { runSharded } from './shard/coordinator.js';
import { runHelper } from './shard/helper.js';

/**
 * What this worker uses of an engine: the wasm-bindgen glue of bindings/wasm (lockstep_wasm.js)
 * or the native addon's exports (bindings/node/src/psi.rs), which have the same shape.
 *
 * @typedef {object} WasmGlue
 * @property {(init: { module_or_path: BufferSource }) => Promise<{ memory: WebAssembly.Memory }>} default
 * @property {() => boolean} simd
 * @property {() => number} abiVersion
 * @property {(key: Uint8Array, values: Uint8Array, ends: Uint32Array, reveal: boolean,
 *             normalize: boolean, progress: (done: number, total: number) => void) => Uint8Array} psiRequest
 * @property {{ generate(role: string): WasmParty, import(role: string, key: Uint8Array): WasmParty }} PsiParty
 * @property {{ fromKey(role: string, key: Uint8Array): import('./shard/parts.js').PartMapper & { free(): void } }} PsiHelper
 * @property {(items: number, count: number) => Uint32Array} psiRanges
 * @property {(rows: number) => object} psiSample
 */

/** @typedef {(done: number, total: number) => void} Beat */

/**
 * A party in this worker's engine: what the worker uses of bindings/wasm's js_party.rs and
 * bindings/node's psi.rs (both have these; the wasm module also has whole steps, unused here).
 *
 * @typedef {object} WasmParty
 * @property {() => Uint8Array} permutationFile
 * @property {(pairs: Uint8Array) => object} resolve
 * @property {() => Uint8Array} exportKey
 * @property {() => string} role
 * @property {() => void} free
 * @property {(values: Uint8Array, ends: Uint32Array, packed: boolean, columns: string[], normalize: boolean,
 *             format: string, fpr: number | undefined, joinerCount: number) => { values: Uint8Array, ends: Uint32Array }} setupBegin
 * @property {(masked: Uint8Array, progress?: Beat) => Uint8Array} setupFinish
 * @property {(values: Uint8Array, ends: Uint32Array, packed: boolean, columns: string[], normalize: boolean,
 *             sizeOnly: boolean) => { values: Uint8Array, ends: Uint32Array }} requestBegin
 * @property {(masked: Uint8Array) => Uint8Array} requestFinish
 * @property {(request: Uint8Array, joinerCount: number, sizeOnly: boolean) => Uint8Array} respondBegin
 * @property {(remasked: Uint8Array) => Uint8Array} respondFinish
 * @property {(setup: Uint8Array, response: Uint8Array, maxSetupBytes: number | undefined) => Uint8Array} intersectBegin
 * @property {(unmasked: Uint8Array) => object} intersectFinish
 * @property {(values: Uint8Array, ends: Uint32Array, progress: Beat) => Uint8Array} maskPart
 * @property {(elements: Uint8Array, first: number, progress: Beat) => Uint8Array} remaskPart
 * @property {(elements: Uint8Array, first: number, progress: Beat) => Uint8Array} unmaskPart
 */

/**
 * The parties this worker holds, by the id the page knows them by. A party's key lives in the
 * wasm instance; `free` drops it there (the key is wiped on drop).
 *
 * @type {Map<number, WasmParty>}
 */
const parties = new Map();
let nextParty = 1;

/** @param {unknown} id */
function partyOf(id) {
  const party = typeof id === 'number' ? parties.get(id) : undefined;
  if (!party) throw Object.assign(new Error(`this worker holds no party ${String(id)} (disposed?)`), { code: 'PSI_USAGE' });
  return party;
}

/**
 * A party's step (begin, map, finish) on this worker and the helpers the page connected, if
 * any (shard/coordinator.js): `{ result, shards }`.
 *
 * @param {any} input
 * @param {import('./worker.js').OpContext} op
 * @param {(party: WasmParty) => import('./shard/parts.js').Items} begin
 * @param {(party: WasmParty, mapped: Uint8Array) => unknown} finish
 */
function step(input, { progress, context }, begin, finish) {
  const party = partyOf(input.party);
  return runSharded({
    shard: input.shard,
    role: /** @type {'starter' | 'joiner'} */ (party.role()),
    party,
    begin: () => begin(party),
    finish: (mapped) => finish(party, mapped),
    psiRanges: glueOf(context).psiRanges,
    progress,
    memory: workerMemory,
  });
}

/**
 * An intersection with every field present (the addon leaves out the ones it has not, where the
 * wasm module sets them undefined): the same object from either engine.
 *
 * @param {any} result
 */
const found = ({ size, rows, setupPositions, rowsFile, pairsFile }) => ({ size, rows, setupPositions, rowsFile, pairsFile });

/** @type {WebAssembly.Memory | null} this worker's wasm instance's linear memory (null on the addon) */
let instanceMemory = null;

/**
 * What this worker holds now: its wasm instance's linear memory (which never shrinks: the
 * instance's peak) and its JS heap (Node: this isolate's used heap and external memory, the
 * latter including the wasm memory; a browser: Chromium's performance.memory where a worker has
 * it, else undefined).
 *
 * @returns {import('./shard/coordinator.js').WorkerMemory}
 */
export function workerMemory() {
  const wasmBytes = instanceMemory?.buffer.byteLength ?? 0;
  if (isNode) {
    const { heapUsed, external } = process.memoryUsage();
    return { wasmBytes, heapBytes: heapUsed, externalBytes: external };
  }
  const heap = /** @type {any} */ (performance).memory?.usedJSHeapSize;
  return { wasmBytes, heapBytes: typeof heap === 'number' ? heap : undefined };
}

/**
 * `party`'s key as this worker sends it to the page: in a fresh ArrayBuffer of exactly its
 * length, which worker.js transfers (its backing store moves to the page, nothing is copied),
 * and the engine's export wiped at once. The export itself cannot be what is sent:
 * - the addon's is a napi-rs external ArrayBuffer, which Node does not move but silently copies
 *   into the serialized message when it is transferred (no error for "transfer, else copy" in
 *   worker.js to see), leaving the key in that message's freed buffer and in the addon's
 *   allocation, which napi-rs frees without wiping;
 * - the wasm module's is a 32-byte Uint8Array that V8 keeps on its heap, and reading its
 *   `.buffer` to transfer it copies the bytes out and leaves them there, unwiped.
 * The fresh buffer is allocated before the export, so that nothing is allocated (no garbage
 * collection can move the export) between the export and its wipe.
 *
 * @param {WasmParty} party
 */
function exportedKey(party) {
  const sent = new Uint8Array(new ArrayBuffer(32));
  const exported = party.exportKey();
  try {
    if (exported.length !== sent.length) throw new Error(`invariant: an exported key of ${exported.length} bytes`);
    sent.set(exported);
    return sent;
  } finally {
    exported.fill(0);
  }
}

/** @param {unknown} context */
const glueOf = (context) => /** @type {WasmGlue} what load returned */ (context);


serve({
  /** @param {unknown} sent  the config createPsiPool sent (PsiConfig) */
  async load(sent = {}) {
    const config = /** @type {import('./psi.js').PsiConfig} */ (sent);
    const engine = await psiEngine(config.asset ?? 'auto');
    if (engine.addon) return { asset: engine.asset, abi: engine.addon.abiVersion(), context: engine.addon };
    const flavour = engine.asset === 'wasm-simd' ? 'simd' : 'scalar';
    /** @type {{ glue: WasmGlue, memory: WebAssembly.Memory }} */
    const { glue, memory } = await loadWasm(flavour, config.assetBase);
    instanceMemory = memory;
    return { asset: engine.asset, abi: glue.abiVersion(), context: glue };
  },
  ops: {
    /** @param {import('./psi.js').PsiInput} input @param {import('./worker.js').OpContext} op */
    'psi.request': ({ key, values, ends, reveal, normalize }, { progress, context }) =>
      /** @type {WasmGlue} what load returned */ (context).psiRequest(key, values, ends, reveal, normalize, progress),
    /** @param {{ role: string, key?: Uint8Array }} input @param {import('./worker.js').OpContext} op */
    'psi.party.create': ({ role, key }, { context }) => {
      const { PsiParty } = glueOf(context);
      const party = key === undefined ? PsiParty.generate(role) : PsiParty.import(role, key);
      const id = nextParty++;
      parties.set(id, party);
      return { party: id };
    },
    /** @param {any} input @param {import('./worker.js').OpContext} op */
    'psi.party.setup': (input, op) =>
      step(input, op, (party) => ({
        kind: 'mask',
        ...party.setupBegin(input.values, input.ends, input.packed, input.columns, input.normalize, input.format, input.fpr, input.joinerCount),
      }), (party, masked) => party.setupFinish(masked)),
    /** @param {any} input */
    'psi.party.permutation': (input) => partyOf(input.party).permutationFile(),
    /** @param {any} input @param {import('./worker.js').OpContext} op */
    'psi.party.respond': (input, op) =>
      step(input, op, (party) => ({
        kind: 'remask',
        elements: party.respondBegin(input.request, input.joinerCount, input.sizeOnly),
      }), (party, remasked) => party.respondFinish(remasked)),
    /** @param {any} input */
    'psi.party.resolve': (input) => partyOf(input.party).resolve(input.pairs),
    /** @param {any} input @param {import('./worker.js').OpContext} op */
    'psi.party.request': (input, op) =>
      step(input, op, (party) => ({
        kind: 'mask',
        ...party.requestBegin(input.values, input.ends, input.packed, input.columns, input.normalize, input.sizeOnly),
      }), (party, masked) => party.requestFinish(masked)),
    /** @param {any} input @param {import('./worker.js').OpContext} op */
    'psi.party.intersect': (input, op) =>
      step(input, op, (party) => ({
        kind: 'unmask',
        elements: party.intersectBegin(input.setup, input.response, input.maxSetupBytes),
      }), (party, unmasked) => found(party.intersectFinish(unmasked))),
    /** @param {any} input @param {import('./worker.js').OpContext} op */
    'psi.helper': (input, { progress, context }) => runHelper(input, glueOf(context).PsiHelper, progress, workerMemory),
    /** @param {any} input */
    'psi.party.exportKey': (input) => exportedKey(partyOf(input.party)),
    /** @param {any} input */
    'psi.party.dispose': (input) => {
      partyOf(input.party).free();
      parties.delete(input.party);
    },
    /** @param {any} input @param {import('./worker.js').OpContext} op */
    'psi.sample': (input, { context }) => glueOf(context).psiSample(input.rows),
    noop: (input) => input,
  },
});
