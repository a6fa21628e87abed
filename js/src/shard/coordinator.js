// @ts-check
// The first worker of a sharded step: the one holding the party. It tells the page to submit
// the helpers, begins the step (reads the rows, checks the messages), delivers the key to each
// helper that starts in time, splits the items, maps its own part while the helpers map theirs,
// collects their outputs and finishes the step: the page receives only the finished message,
// as from a step on one worker, and never any key material (messages.js has the protocol).
//
// Failure rules:
// - a helper that fails (or is reported failed by the page) before the split, or does not
//   start within `wait` ms, is left out: the step runs on the others and says so;
// - after the split, a helper whose worker fails (an error outside its part, a crash, a hang
//   the pool caught) fails the step with one ShardError-coded error (PSI_SHARD), no retry;
// - an engine error in a part (an element off the curve) is the step's error, the lowest part's
//   first, so the step fails exactly as on one worker.

import { Link, Waiter } from './messages.js';
import { concat, itemCount, mapInChunks, partBuffers, partOf, ranges } from './parts.js';

/**
 * What the page sent with a sharded step.
 *
 * @typedef {{ control: MessagePort, helpers: MessagePort[], wait: number }} ShardInput
 */
/**
 * What a worker holds (psi-worker.js workerMemory): its wasm instance's linear memory (its peak:
 * it never shrinks) and its JS heap where the host tells it.
 *
 * @typedef {{ wasmBytes: number, heapBytes?: number, externalBytes?: number }} WorkerMemory
 */
/**
 * How a step ran: `workers` the parts it ran in (this worker's and its helpers'), `items` the
 * step's items (distinct keys masked, or elements re-masked or unmasked), `helpers` how
 * many the page submitted, `left` those left out before the split and why, `memory` what each
 * worker that ran a part held after it (this one first, after the merge).
 *
 * @typedef {{ workers: number, items: number, helpers: number, left: Array<{ index: number, why: string }>, memory: WorkerMemory[] }} ShardReport
 */

/**
 * An Error with a code, as an engine error crosses (a code the page turns into a PsiError).
 *
 * @param {string} message
 * @param {string} code
 */
const coded = (message, code) => Object.assign(new Error(message), { code });

/**
 * Runs a step over this worker and its helpers.
 *
 * @template T
 * @param {object} step
 * @param {ShardInput | undefined} step.shard   absent: a step on this worker alone
 * @param {'starter' | 'joiner'} step.role
 * @param {import('./parts.js').PartMapper & { exportKey(): Uint8Array }} step.party
 * @param {() => import('./parts.js').Items} step.begin
 * @param {(mapped: Uint8Array) => T} step.finish
 * @param {(items: number, count: number) => Uint32Array} step.psiRanges
 * @param {(done: number, total: number) => void} step.progress
 * @param {() => WorkerMemory} step.memory
 * @returns {Promise<{ result: T, shards: ShardReport }>}
 */
export async function runSharded({ shard, role, party, begin, finish, psiRanges, progress, memory }) {
  const ports = shard?.helpers ?? [];
  /** @type {Helper[]} */
  const helpers = ports.map((port, i) => new Helper(i + 1, port));
  const waiter = new Waiter();
  /** @type {boolean} whether the split happened */
  let split = false;
  const control = shard ? new Link(shard.control, (message) => {
    if (message?.type !== 'helper-failed') return;
    const helper = helpers[message.index - 1];
    if (!helper) return;
    helper.workerFailed(String(message.message), split);
    waiter.wake();
  }) : null;
  for (const helper of helpers) helper.onChange = () => waiter.wake();
  try {
    // Begun first: reading the rows or messages is one wasm call that answers no hello, so
    // helpers are asked for only once it is done, and only when there is something to share.
    const items = begin();
    const total = itemCount(items);
    if (helpers.length > 0 && total > 1) control?.post({ type: 'started' });
    let ownDone = 0;
    const report = () => progress(ownDone + helpers.reduce((n, h) => n + h.done, 0), total);
    // The helpers that start in time get the key; the split waits for them all, at most `wait`.
    /** @type {Uint8Array | null} */
    let key = null;
    if (helpers.length > 0 && total > 1) {
      key = party.exportKey();
      const deliver = /** @type {Uint8Array} */ (key);
      for (const helper of helpers) helper.keyed = (h) => h.post({ type: 'key', role, key: deliver });
      for (const helper of helpers) helper.deliverIfStarted();
      await waiter.until(() => helpers.every((h) => h.state === 'ready' || h.state === 'failed'), shard?.wait ?? 0, report);
    }
    key?.fill(0);
    const ready = helpers.filter((h) => h.state === 'ready');
    const parts = ranges(psiRanges, total, 1 + ready.length);
    /** @type {Array<{ index: number, why: string }>} */
    const left = [];
    for (const helper of helpers) {
      const at = ready.indexOf(helper) + 1;
      if (at > 0 && at < parts.length) continue;
      left.push({ index: helper.index, why: helper.leftOut(total, shard?.wait ?? 0) });
      helper.dismiss();
    }
    split = true;
    const working = ready.slice(0, Math.max(0, parts.length - 1));
    working.forEach((helper, i) => helper.give(partOf(items, parts[i + 1][0], parts[i + 1][1]), report));
    // This worker's own part, in chunks (parts.js), so helpers' progress and failures are seen
    // meanwhile; the lowest part's error is thrown first.
    const [start, end] = parts[0] ?? [0, 0];
    /** @type {Uint8Array[]} */
    const own = [];
    if (end > start) {
      const mine = start === 0 && end === total ? { ...items, first: 0 } : partOf(items, start, end);
      own.push(await mapInChunks(party, /** @type {import('./parts.js').Part} */ (mine), (done) => {
        ownDone = done;
        report();
      }, () => working.find((h) => h.failure)?.failure ?? null));
    }
    // Decided once every helper settled, or the lowest one that failed did and all below it: the
    // lowest part's error is the step's (an engine error as on one worker, or PSI_SHARD where a
    // helper's worker failed first in part order).
    const decided = () => {
      for (const h of working) {
        if (!h.settled) return false;
        if (h.failure || h.error) return true;
      }
      return true;
    };
    await waiter.until(decided, Infinity, report);
    const first = working.find((h) => h.failure || h.error);
    if (first) throw first.failure ?? first.error;
    const mapped = concat([...own, ...working.map((h) => /** @type {Uint8Array} */ (h.output))]);
    report();
    const result = finish(mapped);
    const memories = [memory(), ...working.map((h) => h.memory ?? { wasmBytes: 0 })];
    return { result, shards: { workers: Math.max(1, parts.length), items: total, helpers: helpers.length, left, memory: memories } };
  } finally {
    for (const helper of helpers) helper.close();
    control?.close();
  }
}

