// @ts-check
// The supervised pool: a fixed number of workers, each running one task at a time, that never
// loses track of one. This file is the public face (`Pool`, declared in index.d.ts); the rules
// live beside it in pool/, one concept a file:
//
//   options.js       the pool's and each run's options, checked, with their defaults
//   tasks.js         a task's record and states (queued, bound, running, done)
//   slots.js         a worker's record and its state machine (starting, idle, busy, dying)
//   queue.js         the tasks waiting for a worker, bounded by `maxQueue`
//   reservations.js  bytes reserved against `memoryBudget`, held until a terminated worker exits
//   silence.js       the silence limit learnt from measured progress gaps per unit of work
//   affinity.js      tasks that must run on the one worker holding their state
//   handshake.js     the handshake's verdict on a starting worker
//   supervision.js   the rules that drive them: handshake and startup timeout, timeouts,
//                    hangs, crashes and replacement, the broken pool, closing
//   timing.js        the clock, the longest delay a timer can wait, and when a timer
//                    decides (after the messages already waiting)
//
// and the parts the worker side and every domain (engines/, psi/, plan/) share with it:
// protocol.js and worker.js (the two sides of the messages), platform.js, snapshot.js (inputs
// are snapshotted at submission), typed.js, errors.js, fatal.js, fields.js.

import { AbortError, InputError, PoolClosedError } from './errors.js';
import { messageOf } from './fields.js';
import { ownedBuffers, snapshot } from './snapshot.js';
import { parsePoolOptions, parseRunOptions } from './options.js';
import { Supervisor } from './supervision.js';
import { createTask, isSettled } from './tasks.js';
import { Affinity } from './affinity.js';

export { SILENCE_DEFAULTS } from './silence.js';
export { defaultReservation } from './reservations.js';

/** @typedef {import('../index.js').PoolOptions} PoolOptions */
/** @typedef {import('../index.js').PoolStats} PoolStats */
/** @typedef {import('../index.js').Pool} DeclaredPool  the class index.d.ts publishes */

/**
 * The well-known symbol `await using` calls, or where a runtime lacks it, the registered one
 * that stands in for it (as TypeScript's own downlevel helper does). Typed as the well-known
 * one, so the method below is the declared `[Symbol.asyncDispose]`.
 *
 * @type {typeof Symbol.asyncDispose}
 */
