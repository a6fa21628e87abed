// @ts-check
// What the workers of a sharded PSI step say to each other, and to the page (shard/README in
// js/README.md, "Sharded steps"). A step's first worker (the coordinator, where the party and its
// key live) and each helper talk over a MessageChannel the page made and only connected; the
// coordinator and the page talk over another one, and the page and each helper over a third
// (the helper's end port), neither of which ever carries key material.
//
//   helper -> coordinator   { type: 'hello' }                 the helper's task started
//   coordinator -> helper   { type: 'key', role, key }        answer to a hello, in time; `key` is
//                                                             a fresh 32-byte ArrayBuffer's view,
//                                                             transferred (moved, never serialized)
//                           { type: 'dismiss' }               not needed (late, or the run ended)
//   helper -> coordinator   { type: 'ready' }                 the key is imported (and its bytes wiped)
//   coordinator -> helper   { type: 'part', kind, first, values, ends | elements }
//   helper -> coordinator   { type: 'progress', done }        of its part: 0 <= done <= its items
//                           { type: 'result', output, memory }  its part's outputs, packed (33 bytes
//                                                             an item, exactly); its worker's bytes
//                           { type: 'failed', message, code } before or during its part
//   coordinator -> helper   { type: 'ack' }                   a 'result' or 'failed' arrived: go
//   coordinator -> page     { type: 'started' }               submit the helpers now
//   page -> coordinator     { type: 'helper-failed', index, message }   its task rejected
//                           { type: 'helper-ended', index }   its task resolved
//   page -> helper          { type: 'end' }                   (end port) the step ended, any way
//
// A helper's task is only submitted once the coordinator has begun its step ('started': its
// input read, more than one item to share), so a helper never occupies a worker waiting for a
// coordinator that waits for that worker; the coordinator waits for helpers at most `wait` ms
// (the party's `shardWait`, by default limits.js SHARD_WAIT_MS) before the split, and beats
// meanwhile.
//
// A helper stops (between chunks), frees its key and returns at the first of: a 'dismiss', the
// page's 'end', or the 'ack' of its part. The page sends 'end' once the coordinator's task has
// settled, whatever ended it (a result, an error, an abort, a timeout, the silence limit, a
// crash, a forced close), so a helper never outlives its step by more than a chunk, even when
// the coordinator's worker is gone and can say nothing. Because a helper resolves only after
// the 'ack' (or once the step is over), a helper task that resolves while its part is still
// awaited has ended without it: the page's 'helper-ended' is then a failure of the step.

/** Packed elements are 33 bytes each (a compressed P-256 point, lockstep_psi::ELEMENT_LEN). */
export const ELEMENT_LEN = 33;

/** How often a worker that waits beats (the pool's silence limit must not take it for hung). */
export const BEAT_MS = 100;

/**
 * Resolves once `ready()` holds (checked now, on every `wake()` and every BEAT_MS), or after
 * `ms` (Infinity: no deadline), calling `beat` every BEAT_MS meanwhile: a waiting worker still
 * beats, so the pool's silence limit does not take it for hung.
 */
export class Waiter {
  /** @type {(() => void) | null} */
  #check = null;

  /** Rechecks the condition being waited for (a message came). */
  wake() {
    this.#check?.();
  }

  /**
   * @param {() => boolean} ready
   * @param {number} ms
   * @param {() => void} beat
   * @returns {Promise<boolean>} whether `ready()` held (false: the deadline passed)
   */
  until(ready, ms, beat) {
    return new Promise((resolve) => {
      const deadline = performance.now() + ms;
      /** @type {ReturnType<typeof setTimeout> | undefined} */
      let timer;
      const finish = (/** @type {boolean} */ held) => {
        clearTimeout(timer);
        this.#check = null;
        resolve(held);
      };
      this.#check = () => {
        if (ready()) finish(true);
      };
      const tick = () => {
        if (ready()) return finish(true);
        if (performance.now() >= deadline) return finish(false);
        beat();
        timer = setTimeout(tick, Math.min(BEAT_MS, Math.max(0, deadline - performance.now())));
      };
      if (ready()) return finish(true);
      timer = setTimeout(tick, Math.min(BEAT_MS, ms));
    });
  }
}

/** One end of a shard channel: every message goes to `onMessage`, in order, from the start. */
export class Link {
  /** @type {((message: any) => void) | null} */
  #onMessage;

  /** @param {MessagePort} port @param {(message: any) => void} onMessage */
  constructor(port, onMessage) {
    this.port = port;
    this.#onMessage = onMessage;
    port.addEventListener('message', (event) => this.#onMessage?.(/** @type {MessageEvent} */ (event).data));
    port.start();
  }

  /** @param {unknown} message @param {Transferable[]} [transfer] */
  post(message, transfer = []) {
    this.port.postMessage(message, transfer);
  }

  /** Stops listening and disentangles the port (messages posted before stay delivered). */
  close() {
    this.#onMessage = null;
    this.port.close();
  }
}
