// @ts-check
// The page's side of a sharded step: it makes the channels and only connects them. The party's
// worker (the coordinator) gets one end of each helper channel and of a control channel; each
// helper task gets the other end of its channel once the coordinator says it runs. The page
// never posts on a helper channel and holds none of its ends while key material could be on it
// (the coordinator sends the key only in answer to a helper's hello, from the helper's worker).
// On the control channel the page hears 'started' and tells the coordinator which helper tasks
// rejected (a crash, a hang the pool caught, a full queue) or resolved: the coordinator decides
// what that means for the step (messages.js, coordinator.js).
//
// Each helper also gets an end port, whose other end the page keeps: once the coordinator's
// task settles, however it settled (its worker may be gone and unable to say anything), the
// page posts { type: 'end' } on it and the helper stops within a chunk, frees its key and its
// worker. Only that key-free signal ever travels on it, page to helper.

import { Link } from './messages.js';
import { fieldOf, messageOf } from '../../pool/fields.js';

/** @typedef {import('../../index.js').Pool} Pool */

/**
 * Runs `op` (a party step) with `helpers` helper tasks; resolves with what the coordinator
 * returned (`{ result, shards }`).
 *
 * @param {Pool} pool
 * @param {string} op
 * @param {Record<string, unknown>} input
 * @param {import('../../index.js').RunOptions<unknown>} options  the coordinator's
 * @param {{ helpers: number, wait: number }} how
 * @returns {Promise<unknown>}
 */
export async function runShardedStep(pool, op, input, options, { helpers, wait }) {
  if (helpers < 1) return pool.run(op, input, options);
  const control = new MessageChannel();
  const channels = Array.from({ length: helpers }, () => new MessageChannel());
  const ends = Array.from({ length: helpers }, () => new MessageChannel());
  let open = true;
  let submitted = false;
  /** @type {boolean[]} whether each helper's task has settled */
  const settled = ends.map(() => false);
  // The page's end of a helper's end port is closed only once its task settled: Firefox drops
  // what was posted on a port whose other end is closed before that end reaches its worker (a
  // helper task still queued when the step ended), where Chromium and Node deliver it.
  const ended = (/** @type {number} */ i) => {
    settled[i] = true;
    if (!open) ends[i].port1.close();
  };
  const link = new Link(control.port1, (message) => {
    if (fieldOf(message, 'type') !== 'started' || submitted) return;
    submitted = true;
    channels.forEach((channel, i) => {
      const task = pool.run('psi.helper', { port: channel.port2, end: ends[i].port2 }, {
        owned: true,
        validate: (output) => {
          if (typeof fieldOf(output, 'used') !== 'boolean') throw new TypeError('a helper returns { used, items }');
        },
      });
      task.then(
        // It resolves only once its part's outputs were acknowledged, or it was dismissed: if
        // the coordinator still awaits them, they will never come (coordinator.js).
        () => {
          ended(i);
          if (open) link.post({ type: 'helper-ended', index: i + 1 });
        },
        (/** @type {unknown} */ error) => {
          // Never posted (a full queue, a closed pool), or already gone with its worker.
          channel.port2.close();
          ends[i].port2.close();
          ended(i);
          if (open) link.post({ type: 'helper-failed', index: i + 1, message: `${fieldOf(error, 'name') ?? 'Error'}: ${messageOf(error)}` });
        },
      );
    });
  });
  try {
    return await pool.run(op, { ...input, shard: { control: control.port2, helpers: channels.map((c) => c.port1), wait } }, options);
  } finally {
    open = false;
    link.close();
    // The step is over, whatever ended it: every helper stops. A helper task still queued
    // finds the message waiting on its port when it starts, and returns at once.
    ends.forEach((end, i) => {
      end.port1.postMessage({ type: 'end' });
      if (settled[i] || !submitted) end.port1.close();
    });
    // Helper channels never submitted (the coordinator failed before it ran): nothing to wait for.
    if (!submitted) for (const channel of [...channels, ...ends]) channel.port2.close();
  }
}
