// @ts-check
// The worker side of the pool's protocol (protocol.js). A worker module calls `serve` once:
//
//   import { serve } from 'lockstep/worker';
//   serve({
//     load: async (config) => ({ asset: 'wasm-simd', abi: 1, context }),  // at startup
//     ops: { square: (input, { progress, context }) => input * input },
//   });
//
// `load` runs once, on the pool's `init`; what it returns is the handshake. An error it throws
// with `code: 'ERR_ASSET_MISSING'` and a `path` is reported as a missing asset. Each op gets the
// task's input (the pool's snapshot, now owned by this worker) and returns its output (or a
// promise of it); whole-buffer typed arrays in the output are transferred, not copied (but see
// `transferable`: Node copies an addon's external buffers, silently).
// `progress(done, total)` reports progress and is the beat the pool's hang detection listens
// to: an op that runs for long should call it at a steady pace of work (the pool measures the
// time per unit of `done`, so beats may cover different amounts of work).
//
// An op that throws fails its task and the worker stays; a WebAssembly.RuntimeError (a trap:
// a Rust panic in wasm) or a stack overflow also ends the worker, since its wasm instance may
// no longer be usable (fatal.js).

import { endsWorker } from './fatal.js';
import { fieldOf, messageOf } from './fields.js';
import { PROTOCOL_VERSION, isCount } from './protocol.js';
import { workerPort } from './platform.js';

// The published types of this module (worker.d.ts: an import of './worker.js' resolves to it),
// which the code below is checked against.
/** @typedef {Parameters<typeof import('./worker.js').serve>[0]} ServeOptions */
/** @typedef {import('./protocol.js').PoolMessage} PoolMessage */

/** The error `load` throws for an asset it cannot find. */
export class AssetError extends Error {
  /**
   * @param {string} path
   * @param {string} message
   * @param {ErrorOptions} [options]
   */
  constructor(path, message, options) {
    super(message, options);
    this.name = 'AssetError';
    this.code = 'ERR_ASSET_MISSING';
    this.path = path;
  }
}

/**
 * Serves the pool's protocol on this worker's port with `ops`, after `load`: answers `init`
 * with the handshake (or the startup error `load` threw), then runs each task's op and posts
 * its progress and its result or error. Messages that are neither are ignored.
 *
 * @param {ServeOptions} options
 */
export function serve({ load = async () => ({ asset: 'js', abi: 0 }), ops }) {
  const port = workerPort();
  /** @type {unknown} */
  let context;
  port.onMessage(async (received) => {
    // From the pool, which only posts PoolMessages (protocol.js).
    const data = /** @type {PoolMessage | undefined} */ (received);
    if (data?.type === 'init') {
      try {
        const loaded = await load(data.config);
        context = loaded.context;
        port.post({ type: 'hello', protocol: PROTOCOL_VERSION, abi: loaded.abi, asset: loaded.asset });
      } catch (error) {
        const path = fieldOf(error, 'path');
        port.post({
          type: 'startup-error',
          reason: fieldOf(error, 'code') === 'ERR_ASSET_MISSING' ? 'asset' : 'load',
          message: String(messageOf(error) ?? error),
          path: path === undefined ? undefined : String(path),
        });
      }
      return;
    }
    if (data?.type !== 'task') return;
    const { id } = data;
    let running = true;
    // Counts only (the protocol's rule), checked here so a wrong call fails the op, not the
    // worker; silent once the task has ended, so a late call cannot reach the next task.
    /** @param {number} done @param {number} total */
    const progress = (done, total) => {
      if (!isCount(done) || !isCount(total)) {
        throw new TypeError(`progress(done, total) takes whole numbers >= 0, not (${done}, ${total})`);
      }
      if (running) port.post({ type: 'progress', id, done, total });
    };
    try {
      const op = Object.hasOwn(ops, data.op) ? ops[data.op] : undefined;
      if (typeof op !== 'function') throw new TypeError(`this worker has no op '${data.op}'`);
      const output = await op(data.input, { progress, context });
      running = false;
      try {
        port.post({ type: 'result', id, output }, transferable(output));
      } catch {
        // A buffer that cannot move (a wasm memory's): copied instead. Not every buffer that
        // cannot move throws: Node copies an addon's external ArrayBuffer (napi-rs builds its
        // results as ones) into the serialized message without a word, so this catch never sees
        // it. Either copy leaves the bytes in the message's buffer, freed unwiped: an op whose
        // output is a secret returns it in a fresh ArrayBuffer of its own and wipes the engine's
        // (psi/worker.js, exportedKey).
        port.post({ type: 'result', id, output });
      }
    } catch (error) {
      running = false;
      const code = fieldOf(error, 'code');
      port.post({
        type: 'error',
        id,
        error: {
          name: String(fieldOf(error, 'name') ?? 'Error'),
          message: String(messageOf(error) ?? error),
          code: typeof code === 'string' ? code : undefined,
        },
        fatal: endsWorker(error),
      });
    }
  });
}

// Whole-buffer views at the top of the output (or in a top-level array / plain object): their
// buffers move to the pool. A view into a larger buffer (wasm memory, a pool of bytes) is copied,
// and so is, by Node, an external ArrayBuffer (an addon's memory): it stays in the transfer list,
// is not detached, and its bytes are serialized into the message (test/node/key-copies.test.js).
/** @param {unknown} output @returns {ArrayBuffer[]} */
function transferable(output) {
  /** @type {unknown[]} */
  const items = Array.isArray(output)
    ? output
    : output !== null && typeof output === 'object' && Object.getPrototypeOf(output) === Object.prototype
      ? Object.values(output)
      : [output];
  /** @type {Set<ArrayBuffer>} */
  const buffers = new Set();
  for (const item of items) {
    if (
      ArrayBuffer.isView(item) &&
      item.buffer instanceof ArrayBuffer &&
      item.byteOffset === 0 &&
      item.byteLength === item.buffer.byteLength
    ) {
      buffers.add(item.buffer);
    }
  }
  return [...buffers];
}
