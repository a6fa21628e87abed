// @ts-check
// Hang detection's measure: how long a running task may go without a beat (its start, then each
// progress report) before its worker is taken for hung. The limit is learnt per op from the
// gaps measured between beats, per unit of the work each beat reported (the rise of `done`),
// and scaled to the work the op does between two beats: so a small task (a warm-up) does not
// cut a large one short, a slow op is not cut short, and a fast one is not waited on for long.

import { bounded } from './timing.js';

/** @typedef {Required<import('../index.js').SilenceOptions>} SilenceSettings */

/** How the silence limit is derived when not told otherwise (see `SilenceMeter#limit`). */
export const SILENCE_DEFAULTS = Object.freeze({ initial: 30_000, factor: 10, min: 2_000, window: 32 });

/**
 * One measured beat: it came `perUnit` ms per unit of work after the one before, for `work`
 * units (its rise of `done`), and did not end its task's work (done < total), so it is a whole
 * beat: the op's step, how much work the op does between beats, is read from such beats.
 *
 * @typedef {{ perUnit: number, work: number }} Beat
 */

/** The recent whole beats, per op, and the silence limit they give. */
export class SilenceMeter {
  #settings;
  /** @type {Map<string, Beat[]>} op -> its last `window` whole beats */
  #beats = new Map();

  /** @param {SilenceSettings} settings */
  constructor(settings) {
    this.#settings = settings;
  }

  /**
   * How long a running task of `op` may go without a beat: `override` if given (false: no
   * limit); else, once whole beats of this op have been measured, `factor` x its rate (the
   * longest time per unit of work of its last `window` whole beats) x its step (the most work
   * one of them did), at least `min`; before that, `initial`. A limit longer than a timer can
   * wait is Infinity.
   *
   * With `{ atLeast }`, the limit derived so but never below `atLeast` (a task that says its
   * unmeasured phases may take that long).
   *
   * @param {string} op
   * @param {number | false | { atLeast: number }} [override]
   * @returns {number}
   */
  limit(op, override) {
    if (override === false) return Infinity;
    if (typeof override === 'object') return Math.max(this.limit(op), bounded(override.atLeast));
    if (override !== undefined) return bounded(override);
    const { initial, factor, min } = this.#settings;
    const beats = this.#beats.get(op);
    if (!beats || beats.length === 0) return bounded(initial);
    const rate = Math.max(...beats.map((beat) => beat.perUnit));
    const step = Math.max(...beats.map((beat) => beat.work));
    return bounded(Math.max(min, Math.ceil(factor * rate * step)));
  }

  /**
   * Records a beat of a task of `op` that came `ms` after the task's previous beat that did
   * work (or its start) and did `work` units (the rise of `done`). Only a whole beat (`partial`:
   * the task's work went on after it) is learnt: a task's last beat may do less than a step,
   * and says nothing of the op's. A beat without work teaches nothing.
   *
   * @param {string} op
   * @param {number} ms
   * @param {number} [work]
   * @param {boolean} [partial]
   */
  record(op, ms, work = 1, partial = true) {
    if (!(work > 0) || !partial) return;
    let beats = this.#beats.get(op);
    if (!beats) this.#beats.set(op, (beats = []));
    beats.push({ perUnit: ms / work, work });
    if (beats.length > this.#settings.window) beats.shift();
  }
}
