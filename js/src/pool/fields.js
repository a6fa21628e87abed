// @ts-check
// Fields of values nothing vouches for: what a `catch` caught (a throw can be any value, null
// included) and what arrived in a message. Each reads exactly what `value?.[key]` would, without
// assuming that `value` is an object, and so cannot itself throw on null. In pool/, whose
// messages and caught errors it was written for; engines/, psi/ and plan/ read theirs with it.

/**
 * `value[key]` when `value` is an object or a function, else undefined (as `value?.[key]`
 * reads it for null, undefined and the primitives).
 *
 * @param {unknown} value
 * @param {string} key
 * @returns {unknown}
 */
export function fieldOf(value, key) {
  if ((typeof value !== 'object' || value === null) && typeof value !== 'function') return undefined;
  return Reflect.get(value, key);
}

/**
 * The `message` of a thrown value (`error?.message`): a string for every Error, undefined for
 * most other throws.
 *
 * @param {unknown} error
 * @returns {unknown}
 */
export const messageOf = (error) => fieldOf(error, 'message');
