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
//   the pool caught), whose task ends without its part's outputs, or that sends what its part
//   cannot be (a progress count outside 0..its items, outputs not 33 bytes an item) fails the
//   step with one ShardError-coded error (PSI_SHARD), no retry; nothing it sent is merged;
// - an engine error in a part (an element off the curve) is the step's error, the lowest part's
//   first, so the step fails exactly as on one worker. The step's error is always the lowest
//   failing part's: this worker's own part (the lowest) is mapped to its end even once a helper
//   has failed, and a helper's failure counts once every part below it has settled.
//
// The key crosses to each helper in a fresh ArrayBuffer of its own that is transferred, never
// serialized into a message (a structured clone leaves its bytes in the freed buffer of the
// serialized message), and this worker's copies are wiped as soon as no helper can still ask
// for one (KeySource).

import { ELEMENT_LEN, Link, Waiter } from './messages.js';
import { concat, itemCount, mapInChunks, partBuffers, partOf, ranges } from './parts.js';

/**
 * What the page sent with a sharded step.
 *
 * @typedef {{ control: MessagePort, helpers: MessagePort[], wait: number }} ShardInput
 */
/**
 * What a worker holds (psi/worker.js workerMemory): its wasm instance's linear memory (its peak:
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
    const index = message?.index;
    const helper = Number.isSafeInteger(index) ? helpers[index - 1] : undefined;
    if (!helper) return;
    if (message.type === 'helper-failed') helper.workerFailed(String(message.message), split);
    else if (message.type === 'helper-ended') helper.taskEnded(split);
    else return;
    waiter.wake();
  }) : null;
  /** @type {KeySource | null} */
  let key = null;
  // The key is wiped as soon as every helper has its copy or will never get one.
  const wipeIfDelivered = () => {
    if (key && !helpers.some((h) => h.state === 'waiting' || h.state === 'started')) key.wipe();
  };
  for (const helper of helpers) {
    helper.onChange = () => {
      wipeIfDelivered();
      waiter.wake();
    };
  }
  try {
    // Begun first: reading the rows or messages is one wasm call that answers no hello, so
    // helpers are asked for only once it is done, and only when there is something to share.
    const items = begin();
    const total = itemCount(items);
    if (helpers.length > 0 && total > 1) control?.post({ type: 'started' });
    let ownDone = 0;
    const report = () => progress(ownDone + helpers.reduce((n, h) => n + h.done, 0), total);
    // The helpers that start in time get the key; the split waits for them all, at most `wait`.
    if (helpers.length > 0 && total > 1) {
      const source = (key = new KeySource(() => party.exportKey()));
      for (const helper of helpers) helper.keyed = (h) => source.deliver(h, role);
      for (const helper of helpers) helper.deliverIfStarted();
      wipeIfDelivered();
      await waiter.until(() => helpers.every((h) => h.state === 'ready' || h.state === 'failed'), shard?.wait ?? 0, report);
    }
    key?.wipe();
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
    // meanwhile. It is the lowest part, so its engine error is the step's, thrown at once; and
    // it runs to its end even when a helper failed, or that error could be missed.
    const [start, end] = parts[0] ?? [0, 0];
    /** @type {Uint8Array[]} */
    const own = [];
    if (end > start) {
      const mine = start === 0 && end === total ? { ...items, first: 0 } : partOf(items, start, end);
      own.push(await mapInChunks(party, /** @type {import('./parts.js').Part} */ (mine), (done) => {
        ownDone = done;
        report();
      }, () => null));
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
    if (mapped.length !== total * ELEMENT_LEN) {
      throw coded(`the parts' outputs are ${mapped.length} bytes for ${total} items (${total * ELEMENT_LEN} expected)`, 'PSI_INTERNAL');
    }
    report();
    const result = finish(mapped);
    const memories = [memory(), ...working.map((h) => h.memory ?? { wasmBytes: 0 })];
    return { result, shards: { workers: Math.max(1, parts.length), items: total, helpers: helpers.length, left, memory: memories } };
  } finally {
    key?.wipe();
    for (const helper of helpers) helper.close();
    control?.close();
  }
}

/**
 * The key as this worker hands it to its helpers. The engine's export is copied at once into a
 * buffer allocated apart from the JS heap (a new ArrayBuffer, which the garbage collector does
 * not move), allocated before the export so that nothing is allocated between the export and
 * its wipe (the wasm module's export is a small typed array on the JS heap, which a collection
 * in that moment could move, leaving its bytes); each helper gets a fresh buffer of its own,
 * filled from that copy and transferred with the message, so the bytes are moved to the
 * helper's worker, not serialized (a structured clone writes them into the message's buffer,
 * freed later without a wipe). The copy here is wiped by `wipe`, once no helper can still ask
 * for the key.
 */
