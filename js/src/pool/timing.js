// @ts-check
// Time as the pool measures it, the longest a timer can wait, and when a timer decides.

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

/**
 * Runs `fn` once the messages already waiting for this thread have been delivered: how every
 * timer of the pool (startup, task timeout, silence) decides. A timer can fire late because
 * this thread was busy; a handshake, beat or result that arrived meanwhile came in time and
 * must count first. Node runs due timers before it delivers messages (the timers phase comes
 * before the poll phase), so there `fn` waits for setImmediate, which runs after the poll phase.
 * Browsers (Chromium, Firefox) already run a worker's message that arrived before a timer was
 * due ahead of that timer; there a MessageChannel round trip yields to the event loop once more.
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
