// @ts-check
// The package's caps and defaults for worker counts and waits, in one place: every module that
// sizes a pool, splits a PSI step or asks the addon for threads reads them here. At src/'s root
// because the pool, PSI and plans all read it; it reads the host through pool/platform.js only.
//
// The default worker count is one rule for every pool (new Pool, createPsiPool, createPlanPool)
// and for a plan run's native threads (runPlan), the rule the CLI follows
// (crates/shard/src/policy.rs, `ShardPolicy::from_env`): in Node, LOCKSTEP_WORKERS when set (a
// whole number 1..MAX_WORKERS; anything else is an error naming it), else the hardware's
// concurrency; in a browser, navigator.hardwareConcurrency. A count the caller gives wins.

import { availableParallelism, isNode } from './pool/platform.js';

/**
 * The most workers anything asks for: a plan run's native threads (the addon keeps a pool of
 * threads per count, crates/face/src/plan.rs MAX_WORKERS) and LOCKSTEP_WORKERS; the detected
 * concurrency is capped at it silently, as the CLI's policy caps it (DEFAULT_CAP).
 */
export const MAX_WORKERS = 256;

/**
 * The most workers an automatic count takes where many would cost more than they give: a PSI
 * step's shards with 'auto' (psi/shard/policy.js), and a plan pool's workers when neither the
 * caller nor LOCKSTEP_WORKERS names a count (each worker's runs start native threads of their own).
 */
export const MAX_AUTO_WORKERS = 4;

/** The environment variable holding a worker count for every default (Node), as the CLI reads it. */
export const WORKERS_ENV = 'LOCKSTEP_WORKERS';

/** How long, by default, a sharded step's party worker waits for its helpers to start before it splits (ms). */
export const SHARD_WAIT_MS = 5_000;

/**
 * A LOCKSTEP_WORKERS value read as the CLI reads it (`parse_workers`): unset or blank is
 * undefined; a decimal whole number 1..MAX_WORKERS (surrounding blanks and a leading `+` allowed)
 * is that count; anything else throws a RangeError in the CLI's words, naming the variable and
 * the value.
 *
 * @param {string | undefined} text
 * @returns {number | undefined}
 */
export function workersFromEnv(text) {
  const trimmed = text?.trim();
  if (trimmed === undefined || trimmed === '') return undefined;
  const digits = /^\+?(\d+)$/.exec(trimmed);
  const count = digits ? Number(digits[1]) : NaN;
  if (!(Number.isSafeInteger(count) && count >= 1)) {
    throw new RangeError(`${WORKERS_ENV} must be a positive whole number of workers, got ${JSON.stringify(trimmed)}`);
  }
  if (count > MAX_WORKERS) throw new RangeError(`${WORKERS_ENV} asks for ${count} workers, above the cap of ${MAX_WORKERS}`);
  return count;
}

/**
 * The worker count a pool, or a plan run's native threads, gets when the caller gives none:
 * LOCKSTEP_WORKERS in Node when set (read at each call; a bad value throws, see workersFromEnv),
 * else the hardware's concurrency (Node's availableParallelism(), a browser's
 * navigator.hardwareConcurrency) at most MAX_WORKERS. `capped`: a count from the hardware is at
 * most MAX_AUTO_WORKERS too (a count LOCKSTEP_WORKERS names is taken as it is).
 *
 * @param {{ capped?: boolean }} [how]
 * @returns {number}
 */
export function defaultWorkers({ capped = false } = {}) {
  const named = isNode ? workersFromEnv(process.env[WORKERS_ENV]) : undefined;
  if (named !== undefined) return named;
  return Math.min(availableParallelism(), capped ? MAX_AUTO_WORKERS : MAX_WORKERS);
}