const asyncDispose = /** @type {typeof Symbol.asyncDispose} */ (Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose'));

/**
 * The AbortError of a task whose signal was aborted while `run` measured or copied its input.
 *
 * @param {string} op
 * @param {AbortSignal} signal
 */
const abortedDuringSubmission = (op, signal) =>
  new AbortError(`run: '${op}' was aborted while its input was measured or copied`, { cause: signal.reason });

/**
 * A supervised pool of workers running the ops of one worker module. Every `run` settles exactly
 * once, with the worker's output or one of the errors in errors.js, whatever the worker does.
 *
 * @implements {DeclaredPool}
 */
export class Pool {
  #settings;
  #supervisor;
  #nextTask = 1;
  /** @type {WeakSet<Affinity>} the affinities this pool handed out */
  #affinities = new WeakSet();

  /** @param {PoolOptions} options  see index.d.ts (PoolOptions) for each option's meaning */
  constructor(options) {
    this.#settings = parsePoolOptions(options);
    this.#supervisor = new Supervisor(this.#settings);
  }

  /** The number of workers this pool runs at most. */
  get workers() {
    return this.#settings.workers;
  }

  /** The bytes reserved now: tasks submitted and not ended, and tasks whose worker is not yet gone. */
  get reservedBytes() {
    return this.#supervisor.reservedBytes;
  }

  /** A snapshot of the pool's state, for tests and monitoring. @returns {PoolStats} */
  get stats() {
    return this.#supervisor.stats();
  }

  /**
   * Runs `op` on `input` in a worker. Resolves with the worker's output; rejects with one of the
   * errors in errors.js (or a TypeError / RangeError for a bad argument). Never throws.
   *
   * @template [T=unknown]
   * @param {string} op
   * @param {unknown} [input]
   * @param {import('../index.js').RunOptions<T>} [options]
   * @returns {Promise<T>}
   */
  run(op, input, options = {}) {
    return new Promise((resolve, reject) => {
      const id = this.#nextTask++;
      if (typeof op !== 'string') return reject(new TypeError('run: op must be a string'));
      const supervisor = this.#supervisor;
      if (supervisor.closed) return reject(new PoolClosedError('run: the pool is closed'));
      if (supervisor.broken) return reject(supervisor.broken);
      /** @type {import('./options.js').RunSpec} */
      let spec;
      try {
        spec = parseRunOptions(options, input, this.#settings.taskTimeout);
      } catch (error) {
        return reject(error);
      }
      const { affinity } = spec;
      if (affinity !== undefined) {
        if (!this.#affinities.has(affinity)) return reject(new TypeError('run: affinity must come from this pool\'s affinity()'));
        if (affinity.lost) return reject(affinity.error());
      }
      const refusal = supervisor.budgetRefusal(op, spec.reserve);
      if (refusal) return reject(refusal);
      /** @type {{ value: unknown, transfer: Transferable[] }} */
      let copy;
      try {
        copy = spec.owned ? { value: input, transfer: ownedBuffers(input) } : snapshot(input);
      } catch (error) {
        if (error instanceof InputError) return reject(error);
        const message = messageOf(error);
        return reject(new InputError(message === undefined ? '' : String(message), { cause: error }));
      }
      // Measuring and copying the input ran the caller's code (getters, proxies): it may have
      // aborted the signal, whose event nothing listened to yet.
      const { signal } = spec;
      if (signal?.aborted) return reject(abortedDuringSubmission(op, signal));
      const task = createTask(
        // The output's type is the caller's claim (run<T> in index.d.ts); only `validate` checks it.
        { id, op, input: copy.value, transfer: copy.transfer, resolve: /** @type {(output: unknown) => void} */ (resolve), reject },
        spec,
      );
      if (!supervisor.submit(task, spec.reserve)) return reject(supervisor.queueRefusal(op));
      if (signal && !isSettled(task)) {
        task.onAbort = () => supervisor.abort(task);
        // Posting an owned input clones it, which can run the caller's getters once more.
        if (signal.aborted) task.onAbort();
        else signal.addEventListener('abort', task.onAbort, { once: true });
      }
    });
  }

  /**
   * A new worker affinity (pool/affinity.js): the first task run with it (`run(op, input,
   * { affinity })`) goes to any worker and binds it there; later ones run on that worker only,
   * and reject with WorkerLostError once it is gone. `label` names what it stands for in that
   * error.
   *
   * @param {string} [label]
   * @returns {import('../index.js').WorkerAffinity}
   */
  affinity(label = 'the task\'s state') {
    const affinity = new Affinity(String(label));
    this.#affinities.add(affinity);
    return affinity;
  }

  /**
   * The silence limit (ms) a task of `op` gets now: `override` if given (false: Infinity), else
   * what the gaps measured for `op` give (SilenceOptions in index.d.ts), at least `atLeast` ms
   * with `{ atLeast }`.
   *
   * @param {string} op
   * @param {number | false | { atLeast: number }} [override]
   */
  silenceLimit(op, override) {
    return this.#supervisor.silenceLimit(op, override);
  }

  /**
   * Stops taking tasks and settles every one. Without `force`, queued and running tasks finish
   * first; with it they reject with PoolClosedError and their workers are terminated. Resolves
   * once every worker is gone (and so every reservation returned).
   *
   * @param {{ force?: boolean }} [options]
   */
  close({ force = false } = {}) {
    return this.#supervisor.close(force);
  }

  /** close({ force: true }). */
  destroy() {
    return this.close({ force: true });
  }

  /** close(): `await using pool = new Pool(...)` settles every task at the end of the scope. */
  [asyncDispose]() {
    return this.close();
  }
}
