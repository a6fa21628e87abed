// @ts-check
// The two places a pool runs: Node (worker_threads) and browsers (Web Workers). Everything the
// pool needs from its host goes through `spawnWorker` and `availableParallelism`, so the pool
// itself is the same code in both. Node's modules are imported only under Node, so a browser
// imports this file without a bundler.

/** @typedef {import('../index.js').WorkerHandle} WorkerHandle */
/** @typedef {typeof import('node:worker_threads')} NodeThreads */

/**
 * The worker side's port to the pool (see `workerPort`).
 *
 * @typedef {object} WorkerPort
 * @property {(message: unknown, transfer?: Transferable[]) => void} post
 * @property {(handler: (data: unknown) => void) => void} onMessage
 */

/** Whether this is Node (not a browser, not a Web Worker). */
export const isNode =
  typeof process === 'object' && process !== null && typeof process.versions?.node === 'string';

/** Node's modules the pool uses, or null in a browser. */
const node = isNode
  ? {
      threads: await import('node:worker_threads'),
      os: await import('node:os'),
    }
  : null;

/**
 * The number of workers a pool starts when not told: Node's `os.availableParallelism()`, a
 * browser's `navigator.hardwareConcurrency`, at least 1.
 */
export function availableParallelism() {
  const count = node ? node.os.availableParallelism() : globalThis.navigator?.hardwareConcurrency;
  return Number.isSafeInteger(count) && count > 0 ? count : 1;
}

/**
 * A started worker for the module at `url`, as a handle the pool drives:
 *
 *   handle.post(message, transfer)   postMessage with a transfer list
 *   handle.listen({ message, error, exit })
 *   handle.terminate() -> Promise    resolves once the worker is gone (Node: its exit;
 *                                    browsers give no exit event: at once)
 *   handle.ref() / handle.unref()    whether the worker keeps Node's event loop alive
 *
 * Browsers report no exit at all: a worker that closes itself is seen as silent.
 *
 * @param {URL | string} url
 * @param {{ name?: string }} [options]
 * @returns {WorkerHandle}
 */
export function spawnWorker(url, { name } = {}) {
  return node ? spawnNodeWorker(node.threads, url, name) : spawnWebWorker(url, name);
}

/**
 * @param {NodeThreads} threads
 * @param {URL | string} url
 * @param {string | undefined} name
 * @returns {WorkerHandle}
 */
function spawnNodeWorker(threads, url, name) {
  const worker = new threads.Worker(url, { name });
  /** @type {Promise<number> | null} */
  let gone = null;
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  return {
    // The DOM's Transferable also names browser-only kinds (VideoFrame, ...) that Node's list
    // type lacks; the pool posts ArrayBuffers.
    post: (message, transfer) =>
      worker.postMessage(message, /** @type {import('node:worker_threads').TransferListItem[] | undefined} */ (transfer)),
    listen({ message, error, exit }) {
      worker.on('message', message);
      worker.on('messageerror', (e) => error(e));
      worker.on('error', error);
      exited.then((code) => exit(code));
    },
    terminate() {
      gone ??= worker.terminate().then(() => exited);
      return gone;
    },
    ref: () => worker.ref(),
    unref: () => worker.unref(),
  };
}

/**
 * @param {URL | string} url
 * @param {string | undefined} name
 * @returns {WorkerHandle}
 */
function spawnWebWorker(url, name) {
  const worker = new Worker(url, { type: 'module', name });
  return {
    post: (message, transfer) => worker.postMessage(message, transfer ?? []),
    listen({ message, error }) {
      worker.addEventListener('message', (event) => message(event.data));
      worker.addEventListener('messageerror', (event) => error(event));
      worker.addEventListener('error', (event) => {
        event.preventDefault();
        error(event);
      });
    },
    terminate() {
      worker.terminate();
      return Promise.resolve();
    },
    ref() {},
    unref() {},
  };
}

/**
 * The host side of a worker: where `serve` reads and writes its messages. Throws outside a
 * worker (Node).
 *
 * @returns {WorkerPort}
 */
export function workerPort() {
  if (node) {
    const port = node.threads.parentPort;
    if (port === null) throw new Error('lockstep: worker code runs only inside a worker');
    return {
      post: (message, transfer) =>
        port.postMessage(message, /** @type {import('node:worker_threads').TransferListItem[] | undefined} */ (transfer)),
      onMessage: (handler) => port.on('message', handler),
    };
  }
  return {
    // @ts-expect-error lib.dom types globalThis as a Window (postMessage(message, targetOrigin)), not a worker's scope
    post: (message, transfer) => globalThis.postMessage(message, transfer),
    onMessage: (handler) => globalThis.addEventListener('message', (event) => handler(event.data)),
  };
}
