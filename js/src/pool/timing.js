// @ts-check
// Time as the pool measures it, and the longest a timer can wait.

/** @typedef {ReturnType<typeof setTimeout>} Timer  what setTimeout returns (a number in browsers) */

/** The current time in ms, monotonic: beats and the gaps between them are measured in it. */
export const now = () => globalThis.performance.now();

/** The longest delay a timer takes (2^31-1 ms, 24.8 days); setTimeout fires at once past it. */
export const MAX_DELAY = 0x7fffffff;

/**
 * `ms` itself, or Infinity when it is longer than a timer can wait: such a limit is no limit
 * (rather than a timer that fires at once).
 *
 * @param {number} ms
 */
export const bounded = (ms) => (ms > MAX_DELAY ? Infinity : ms);
