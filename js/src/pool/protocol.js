// @ts-check
// The messages between the pool and its workers, and their validation. Both sides import this
// file, so the shapes cannot drift apart.
//
// pool -> worker   { type: 'init', protocol, config }
//                  { type: 'task', id, op, input }
// worker -> pool   { type: 'hello', protocol, abi, asset }          once, after 'init'
//                  { type: 'startup-error', reason, message, path? } instead of 'hello'
//                  { type: 'progress', id, done, total }
//                  { type: 'result', id, output }
//                  { type: 'error', id, error: { name, message, code? }, fatal }
//
// A worker runs one task at a time; `id` is the pool's number for it.

import { ProtocolError } from './errors.js';

/** The version of the messages above. A worker of another version is refused at its handshake. */
export const PROTOCOL_VERSION = 1;

// Each message as the receiving side may rely on it once checked. Fields the check does not
// look at (a startup error's path, a task error's name and code) are `unknown`.
/** @typedef {{ type: 'init', protocol: number, config: unknown }} InitMessage */
/** @typedef {{ type: 'task', id: number, op: string, input: unknown }} TaskMessage */
/** @typedef {InitMessage | TaskMessage} PoolMessage  pool -> worker */
/** @typedef {{ type: 'hello', protocol: number, abi: number, asset: string }} HelloMessage */
/** @typedef {{ type: 'startup-error', reason: string, message: string, path?: unknown }} StartupErrorMessage */
/** @typedef {{ type: 'progress', id: number, done: number, total: number }} ProgressMessage */
/** @typedef {{ type: 'result', id: number, output: unknown }} ResultMessage */
/**
 * @typedef {{ type: 'error', id: number, error: { name?: unknown, message: string, code?: unknown },
 *             fatal: boolean }} ErrorMessage
 */
/**
 * @typedef {HelloMessage | StartupErrorMessage | ProgressMessage | ResultMessage | ErrorMessage} WorkerMessage
 *   worker -> pool
 */

/** Whether `value` is a whole number >= 0 (a version, a task id, a count). @param {unknown} value @returns {value is number} */
export const isCount = (value) => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
/** @param {unknown} value @returns {value is string} */
const isText = (value) => typeof value === 'string';

/**
 * The message `data` from a worker, checked against the protocol: returns it, or throws a
 * ProtocolError that says what is wrong with it.
 *
 * @param {unknown} data
 * @returns {WorkerMessage}
 */
export function checkWorkerMessage(data) {
  if (data === null || typeof data !== 'object') {
    throw new ProtocolError(`worker sent ${describe(data)}, not a message object`);
  }
  const fields = /** @type {{ readonly [field: string]: unknown }} */ (data);
  /** @param {string} what @returns {never} */
  const fail = (what) => {
    throw new ProtocolError(`worker sent a '${fields.type}' message ${what}`);
  };
  // Each case returns the message once its fields are checked: that check is what the cast
  // to the message's type stands for.
  switch (fields.type) {
    case 'hello':
      if (!isCount(fields.protocol)) fail('without a protocol version');
      if (!isCount(fields.abi)) fail('without an ABI version');
      if (!isText(fields.asset)) fail('without the name of its asset');
      return /** @type {HelloMessage} */ (data);
    case 'startup-error':
      if (!isText(fields.reason) || !isText(fields.message)) fail('without a reason and a message');
      return /** @type {StartupErrorMessage} */ (data);
    case 'progress':
      if (!isCount(fields.id)) fail('without a task id');
      if (!isCount(fields.done) || !isCount(fields.total)) fail('whose done/total are not counts');
      return /** @type {ProgressMessage} */ (data);
    case 'result':
      if (!isCount(fields.id)) fail('without a task id');
      if (!('output' in data)) fail('without an output');
      return /** @type {ResultMessage} */ (data);
    case 'error': {
      if (!isCount(fields.id)) fail('without a task id');
      const error = fields.error;
      if (error === null || typeof error !== 'object' || !('message' in error) || !isText(error.message)) {
        fail('without an error message');
      }
      if (typeof fields.fatal !== 'boolean') fail('without saying whether it is fatal');
      return /** @type {ErrorMessage} */ (data);
    }
    default:
      throw new ProtocolError(`worker sent a message of unknown type ${describe(fields.type)}`);
  }
}

/** @param {unknown} value */
function describe(value) {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 40));
  return typeof value;
}
