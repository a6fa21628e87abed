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

const isCount = (value) => Number.isSafeInteger(value) && value >= 0;
const isText = (value) => typeof value === 'string';

/**
 * The message `data` from a worker, checked against the protocol: returns it, or throws a
 * ProtocolError that says what is wrong with it.
 */
export function checkWorkerMessage(data) {
  if (data === null || typeof data !== 'object') {
    throw new ProtocolError(`worker sent ${describe(data)}, not a message object`);
  }
  const fail = (what) => {
    throw new ProtocolError(`worker sent a '${data.type}' message ${what}`);
  };
  switch (data.type) {
    case 'hello':
      if (!isCount(data.protocol)) fail('without a protocol version');
      if (!isCount(data.abi)) fail('without an ABI version');
      if (!isText(data.asset)) fail('without the name of its asset');
      return data;
    case 'startup-error':
      if (!isText(data.reason) || !isText(data.message)) fail('without a reason and a message');
      return data;
    case 'progress':
      if (!isCount(data.id)) fail('without a task id');
      if (!isCount(data.done) || !isCount(data.total)) fail('whose done/total are not counts');
      return data;
    case 'result':
      if (!isCount(data.id)) fail('without a task id');
      if (!('output' in data)) fail('without an output');
      return data;
    case 'error':
      if (!isCount(data.id)) fail('without a task id');
      if (data.error === null || typeof data.error !== 'object' || !isText(data.error.message)) {
        fail('without an error message');
      }
      if (typeof data.fatal !== 'boolean') fail('without saying whether it is fatal');
      return data;
    default:
      throw new ProtocolError(`worker sent a message of unknown type ${describe(data.type)}`);
  }
}

function describe(value) {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.slice(0, 40));
  return typeof value;
}
