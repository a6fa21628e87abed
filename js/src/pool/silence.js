// @ts-check
// Hang detection's measure: how long a running task may go without a beat (its start, then each
// progress report) before its worker is taken for hung. The limit is learnt per op from the gaps
// measured between beats, so a slow op is not cut short and a fast one is not waited on for long.

import { bounded } from './timing.js';

/** @typedef {Required<import('../index.js').SilenceOptions>} SilenceSettings */

/** How the silence limit is derived when not told otherwise (see `SilenceMeter#limit`). */
export const SILENCE_DEFAULTS = Object.freeze({ initial: 30_000, factor: 10, min: 2_000, window: 32 });

/** The recent gaps between beats, per op, and the silence limit they give. */
export class SilenceMeter {
  #settings;
  /** @type {Map<string, number[]>} op -> its last `window` gaps, in ms */
  #gaps = new Map();

  /** @param {SilenceSettings} settings */
  constructor(settings) {
    this.#settings = settings;
  }

  /**
   * How long a running task of `op` may go without a beat: `override` if given (false: no
   * limit); else, once tasks of this op have been measured, `factor` times the longest of the
   * last `window` gaps seen between their beats, at least `min`; before that, `initial`. A limit
   * longer than a timer can wait is Infinity.
   *
   * @param {string} op
   * @param {number | false} [override]
   */
  limit(op, override) {
    if (override === false) return Infinity;
    if (override !== undefined) return bounded(override);
    const { initial, factor, min } = this.#settings;
    const gaps = this.#gaps.get(op);
    if (!gaps || gaps.length === 0) return bounded(initial);
    return bounded(Math.max(min, Math.ceil(factor * Math.max(...gaps))));
  }

  /** Records a gap of `ms` between two beats of a task of `op`. @param {string} op @param {number} ms */
  record(op, ms) {
    let gaps = this.#gaps.get(op);
    if (!gaps) this.#gaps.set(op, (gaps = []));
    gaps.push(ms);
    if (gaps.length > this.#settings.window) gaps.shift();
  }
}

/**
 * Runs `fn` once the messages already waiting for this thread have been delivered. A silence
 * timer can fire late because this thread was busy; the beats that arrived meanwhile must count
 * before a worker is taken for hung. (Node: setImmediate runs after the poll phase, which
 * delivers them; elsewhere a MessageChannel round trip yields to the event loop.)
 *
 * @type {(fn: () => void) => void}
 */
export const afterPendingMessages =
  typeof globalThis.setImmediate === 'function'
    ? (fn) => globalThis.setImmediate(fn)
    : (fn) => {
        const { port1, port2 } = new MessageChannel();
        port1.onmessage = () => {
          port1.close();
          fn();
        };
        port2.postMessage(null);
      };
