// node:test's `test`, each test bounded on its own: a test that hangs (a worker that never answers,
// a page that never loads) fails after TEST_TIMEOUT ms under its own name, and the file goes on.
// npm test's own --test-timeout bounds a whole file, far above this (package.json); a bound on the
// sum of all tests would trip on a slow host with no test at fault. The slowest test here takes
// about 20 s (a sharded round at 1-4 workers in Chromium); a test that needs longer says so in its
// options, which win. LOCKSTEP_TEST_TIMEOUT (ms) overrides the default (suite-bounds.test.js).
import { test as nodeTest } from 'node:test';

export { after, afterEach, before, beforeEach, describe, it } from 'node:test';

/** The default bound of one test, ms. */
export const TEST_TIMEOUT = Number(process.env.LOCKSTEP_TEST_TIMEOUT ?? 180_000);

/**
 * node:test's `test(name, [options], fn)` with `timeout` defaulting to TEST_TIMEOUT.
 *
 * @param {string} name
 * @param {import('node:test').TestOptions | import('node:test').TestFn} [options]
 * @param {import('node:test').TestFn} [fn]
 */
export function test(name, options, fn) {
  if (typeof options === 'function') return nodeTest(name, { timeout: TEST_TIMEOUT }, options);
  return nodeTest(name, { timeout: TEST_TIMEOUT, ...options }, fn);
}
