// @ts-check
// The tasks waiting for a worker, first in first out, at most `maxQueue` of them. A task given to
// a worker that is starting is not waiting (it is BOUND), so with `maxQueue: 0` a task runs now,
// on an idle or starting worker, or is refused.

import { QueueFullError } from './errors.js';
import { TaskState } from './tasks.js';

/** @typedef {import('./tasks.js').Task} Task */

/** A FIFO of QUEUED tasks that refuses to grow past `max`. */
export class TaskQueue {
  /** @type {Task[]} */
  #tasks = [];
  #max;

  /** @param {number} max  maxQueue: a whole number >= 0, or Infinity */
  constructor(max) {
    this.#max = max;
  }

  /** How many tasks wait. */
  get length() {
    return this.#tasks.length;
  }

  /**
   * Appends `task` (now QUEUED) and returns true, or returns false, leaving it untouched, when
   * the queue already holds `max` tasks.
   *
   * @param {Task} task
   */
  offer(task) {
    if (this.#tasks.length >= this.#max) return false;
    task.state = TaskState.QUEUED;
    this.#tasks.push(task);
    return true;
  }

  /** The error a task refused by `offer` rejects with. @param {string} op */
  refusal(op) {
    return new QueueFullError(
      this.#max === 0
        ? `run: no worker is free for '${op}' and maxQueue is 0`
        : `run: the queue already holds maxQueue = ${this.#max} tasks`,
    );
  }

  /**
   * The task that has waited longest of those `fits` accepts, taken off the queue, or
   * undefined if none waits.
   *
   * @param {(task: Task) => boolean} fits
   */
  take(fits) {
    const at = this.#tasks.findIndex(fits);
    return at === -1 ? undefined : this.#tasks.splice(at, 1)[0];
  }

  /**
   * Every waiting task `matches` accepts, in order, taken off the queue.
   *
   * @param {(task: Task) => boolean} matches
   */
  takeAll(matches) {
    const taken = this.#tasks.filter(matches);
    this.#tasks = this.#tasks.filter((task) => !matches(task));
    return taken;
  }

  /** Takes `task` off the queue, wherever it is (it was aborted). @param {Task} task */
  remove(task) {
    const at = this.#tasks.indexOf(task);
    if (at !== -1) this.#tasks.splice(at, 1);
  }

  /** Every waiting task, in order, taken off the queue. */
  drain() {
    return this.#tasks.splice(0);
  }
}