/** A helper's memory report, as far as it is one. @param {unknown} sent @returns {WorkerMemory} */
function memoryOf(sent) {
  const field = (/** @type {string} */ name) => {
    const value = sent !== null && typeof sent === 'object' ? /** @type {Record<string, unknown>} */ (sent)[name] : undefined;
    return Number.isSafeInteger(value) ? /** @type {number} */ (value) : undefined;
  };
  return { wasmBytes: field('wasmBytes') ?? 0, heapBytes: field('heapBytes'), externalBytes: field('externalBytes') };
}

/** The coordinator's view of one helper. */
class Helper {
  /** @type {'waiting' | 'started' | 'keyed' | 'ready' | 'working' | 'failed' | 'dismissed'} */
  state = 'waiting';
  done = 0;
  settled = false;
  /** @type {Uint8Array | null} */
  output = null;
  /** @type {WorkerMemory | null} what its worker held after its part */
  memory = null;
  /** @type {Error | null} an engine error in its part */
  error = null;
  /** @type {Error | null} its worker failed after the split */
  failure = null;
  /** @type {string | null} why it failed before the split */
  why = null;
  /** @type {((helper: Helper) => void) | null} sends it the key, once there is one */
  keyed = null;
  /** @type {() => void} */
  onChange = () => {};
  /** @type {(() => void) | null} */
  #report = null;
  #link;

  /** @param {number} index @param {MessagePort} port */
  constructor(index, port) {
    this.index = index;
    this.#link = new Link(port, (message) => this.#received(message));
  }

  /** @param {unknown} message @param {Transferable[]} [transfer] */
  post(message, transfer) {
    this.#link.post(message, transfer);
  }

  /** @param {any} message */
  #received(message) {
    switch (message?.type) {
      case 'hello':
        if (this.state !== 'waiting') return;
        this.state = 'started';
        this.deliverIfStarted();
        break;
      case 'ready':
        if (this.state === 'keyed') this.state = 'ready';
        break;
      case 'progress':
        if (this.state === 'working' && Number.isSafeInteger(message.done)) {
          this.done = message.done;
          this.#report?.();
        }
        break;
      case 'result':
        if (this.state === 'working' && message.output instanceof Uint8Array) {
          this.output = message.output;
          this.memory = memoryOf(message.memory);
          this.settled = true;
        }
        break;
      case 'failed':
        if (this.state === 'working') {
          // An engine error in its part (a code of the engine's), or its worker's.
          if (typeof message.code === 'string' && message.code.startsWith('PSI_') && message.code !== 'PSI_INTERNAL') {
            this.error = coded(String(message.message), message.code);
            this.settled = true;
          } else {
            this.workerFailed(String(message.message), true);
          }
        } else if (this.state !== 'dismissed') {
          this.workerFailed(String(message.message), false);
        }
        break;
      default:
        return;
    }
    this.onChange();
  }

  deliverIfStarted() {
    if (this.state !== 'started' || !this.keyed) return;
    this.keyed(this);
    this.state = 'keyed';
  }

  /**
   * Its worker failed (it said so, or the page saw its task reject).
   *
   * @param {string} message
   * @param {boolean} afterSplit
   */
  workerFailed(message, afterSplit) {
    if (afterSplit && this.state === 'working' && !this.settled) {
      this.failure = coded(`helper ${this.index} of the sharded step failed: ${message}`, 'PSI_SHARD');
      this.settled = true;
    } else if (!afterSplit && this.state !== 'dismissed') {
      this.state = 'failed';
      this.why = message;
    }
  }

  /** Why it is left out of the split. @param {number} items @param {number} wait */
  leftOut(items, wait) {
    if (this.state === 'failed') return `failed before the split: ${this.why}`;
    if (this.state === 'ready' || items <= 1) return `not needed for ${items} item${items === 1 ? '' : 's'}`;
    if (this.state === 'keyed') return `not ready within ${wait} ms`;
    return `did not start within ${wait} ms`;
  }

  /** @param {import('./parts.js').Part} part @param {() => void} report */
  give(part, report) {
    this.state = 'working';
    this.#report = report;
    this.post({ type: 'part', ...part }, partBuffers(part));
  }

  dismiss() {
    if (this.state === 'failed') return;
    this.state = 'dismissed';
    this.post({ type: 'dismiss' });
  }

  close() {
    if (this.state !== 'dismissed' && this.state !== 'failed' && !this.settled) this.post({ type: 'dismiss' });
    this.#link.close();
  }
}

