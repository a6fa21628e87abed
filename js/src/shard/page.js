// @ts-check
// The page's side of a sharded step: it makes the channels and only connects them. The party's
// worker (the coordinator) gets one end of each helper channel and of a control channel; each
// helper task gets the other end of its channel once the coordinator says it runs. The page
// never posts on a helper channel and holds none of its ends while key material could be on it
// (the coordinator sends the key only in answer to a helper's hello, from the helper's worker).
// On the control channel the page hears 'started' and tells the coordinator which helper tasks
// rejected (a crash, a hang the pool caught, a full queue): the coordinator decides what that
// means for the step (messages.js, coordinator.js).

import { Link } from './messages.js';
import { fieldOf, messageOf } from '../fields.js';

/** @typedef {import('../index.js').Pool} Pool */

/**
 * Runs `op` (a party step) with `helpers` helper tasks; resolves with what the coordinator
 * returned (`{ result, shards }`).
 *
 * @param {Pool} pool
 * @param {string} op
 * @param {Record<string, unknown>} input
 * @param {import('../index.js').RunOptions<unknown>} options  the coordinator's
 * @param {{ helpers: number, wait: number }} how
 * @returns {Promise<unknown>}
 */
export async function runShardedStep(pool, op, input, options, { helpers, wait }) {
  if (helpers < 1) return pool.run(op, input, options);
  const control = new MessageChannel();
  const channels = Array.from({ length: helpers }, () => new MessageChannel());
  let open = true;
  let submitted = false;
  const link = new Link(control.port1, (message) => {
    if (fieldOf(message, 'type') !== 'started' || submitted) return;
    submitted = true;
    channels.forEach((channel, i) => {
      const task = pool.run('psi.helper', { port: channel.port2, wait }, {
        owned: true,
        validate: (output) => {
          if (typeof fieldOf(output, 'used') !== 'boolean') throw new TypeError('a helper returns { used, items }');
        },
      });
      task.catch((/** @type {unknown} */ error) => {
        channel.port2.close(); // never posted (a full queue, a closed pool), or already gone with its worker
        if (open) link.post({ type: 'helper-failed', index: i + 1, message: `${fieldOf(error, 'name') ?? 'Error'}: ${messageOf(error)}` });
      });
    });
  });
  try {
    return await pool.run(op, { ...input, shard: { control: control.port2, helpers: channels.map((c) => c.port1), wait } }, options);
  } finally {
    open = false;
    link.close();
    // Helper channels never submitted (the coordinator failed before it ran): nothing to wait for.
    if (!submitted) for (const channel of channels) channel.port2.close();
  }
}
