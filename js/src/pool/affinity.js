// @ts-check
// Worker affinities: tasks that must run on one particular worker, because that worker holds
// state the others do not (a PSI party's key, say). An affinity starts unbound; the first task
// run with it goes to whichever worker takes it, and binds the affinity to that worker. Later
// tasks with it wait for that worker alone (in the pool's queue, in order). Once that worker is
// terminated, for whatever reason, the affinity is lost: its waiting tasks and every later one
// reject with WorkerLostError, whose cause is what ended the worker. A lost affinity never moves
// to another worker: the state it stood for is gone, and no task must silently run without it.

import { WorkerLostError } from './errors.js';

/** @typedef {import('./slots.js').Slot} Slot */

/** The record behind an affinity the pool handed out (the public object is opaque). */
export class Affinity {
  /** @type {Slot | null} the worker it is bound to */
  slot = null;
  /** Whether its worker was terminated. */
  lost = false;
  /** @type {unknown} what ended its worker (null: a close, or an idle worker retired) */
  #reason = null;
  /** What the affinity stands for, in errors (e.g. "the PSI joiner"). */
  label;

  /** @param {string} label */
  constructor(label) {
    this.label = label;
  }

  /**
   * Binds the affinity to `slot` if it is unbound (the task running with it is being given to
   * that worker).
   *
   * @param {Slot} slot
   */
  bindTo(slot) {
    if (this.slot !== null) return;
    this.slot = slot;
    slot.affinities.add(this);
  }

  /**
   * Marks the affinity lost, with `reason` (what ended its worker) as the cause.
   *
   * @param {unknown} reason
   */
  lose(reason) {
    if (this.lost || this.slot === null) return;
    this.lost = true;
    this.#reason = reason;
  }

  /** The error a task with this lost affinity rejects with (a new one each time). */
  error() {
    const name = this.slot?.name ?? 'its worker';
    const reason = this.#reason;
    const why = reason instanceof Error ? ` (${reason.message})` : '';
    return new WorkerLostError(`${this.label} lived in ${name}, which is gone${why}: what it held there is lost`, {
      cause: reason ?? undefined,
    });
  }

  /**
   * Whether a task with this affinity may be given to `slot` now (unbound: to any worker that
   * can take a task; bound: to its own, once idle).
   *
   * @param {Slot} slot
   */
  accepts(slot) {
    return !this.lost && (this.slot === null || this.slot === slot);
  }
}
