// @ts-check
// A helper of a sharded step (the 'psi.helper' op): a task on another worker of the pool that
// maps one part of a party's step with the party's key, delivered to it by the party's worker
// over the channel the page connected (messages.js). It says hello, waits for the key (at most
// `wait` ms), imports it into a PsiHelper (which wipes the bytes it was given), maps the part it
// is given and posts the outputs back. Without a delivered key it refuses the part: a helper has
// no way to make a key, and the module's PsiHelper has no constructor that does.

import { BEAT_MS, Link, Waiter } from './messages.js';
import { itemCount, mapInChunks } from './parts.js';

/** Thrown between chunks when the party dismissed the helper mid-part (its step failed). */
const dismissed = new Error('dismissed');

/**
 * What a helper's task returns: whether it was given a part, and of how many items (its
 * outputs, or its part's error, went to its party's worker).
 *
 * @typedef {{ used: boolean, items: number }} HelperOutcome
 */

/**
 * @param {{ port: MessagePort, wait: number }} input
 * @param {{ fromKey(role: string, key: Uint8Array): import('./parts.js').PartMapper & { free(): void } }} PsiHelper
 * @param {(done: number, total: number) => void} progress  the task's beat
 * @param {() => import('./coordinator.js').WorkerMemory} memory  what this worker holds
 * @returns {Promise<HelperOutcome>}
 */
export async function runHelper({ port, wait }, PsiHelper, progress, memory) {
  if (!(port instanceof MessagePort)) throw new TypeError('a helper needs the port its party listens on');
  /** @type {any[]} */
  const inbox = [];
  const waiter = new Waiter();
  const link = new Link(port, (message) => {
    inbox.push(message);
    waiter.wake();
  });
  /** @type {(import('./parts.js').PartMapper & { free(): void }) | null} */
  let helper = null;
  const beat = () => progress(0, 0);
  try {
    link.post({ type: 'hello' });
    for (;;) {
      // Before the part: at most `wait` ms (and a margin) for each message. The coordinator
      // answers a hello at once and splits within `wait` of sending the key, so a longer silence
      // means it is gone (its port's end gives no sign of that), and the helper frees its worker.
      if (!(await waiter.until(() => inbox.length > 0, wait + 10 * BEAT_MS, beat))) {
        return { used: false, items: 0 };
      }
      const message = inbox.shift();
      if (message?.type === 'dismiss') return { used: false, items: 0 };
      if (message?.type === 'key') {
        try {
          helper?.free();
          helper = PsiHelper.fromKey(String(message.role), message.key);
        } catch (error) {
          link.post({ type: 'failed', message: messageText(error), code: codeOf(error) });
          return { used: false, items: 0 };
        } finally {
          if (message.key instanceof Uint8Array) message.key.fill(0);
        }
        link.post({ type: 'ready' });
        continue;
      }
      if (message?.type === 'part') {
        if (!helper) {
          const refused = Object.assign(new Error('a helper maps parts only with the key its party delivered, and none was'), { code: 'PSI_USAGE' });
          link.post({ type: 'failed', message: refused.message, code: 'PSI_INTERNAL' });
          throw refused;
        }
        const items = itemCount(message);
        let output;
        try {
          output = await mapInChunks(helper, message, (done, total) => {
            progress(done, total);
            link.post({ type: 'progress', done });
          }, () => (inbox.some((m) => m?.type === 'dismiss') ? dismissed : null));
        } catch (error) {
          if (error === dismissed) return { used: true, items: 0 };
          // Its party's step fails with it (the coordinator picks the lowest part's error).
          link.post({ type: 'failed', message: messageText(error), code: codeOf(error) });
          if (error instanceof WebAssembly.RuntimeError) throw error; // the instance is unusable
          return { used: true, items };
        }
        link.post({ type: 'result', output, memory: memory() }, [output.buffer]);
        return { used: true, items };
      }
    }
  } finally {
    helper?.free();
    link.close();
  }
}

/** @param {unknown} error */
const messageText = (error) => String(error instanceof Error ? error.message : error);

/** @param {unknown} error */
const codeOf = (error) => {
  const code = error !== null && typeof error === 'object' ? /** @type {{ code?: unknown }} */ (error).code : undefined;
  return typeof code === 'string' ? code : undefined;
};
