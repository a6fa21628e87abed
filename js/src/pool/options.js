// @ts-check
// The pool's options and each run's, checked once, with their defaults filled in. A bad pool
// option throws (TypeError / RangeError: a programming error, seen at construction); a bad run
// option is thrown here for `run` to reject with, since `run` never throws.

import { AbortError, InputError } from './errors.js';
import { messageOf } from './fields.js';
import { defaultWorkers } from '../limits.js';
import { spawnWorker } from './platform.js';
import { inputBytes } from './snapshot.js';
import { defaultReservation } from './reservations.js';
import { SILENCE_DEFAULTS } from './silence.js';
import { bounded } from './timing.js';

/** @typedef {import('../index.js').PoolOptions} PoolOptions */
/** @typedef {import('../index.js').RunOptions} RunOptions */
/** @typedef {import('../index.js').Progress} Progress */
/** @typedef {import('./silence.js').SilenceSettings} SilenceSettings */

/**
 * @typedef {object} PoolSettings  a pool's options, checked, defaults filled in
 * @property {URL | string} worker
 * @property {number} workers          at most this many live workers
 * @property {number | undefined} abi  the ABI version a worker must report (undefined: any)
 * @property {unknown} config          sent to each worker's `load`
 * @property {string} name
 * @property {number} startupTimeout   ms; Infinity for none (as every limit below)
 * @property {number} taskTimeout
 * @property {number} maxQueue
 * @property {number} memoryBudget     bytes
 * @property {SilenceSettings} silence
 * @property {NonNullable<PoolOptions['spawn']>} spawn
 */

/**
 * @typedef {object} RunSpec  a run's options, checked, defaults filled in
 * @property {AbortSignal | undefined} signal
 * @property {number | false | { atLeast: number } | undefined} silence  the task's own silence limit, or a floor
 *   under the learnt one, if any
 * @property {number} timeout   ms once posted; Infinity for none
 * @property {number} reserve   bytes
 * @property {boolean} owned    whether the input's buffers are the caller's to hand over
 * @property {((progress: Progress) => void) | undefined} onProgress
 * @property {((output: unknown) => void) | undefined} validate
 * @property {import('./affinity.js').Affinity | undefined} affinity
 */

/**
 * `value` if it is a whole number in range (or Infinity where allowed), `fallback` if it is
 * undefined; otherwise throws a RangeError naming the option.
 *
 * @param {string} name
 * @param {number | undefined} value
 * @param {number} fallback
 * @param {{ zero?: boolean, infinite?: boolean }} [allowed]  zero: 0 is allowed; infinite: Infinity is
 */
function count(name, value, fallback, { zero = false, infinite = false } = {}) {
  if (value === undefined) return fallback;
  const ok =
    (infinite && value === Infinity) || (Number.isSafeInteger(value) && (zero ? value >= 0 : value > 0));
  if (!ok) {
    const range = zero ? 'a whole number >= 0' : 'a whole number >= 1';
    throw new RangeError(`Pool: options.${name} must be ${range}${infinite ? ' or Infinity' : ''}, not ${value}`);
  }
  return value;
}

/**
 * The pool's settings from the `options` given to `new Pool`. Throws TypeError for a missing or
 * mistyped option and RangeError for one out of range, naming it. Timeouts past what a timer
 * can wait are Infinity.
 *
 * @param {PoolOptions} options
 * @returns {PoolSettings}
 */
