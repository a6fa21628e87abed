// @ts-check
// Byte reservations against the pool's `memoryBudget`. A task reserves its bytes when it is
// submitted (refused at once if they do not fit) and returns them when it ends. When a task ends
// because its worker is being terminated, the worker may still be using that memory: the bytes
// stay reserved, held by that worker, until it has really exited.

import { BudgetError } from './errors.js';

/** @typedef {import('./tasks.js').Task} Task */
/** @typedef {import('./slots.js').Slot} Slot */

/**
 * The default reservation of a task whose input holds `bytes`: the pool's copy, the worker's
 * copy, the engine's working memory and the output, as the prior system measured (4x + 4 KiB).
 *
 * @param {number} bytes
 */
export const defaultReservation = (bytes) => 4 * bytes + 4096;

/** What is reserved, by whom, against a fixed budget. */
export class Reservations {
  #budget;
  #total = 0;
  /** @type {Map<Task, number>} tasks whose bytes are counted in #total */
  #byTask = new Map();
  /** @type {Map<Slot, Task>} workers being terminated -> the task whose bytes wait for their exit */
  #heldBy = new Map();

  /** @param {number} budget  bytes; Infinity for no limit */
  constructor(budget) {
    this.#budget = budget;
  }

  /** The bytes reserved now. */
  get reserved() {
    return this.#total;
  }

  /** The budget in bytes. */
  get budget() {
    return this.#budget;
  }

  /**
   * The BudgetError a task of `op` asking for `bytes` gets, naming what is free, or null when
   * the bytes fit.
   *
   * @param {string} op
   * @param {number} bytes
   */
  refusal(op, bytes) {
    const budget = this.#budget;
    const free = budget - this.#total;
    if (this.#total + bytes <= budget) return null;
    return new BudgetError(
      `run: '${op}' needs ${bytes} bytes but only ${free} of the ${budget}-byte budget are free`,
      { requested: bytes, available: free, budget },
    );
  }

  /** Reserves `bytes` for `task` (the caller checked `refusal`). @param {Task} task @param {number} bytes */
  take(task, bytes) {
    this.#byTask.set(task, bytes);
    this.#total += bytes;
  }

  /** Returns the task's bytes, if it still holds them (so releasing twice is harmless). @param {Task} task */
  release(task) {
    const bytes = this.#byTask.get(task);
    if (bytes === undefined) return;
    this.#byTask.delete(task);
    this.#total -= bytes;
  }

  /**
   * Keeps the task's bytes reserved until `workerGone(slot)`: the task ended, but the worker it
   * ran on, now being terminated, may still use them.
   *
   * @param {Slot} slot
   * @param {Task} task
   */
  holdUntilGone(slot, task) {
    this.#heldBy.set(slot, task);
  }

  /** Whether the slot holds a task's bytes until it is gone. @param {Slot} slot */
  holds(slot) {
    return this.#heldBy.has(slot);
  }

  /** The slot's worker has exited: the bytes it held are free. @param {Slot} slot */
  workerGone(slot) {
    const task = this.#heldBy.get(slot);
    this.#heldBy.delete(slot);
    if (task) this.release(task);
  }
}
