// The few assertions the scenarios need, in plain JS so the same scenarios run in Node and in a
// browser page.

export class AssertionError extends Error {}

export function ok(value, message) {
  if (!value) throw new AssertionError(message ?? `expected a truthy value, got ${value}`);
}

export function equal(actual, expected, message) {
  if (!Object.is(actual, expected)) {
    throw new AssertionError(`${message ?? 'values differ'}: expected ${show(expected)}, got ${show(actual)}`);
  }
}

export function sameBytes(actual, expected, message) {
  ok(ArrayBuffer.isView(actual), `${message ?? 'bytes'}: not a typed array but ${show(actual)}`);
  const a = new Uint8Array(actual.buffer, actual.byteOffset, actual.byteLength);
  const b = new Uint8Array(expected.buffer, expected.byteOffset, expected.byteLength);
  equal(a.length, b.length, `${message ?? 'bytes'}: length`);
  const at = a.findIndex((byte, i) => byte !== b[i]);
  equal(at, -1, `${message ?? 'bytes'}: first differing byte`);
}

/** Awaits `promise`, which must reject with an instance of `Class` whose message matches `pattern`. */
export async function rejects(promise, Class, pattern) {
  let error;
  try {
    const value = await promise;
    throw new AssertionError(`expected a ${Class.name}, but it resolved with ${show(value)}`);
  } catch (caught) {
    if (caught instanceof AssertionError) throw caught;
    error = caught;
  }
  if (!(error instanceof Class)) {
    throw new AssertionError(`expected a ${Class.name}, got ${error?.name}: ${error?.message}`);
  }
  if (pattern && !pattern.test(error.message)) {
    throw new AssertionError(`${Class.name} message ${show(error.message)} does not match ${pattern}`);
  }
  return error;
}

/** Polls `predicate` every few ms until it holds; fails after `timeout` ms (a bound, not a sleep). */
export async function until(predicate, what, timeout = 10_000) {
  const start = performance.now();
  while (!predicate()) {
    if (performance.now() - start > timeout) throw new AssertionError(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Keeps this thread busy, delivering nothing, until `predicate` holds; fails after `timeout` ms.
 * For scenarios about what a blocked page or process does once it is free again.
 */
export function blockUntil(predicate, what, timeout = 10_000) {
  const start = performance.now();
  while (!predicate()) {
    if (performance.now() - start > timeout) throw new AssertionError(`timed out (blocked) waiting for ${what}`);
  }
}

function show(value) {
  if (typeof value === 'string') return JSON.stringify(value);
  if (ArrayBuffer.isView(value)) return `${value.constructor.name}(${value.length})`;
  return String(value);
}