export function parsePoolOptions(options) {
  if (options === null || typeof options !== 'object') {
    throw new TypeError('Pool: options must be an object with at least { worker }');
  }
  const { worker } = options;
  if (!(worker instanceof URL) && typeof worker !== 'string') {
    throw new TypeError('Pool: options.worker must be the URL of a worker module');
  }
  // An option given as undefined takes its default, as the pool's other options do.
  const given = options.silence ?? {};
  const silence = {
    initial: count('silence.initial', given.initial, SILENCE_DEFAULTS.initial, { infinite: true }),
    factor: given.factor === undefined ? SILENCE_DEFAULTS.factor : given.factor,
    min: count('silence.min', given.min, SILENCE_DEFAULTS.min),
    window: count('silence.window', given.window, SILENCE_DEFAULTS.window),
  };
  if (!(silence.factor >= 1)) throw new RangeError('Pool: options.silence.factor must be >= 1');
  if (options.abi !== undefined) count('abi', options.abi, 0, { zero: true });
  if (options.spawn !== undefined && typeof options.spawn !== 'function') {
    throw new TypeError('Pool: options.spawn must be a function (url, { name }) -> worker handle');
  }
  return {
    // The default is read only when none is given: a bad LOCKSTEP_WORKERS cannot fail a pool
    // whose caller named its count.
    workers: options.workers === undefined ? defaultWorkers() : count('workers', options.workers, 1),
    worker,
    abi: options.abi,
    config: options.config,
    name: options.name ?? 'lockstep',
    startupTimeout: bounded(count('startupTimeout', options.startupTimeout, 30_000, { infinite: true })),
    taskTimeout: bounded(count('taskTimeout', options.taskTimeout, Infinity, { infinite: true })),
    maxQueue: count('maxQueue', options.maxQueue, Infinity, { zero: true, infinite: true }),
    memoryBudget: count('memoryBudget', options.memoryBudget, Infinity, { zero: true, infinite: true }),
    silence,
    spawn: options.spawn ?? spawnWorker,
  };
}

/**
 * A run's spec from its `options` and `input`, for a pool whose default task timeout is
 * `taskTimeout`. Throws what `run` rejects with: AbortError for a signal already aborted,
 * TypeError for a signal that is not one, RangeError for a silence, timeout or reservation out
 * of range. The default reservation is computed from the input before anything is copied; a
 * throw while counting its bytes (a getter, a proxy, a structure too deep) is an InputError
 * with that throw as its cause.
 *
 * @param {RunOptions} options
 * @param {unknown} input
 * @param {number} taskTimeout
 * @returns {RunSpec}
 */
export function parseRunOptions(options, input, taskTimeout) {
  const { signal } = options;
  if (signal?.aborted) {
    throw new AbortError('run: the signal was already aborted', { cause: signal.reason });
  }
  if (signal !== undefined && typeof signal?.addEventListener !== 'function') {
    throw new TypeError('run: signal must be an AbortSignal');
  }
  const { silence } = options;
  const ms = (/** @type {unknown} */ v) => v === Infinity || (Number.isSafeInteger(v) && /** @type {number} */ (v) > 0);
  const floor = silence !== null && typeof silence === 'object' ? /** @type {{ atLeast?: unknown }} */ (silence).atLeast : undefined;
  if (!(silence === undefined || silence === false || ms(silence) || (typeof silence === 'object' && silence !== null && ms(floor)))) {
    throw new RangeError(`run: silence must be false, a whole number of ms >= 1 or { atLeast: ms }, not ${JSON.stringify(silence) ?? silence}`);
  }
  const timeout = runTimeout(options.timeout, taskTimeout);
  const reserve = options.reserve ?? defaultReservation(measured(input));
  if (!(Number.isSafeInteger(reserve) && reserve >= 0)) {
    throw new RangeError(`run: reserve must be a whole number of bytes, not ${reserve}`);
  }
  return {
    signal,
    silence,
    timeout,
    reserve,
    owned: Boolean(options.owned),
    onProgress: options.onProgress,
    validate: options.validate,
    affinity: /** @type {import('./affinity.js').Affinity | undefined} */ (options.affinity),
  };
}

/**
 * The bytes `input` holds (inputBytes), or the InputError for a throw while counting them.
 *
 * @param {unknown} input
 */
function measured(input) {
  try {
    return inputBytes(input);
  } catch (error) {
    throw new InputError(`run: the input cannot be measured: ${messageOf(error) ?? String(error)}`, { cause: error });
  }
}

/**
 * A run's timeout: `value` if given (past what a timer can wait: Infinity), else `fallback`.
 *
 * @param {number | undefined} value
 * @param {number} fallback
 */
function runTimeout(value, fallback) {
  if (value === undefined) return fallback;
  if (value === Infinity || (Number.isSafeInteger(value) && value > 0)) return bounded(value);
  throw new RangeError(`run: timeout must be a whole number of ms >= 1 or Infinity, not ${value}`);
}
