// @ts-check
// A helper of a sharded step (the 'psi.helper' op): a task on another worker of the pool that
// maps one part of a party's step with the party's key, delivered to it by the party's worker
// over the channel the page connected (messages.js). It says hello, waits for the key, imports
// it into a PsiHelper (which wipes the bytes it was given; this side wipes them again), maps the
// part it is given and posts the outputs back, then waits for their acknowledgment. Without a
// delivered key it refuses the part: a helper has no way to make a key, and the module's
// PsiHelper has no constructor that does.
//
// It never outlives its step: it stops between two chunks of its part, frees the key and
// returns as soon as its party's worker dismisses it or the page says the step ended (its end
// port; the page says so however the step ended, its party's worker gone or not).

import { Link, Waiter } from './messages.js';
import { itemCount, mapInChunks } from './parts.js';

/** Thrown between chunks when the step no longer needs the part (dismissed, or ended). */
const stopped = new Error('stopped');

/**
 * What a helper's task returns: whether it was given a part, and of how many items (its
 * outputs, or its part's error, went to its party's worker).
 *
 * @typedef {{ used: boolean, items: number }} HelperOutcome
 */

/**
 * @param {{ port: MessagePort, end: MessagePort }} input
 * @param {{ fromKey(role: string, key: Uint8Array): import('./parts.js').PartMapper & { free(): void } }} PsiHelper
 * @param {(done: number, total: number) => void} progress  the task's beat
 * @param {() => import('./coordinator.js').WorkerMemory} memory  what this worker holds
 * @returns {Promise<HelperOutcome>}
 */
export async function runHelper({ port, end }, PsiHelper, progress, memory) {
  if (!(port instanceof MessagePort)) throw new TypeError('a helper needs the port its party listens on');
  if (!(end instanceof MessagePort)) throw new TypeError('a helper needs the port its page ends its step on');
  /** @type {any[]} */
  const inbox = [];
  const waiter = new Waiter();
  /** Whether the page said the step ended. */
  let ended = false;
  const link = new Link(port, (message) => {
    inbox.push(message);
    waiter.wake();
  });
  const ending = new Link(end, (message) => {
    if (message?.type !== 'end') return;
    ended = true;
    waiter.wake();
  });
  /** Whether the step no longer needs this helper: dismissed, or over. */
  const unwanted = () => ended || inbox.some((m) => m?.type === 'dismiss');
  /** @type {(import('./parts.js').PartMapper & { free(): void }) | null} */
  let helper = null;
  const release = () => {
    helper?.free(); // the key is wiped as the engine drops it
    helper = null;
  };
  const beat = () => progress(0, 0);
  // Posts what settles this helper's part, then waits until its party's worker has it (an
  // 'ack'), or no longer wants it: so the task resolves only once nothing of it is awaited.
  const settle = async (/** @type {unknown} */ message, /** @type {Transferable[]} */ transfer = []) => {
    link.post(message, transfer);
    await waiter.until(() => unwanted() || inbox.some((m) => m?.type === 'ack'), Infinity, beat);
  };
  try {
    link.post({ type: 'hello' });
    for (;;) {
      // No deadline of its own: its party's worker answers a hello at once and splits within
      // `wait`, dismissing whom it does not use, and when that worker is gone the page ends it.
      await waiter.until(() => unwanted() || inbox.length > 0, Infinity, beat);
      if (unwanted()) return { used: false, items: 0 };
      const message = inbox.shift();
      if (message?.type === 'key') {
        const key = message.key;
        try {
          release();
          helper = PsiHelper.fromKey(String(message.role), key);
        } catch (error) {
          await settle({ type: 'failed', message: messageText(error), code: codeOf(error) });
          return { used: false, items: 0 };
        } finally {
          // The bytes arrived in a buffer of their own, moved here: wiped where they lie.
          if (key instanceof Uint8Array) key.fill(0);
        }
        link.post({ type: 'ready' });
        continue;
      }
      if (message?.type === 'part') {
        if (!helper) {
          const refused = Object.assign(new Error('a helper maps parts only with the key its party delivered, and none was'), { code: 'PSI_USAGE' });
          await settle({ type: 'failed', message: refused.message, code: 'PSI_INTERNAL' });
          throw refused;
        }
        const items = itemCount(message);
        let output;
        try {
          output = await mapInChunks(helper, message, (done, total) => {
            progress(done, total);
            link.post({ type: 'progress', done });
          }, () => (unwanted() ? stopped : null));
        } catch (error) {
          release();
          if (error === stopped) return { used: true, items: 0 };
          // Its party's step fails with it (the coordinator picks the lowest part's error).
          await settle({ type: 'failed', message: messageText(error), code: codeOf(error) });
          if (error instanceof WebAssembly.RuntimeError) throw error; // the instance is unusable
          return { used: true, items };
        }
        release(); // the key is not needed while the outputs cross
        await settle({ type: 'result', output, memory: memory() }, [output.buffer]);
        return { used: true, items };
      }
      // Anything else (an 'ack' of nothing, an unknown type) is ignored.
    }
  } finally {
    release();
    link.close();
    ending.close();
  }
}

/** @param {unknown} error */
const messageText = (error) => String(error instanceof Error ? error.message : error);

/** @param {unknown} error */
const codeOf = (error) => {
  const code = error !== null && typeof error === 'object' ? /** @type {{ code?: unknown }} */ (error).code : undefined;
  return typeof code === 'string' ? code : undefined;
};
