// @ts-check
// How many workers a sharded PSI step asks for (js/README.md, "Sharded steps"): the hardware's
// concurrency capped at 4, one on macOS in a browser (Chromium's renderer crashes there with
// several busy wasm instances), never more than the pool's workers; a number given by the caller
// overrides all but the pool's size. The count and the reason are reported with the step.
//
// This is the package's and not an engine crate's: it reads the host (navigator, the pool), which
// no engine sees. It decides only how many workers share the work, never the bytes: every count
// gives the same messages.

import { availableParallelism, isNode } from '../platform.js';

/** The most workers 'auto' asks for. */
export const MAX_AUTO_WORKERS = 4;

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
 * The decision: `workers` to ask for (helpers are `workers - 1`), what was `asked`, and why.
 *
 * @typedef {{ workers: number, asked: number | 'auto', reason: string }} ShardChoice
 */

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
 * @param {number | 'auto' | undefined} asked  a whole number >= 1, or 'auto' (the default)
 * @param {number} poolWorkers                 the pool's size
 * @param {Host} [host]
 * @returns {ShardChoice}
 */
export function shardChoice(asked, poolWorkers, host = hostOf()) {
  const wanted = asked ?? 'auto';
  if (wanted !== 'auto' && !(Number.isSafeInteger(wanted) && wanted >= 1)) {
    throw new TypeError(`workers must be 'auto' or a whole number >= 1, not ${String(wanted)}`);
  }
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
