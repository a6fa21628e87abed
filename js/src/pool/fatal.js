// @ts-check
// Which errors an op can throw that leave its worker unusable, so the pool must replace it
// (worker.js reports them as `fatal`): those that may have unwound through a wasm instance's
// code and left the instance in a state nothing can vouch for.

import { fieldOf, messageOf } from './fields.js';

/**
 * Whether `error`, thrown by an op, ends its worker:
 *
 * - a WebAssembly.RuntimeError: a trap (a Rust panic, an out-of-bounds access in wasm);
 * - a stack overflow: V8's and JavaScriptCore's RangeError "Maximum call stack size exceeded",
 *   SpiderMonkey's InternalError "too much recursion". One that unwound wasm frames left the
 *   module's own stack pointer (wasm-bindgen's shadow stack, in linear memory) where the
 *   overflow found it, and the error cannot tell whether it did, so every one counts.
 *
 * Any other error (a RangeError of the op's own, say) fails its task alone.
 *
 * @param {unknown} error
 */
export function endsWorker(error) {
  if (error instanceof WebAssembly.RuntimeError) return true;
  const name = fieldOf(error, 'name');
  const message = String(messageOf(error) ?? '');
  if (name === 'RangeError' && /^Maximum call stack size exceeded\.?$/.test(message)) return true;
  return name === 'InternalError' && /^too much recursion$/.test(message);
}
