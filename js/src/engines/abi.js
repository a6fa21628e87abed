// @ts-check
// The one version number of the exports this package drives, the same for the wasm module and
// the native addon (both bindings export lockstep-face's ABI_VERSION as `abiVersion()`). Every
// worker reports its engine's number in its handshake, and a pool refuses another; the PSI
// engine choice ('auto') refuses an addon of another number before it starts one.

/**
 * The ABI version of the engines this package speaks (crates/face/src/lib.rs, ABI_VERSION):
 * 7, one face under both bindings, PSI on the addon, steps in parts only, a step's and a
 * layout's options in one object.
 */
export const ABI_VERSION = 7;
