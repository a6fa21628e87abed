// @ts-check
// The handshake's verdict: a starting worker's first message (already checked against the
// protocol) either is a `hello` this pool accepts, or says why the worker cannot serve it, as the
// StartupError that breaks the pool (supervision.js).

import { StartupError } from './errors.js';
import { PROTOCOL_VERSION } from './protocol.js';

/** @typedef {import('./protocol.js').WorkerMessage} WorkerMessage */
/** @typedef {import('./protocol.js').HelloMessage} HelloMessage */

/**
 * The `hello` in `message` if the worker named `name` may serve a pool that needs ABI version
 * `abi` (undefined: any), else the StartupError that refuses it: the worker could not load its
 * asset ('asset', naming its path) or failed while loading ('crash'); it sent something else
 * first, or speaks another protocol or ABI version ('version', naming both versions).
 *
 * @param {string} name
 * @param {WorkerMessage} message
 * @param {number | undefined} abi
 * @returns {HelloMessage | StartupError}
 */
export function acceptHandshake(name, message, abi) {
  if (message.type === 'startup-error') {
    const reason = message.reason === 'asset' ? 'asset' : 'crash';
    const where = message.path ? ` ${message.path}` : '';
    return new StartupError(`${name} could not load its asset${where}: ${message.message}`, reason, {
      path: message.path,
    });
  }
  if (message.type !== 'hello') {
    return new StartupError(`${name} sent '${message.type}' before its handshake`, 'version');
  }
  if (message.protocol !== PROTOCOL_VERSION) {
    return new StartupError(
      `${name} speaks protocol version ${message.protocol}; this pool speaks version ${PROTOCOL_VERSION}`,
      'version',
      { expected: PROTOCOL_VERSION, actual: message.protocol },
    );
  }
  if (abi !== undefined && message.abi !== abi) {
    return new StartupError(
      `${name} loaded ${message.asset} with ABI version ${message.abi}; this pool needs ABI version ${abi}`,
      'version',
      { expected: abi, actual: message.abi, asset: message.asset },
    );
  }
  return message;
}