class KeySource {
  /** @type {Uint8Array | null} */
  #bytes;

  /** @param {() => Uint8Array} exportKey  the engine's export of the 32-byte key, wiped here */
  constructor(exportKey) {
    const bytes = new Uint8Array(new ArrayBuffer(32));
    const exported = exportKey();
    try {
      if (exported.length !== bytes.length) throw new Error(`invariant: an exported key of ${exported.length} bytes`);
      bytes.set(exported);
    } finally {
      exported.fill(0);
    }
    this.#bytes = bytes;
  }

  /** Sends `helper` a copy of its own, moved. @param {Helper} helper @param {string} role */
  deliver(helper, role) {
    if (!this.#bytes) throw new Error('invariant: a key delivered after it was wiped');
    const copy = new Uint8Array(new ArrayBuffer(this.#bytes.length));
    copy.set(this.#bytes);
    try {
      helper.post({ type: 'key', role, key: copy }, [copy.buffer]);
    } finally {
      // Detached once moved (nothing left here to wipe; fill would throw); wiped if the post failed.
      if (copy.byteLength > 0) copy.fill(0);
    }
  }

  wipe() {
    this.#bytes?.fill(0);
    this.#bytes = null;
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
  /** the items of its part, once given one */
  items = 0;
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
    // Nothing a helper sends may throw here, in a message listener (it would end this worker,
    // and the party with it): what cannot be taken is that helper's failure.
    try {
      if (!this.#take(message)) return;
    } catch (error) {
      this.workerFailed(`its message could not be taken: ${error instanceof Error ? error.message : String(error)}`, this.state === 'working');
    }
    this.onChange();
  }

  /** @param {any} message @returns {boolean} whether anything changed */
  #take(message) {
    switch (message?.type) {
      case 'hello':
        if (this.state !== 'waiting') return false;
        this.state = 'started';
        this.deliverIfStarted();
        return true;
      case 'ready':
        if (this.state === 'keyed') this.state = 'ready';
        return true;
      case 'progress':
        if (this.state !== 'working' || this.settled) return false;
        if (!(Number.isSafeInteger(message.done) && message.done >= 0 && message.done <= this.items)) {
          this.workerFailed(`it reported ${show(message.done)} items done of a part of ${this.items}`, true);
          return true;
        }
        this.done = message.done;
        this.#report?.();
        return true;
      case 'result': {
        this.post({ type: 'ack' });
        if (this.state !== 'working' || this.settled) return false;
        const output = message.output;
        const expected = this.items * ELEMENT_LEN;
        if (!(output instanceof Uint8Array)) {
          this.workerFailed(`its part's outputs are not bytes but ${show(output)}`, true);
        } else if (output.length !== expected) {
          this.workerFailed(`its part's outputs are ${output.length} bytes for ${this.items} items (${expected} expected)`, true);
        } else {
          this.output = output;
          this.memory = memoryOf(message.memory);
          this.done = this.items;
          this.settled = true;
        }
        return true;
      }
      case 'failed':
        this.post({ type: 'ack' });
        if (this.state === 'working') {
          if (this.settled) return false;
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
        return true;
      default:
        return false;
    }
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

  /**
   * Its task resolved (the page saw it). A helper resolves only once its part's outputs were
   * acknowledged or it was dismissed, so a part still awaited will never come.
   *
   * @param {boolean} afterSplit
   */
  taskEnded(afterSplit) {
    if (afterSplit) this.workerFailed("its task ended without its part's outputs", true);
    else if (this.state !== 'failed') this.workerFailed('its task ended before the split', false);
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
    this.items = itemCount(part);
    this.#report = report;
    this.post({ type: 'part', ...part }, partBuffers(part));
  }

  dismiss() {
    if (this.state === 'failed') return;
    this.state = 'dismissed';
    this.post({ type: 'dismiss' });
  }

  // The step is over here: whatever the helper still does is not needed (one whose outputs
  // were refused may still be mapping). A helper already gone ignores it.
  close() {
    if (this.state !== 'dismissed') this.post({ type: 'dismiss' });
    this.#link.close();
  }
}

/** A value a helper sent, shown in an error (short). @param {unknown} value */
function show(value) {
  if (value instanceof Uint8Array) return `${value.length} bytes`;
  if (typeof value === 'number' || typeof value === 'boolean' || value === null || value === undefined) return String(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 20 ? `${value.slice(0, 20)}...` : value);
  return typeof value;
}
