// @ts-check
// How many workers a sharded PSI step asks for (js/README.md, "Sharded steps"): the hardware's
// concurrency capped at MAX_AUTO_WORKERS (limits.js), one on macOS in a browser (Chromium's
// renderer crashes there with several busy wasm instances), never more than the pool's workers;
// a number of `shards` given by the caller overrides all but the pool's size. The count and the
// reason are reported with the step. `shardsOf` is the one check of a `shards` value.
//
// This is the package's and not an engine crate's: it reads the host (navigator, the pool), which
// no engine sees. It decides only how many workers share the work, never the bytes: every count
// gives the same messages.

import { MAX_AUTO_WORKERS } from '../../limits.js';
import { availableParallelism, isNode } from '../../pool/platform.js';

/**
 * A step's `shards`, how many workers it is split over: 'auto' (the policy below) or a whole
 * number >= 1.
 *
 * @typedef {number | 'auto'} Shards
 */

/**
 * What the policy reads of the host; `hostOf()` gives this environment's.
 *
 * @typedef {object} Host
 * @property {number} concurrency        navigator.hardwareConcurrency, or Node's availableParallelism
 * @property {boolean} browser           a browser (or a Web Worker), not Node
 * @property {string} [userAgent]        navigator.userAgent
 * @property {string} [platform]         navigator.platform
 * @property {string} [uaPlatform]       navigator.userAgentData?.platform (Chromium)
 */

/**
 * The decision: `workers` to ask for (helpers are `workers - 1`), the `shards` that were
 * `asked`, and why.
 *
 * @typedef {{ workers: number, asked: Shards, reason: string }} ShardChoice
 */

/**
 * `shards` checked: 'auto' for undefined, else 'auto' or a whole number >= 1; a TypeError naming
 * the option otherwise. The one check of the option, wherever it is given (createStarter,
 * createJoiner, a step's options, shardChoice).
 *
 * @param {unknown} shards
 * @returns {Shards}
 */
export function shardsOf(shards) {
  if (shards === undefined) return 'auto';
  if (shards !== 'auto' && !(Number.isSafeInteger(shards) && /** @type {number} */ (shards) >= 1)) {
    throw new TypeError(`shards must be 'auto' or a whole number >= 1, not ${String(shards)}`);
  }
  return /** @type {Shards} */ (shards);
}

/** This environment's host. @returns {Host} */
export function hostOf() {
  const nav = /** @type {any} */ (globalThis.navigator);
  return {
    concurrency: availableParallelism(),
    browser: !isNode,
    userAgent: typeof nav?.userAgent === 'string' ? nav.userAgent : undefined,
    platform: typeof nav?.platform === 'string' ? nav.platform : undefined,
    uaPlatform: typeof nav?.userAgentData?.platform === 'string' ? nav.userAgentData.platform : undefined,
  };
}

/**
 * Whether any of the browser's platform reports names a Mac: Chromium's userAgentData.platform
 * ("macOS"), navigator.platform ("MacIntel", also on Apple silicon) or the user agent
 * ("Macintosh; Intel Mac OS X 10_15_7", which Chrome, Safari and Firefox all send on a Mac). An
 * iPad asking for the desktop site also says "Macintosh": one worker there too, which is safe.
 *
 * @param {Host} host
 */
export function namesMac(host) {
  if (!host.browser) return false;
  const reports = [host.uaPlatform, host.platform, host.userAgent].filter((r) => typeof r === 'string');
  // An iPhone's "CPU iPhone OS 18_1 like Mac OS X" names iOS, not a Mac.
  return reports.some((report) =>
    /mac ?os|macintosh|macintel|macppc|mac68k|darwin/i.test(/** @type {string} */ (report).replace(/like mac os x/gi, '')),
  );
}

/**
 * The workers a step asks for.
 *
 * @param {Shards | undefined} asked  the step's `shards`: a whole number >= 1, or 'auto' (the default)
 * @param {number} poolWorkers        the pool's size
 * @param {Host} [host]
 * @returns {ShardChoice}
 */
export function shardChoice(asked, poolWorkers, host = hostOf()) {
  const wanted = shardsOf(asked);
  const pool = Math.max(1, poolWorkers);
  if (wanted !== 'auto') {
    const workers = Math.min(wanted, pool);
    const reason = workers < wanted ? `${wanted} asked, the pool has ${pool}` : `${wanted} asked`;
    return { workers, asked: wanted, reason };
  }
  if (namesMac(host)) {
    return { workers: 1, asked: 'auto', reason: 'macOS: one worker (a renderer crash there with several busy wasm instances)' };
  }
  const hardware = Math.max(1, host.concurrency);
  const workers = Math.min(hardware, MAX_AUTO_WORKERS, pool);
  const limits = [`hardware concurrency ${hardware}`];
  if (hardware > MAX_AUTO_WORKERS) limits.push(`capped at ${MAX_AUTO_WORKERS}`);
  if (pool < Math.min(hardware, MAX_AUTO_WORKERS)) limits.push(`the pool has ${pool}`);
  return { workers, asked: 'auto', reason: limits.join(', ') };
}
