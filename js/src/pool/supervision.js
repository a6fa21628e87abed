// @ts-check
// Supervision: the pool's workers and tasks, driven through their states (slots.js, tasks.js)
// so that no task is lost and no worker is trusted further than it has proven:
//
// - Handshake: a started worker is sent `init` and must answer within `startupTimeout` with a
//   `hello` the pool accepts (handshake.js).
// - A startup failure (timeout, refused handshake, crash before it) breaks the pool: the tasks
//   not yet running and every later run reject with its StartupError, and no worker is
//   started again, so a bad build cannot loop.
// - A running task fails, and its worker is terminated and replaced (a new one starts when a
//   task needs it), when the worker exits or throws outside a task (WorkerCrashError), is silent
//   past the silence limit (WorkerHangError; silence.js), breaks the protocol or returns an
//   output its `validate` refuses (ProtocolError), or the task times out (TaskTimeoutError,
//   counted from when it was posted) or is aborted.
// - Every timer (startup, task timeout, silence) decides only after the messages already
//   waiting for this thread are delivered (afterPendingMessages): a handshake, beat or result
//   that came in time wins over a timer that fired while this thread was busy.
// - Messages from a worker told to terminate are ignored: a late answer settles nothing.
// - Closing: once nothing is queued or running (at once with `force`, which rejects them),
//   every worker is terminated; close() resolves when all are gone, and so every reservation
//   has returned (reservations.js).

import { AbortError, InputError, PoolClosedError, ProtocolError, StartupError, TaskError, TaskTimeoutError, WorkerCrashError, WorkerHangError } from './errors.js';
import { fieldOf, messageOf } from './fields.js';
import { PROTOCOL_VERSION, checkWorkerMessage } from './protocol.js';
import { acceptHandshake } from './handshake.js';
import { TaskQueue } from './queue.js';
import { Reservations } from './reservations.js';
import { SilenceMeter } from './silence.js';
import { SlotState, Slots, clearTaskTimers, isRetired } from './slots.js';
import { TaskState, isSettled, markSettled } from './tasks.js';
import { afterPendingMessages, now } from './timing.js';

/** @typedef {import('./options.js').PoolSettings} PoolSettings */
/** @typedef {import('./slots.js').Slot} Slot */
/** @typedef {import('./tasks.js').Task} Task */
/** @typedef {import('./protocol.js').WorkerMessage} WorkerMessage */
/** @typedef {import('./protocol.js').HelloMessage} HelloMessage */
/** @typedef {import('../index.js').PoolStats} PoolStats */

/**
 * @typedef {object} Closing  set once close() is called
 * @property {boolean} force         whether running and queued tasks are rejected
 * @property {Promise<void>} promise what close() returns: resolved once every worker is gone
 * @property {() => void} resolve
 */

/** The workers, the queue and the reservations of one pool, and the rules above. */
export class Supervisor {
  #settings;
  #slots = new Slots();
  #queue;
  #reservations;
  #silence;
  /** @type {StartupError | null} the startup failure that broke the pool */
  #broken = null;
  /** @type {Closing | null} */
  #closing = null;

  /** @param {PoolSettings} settings */
  constructor(settings) {
    this.#settings = settings;
    this.#queue = new TaskQueue(settings.maxQueue);
    this.#reservations = new Reservations(settings.memoryBudget);
    this.#silence = new SilenceMeter(settings.silence);
  }

  /** The StartupError that broke the pool, or null. */
  get broken() {
    return this.#broken;
  }

  /** Whether close() was called. */
  get closed() {
    return this.#closing !== null;
  }

  /** The bytes reserved now (see Reservations#reserved). */
  get reservedBytes() {
    return this.#reservations.reserved;
  }

  /** @returns {PoolStats} */
  stats() {
    return {
      workers: this.#settings.workers,
      starting: this.#slots.count(SlotState.STARTING),
      idle: this.#slots.count(SlotState.IDLE),
      busy: this.#slots.count(SlotState.BUSY),
      terminating: this.#slots.dying,
      queued: this.#queue.length,
      reservedBytes: this.#reservations.reserved,
      memoryBudget: this.#reservations.budget,
      closed: this.#closing !== null,
      broken: this.#broken !== null,
    };
  }

  /** The silence limit a task of `op` gets now (SilenceMeter#limit). @param {string} op @param {number | false | { atLeast: number }} [override] */
  silenceLimit(op, override) {
    return this.#silence.limit(op, override);
  }

  /** The BudgetError a task of `op` reserving `bytes` would get now, or null. @param {string} op @param {number} bytes */
  budgetRefusal(op, bytes) {
    return this.#reservations.refusal(op, bytes);
  }

  /**
   * Reserves `bytes` for the NEW `task` and gives it a worker (idle: posted now; starting:
   * posted after its handshake; none but room for one: a new worker) or a place in the queue.
   * False, with nothing reserved, if the queue is full; the caller rejects the task with
   * `queueRefusal`. The task may already be settled on return (its input could not be posted).
   *
   * @param {Task} task
   * @param {number} bytes
   */
  submit(task, bytes) {
    this.#reservations.take(task, bytes);
    if (this.#place(task)) return true;
    this.#reservations.release(task);
    return false;
  }

  /** The QueueFullError for a task of `op` that `submit` refused. @param {string} op */
  queueRefusal(op) {
    return this.#queue.refusal(op);
  }

  /**
   * Rejects the task with an AbortError carrying its signal's reason: a queued or bound task is
   * removed; a running one's worker is terminated (and replaced when needed). A settled task is
   * left alone.
   *
   * @param {Task} task
   */
  abort(task) {
    if (isSettled(task)) return;
    const error = new AbortError(`'${task.op}' was aborted`, { cause: task.signal?.reason });
    const slot = task.slot;
    if (task.state === TaskState.QUEUED) {
      this.#queue.remove(task);
      this.#reservations.release(task);
      this.#fail(task, error);
      this.#drainCheck();
    } else if (task.state === TaskState.BOUND && slot !== null) {
      this.#slots.unbind(slot);
      this.#reservations.release(task);
      this.#fail(task, error);
      this.#pump();
    } else if (task.state === TaskState.RUNNING && slot !== null) {
      this.#kill(slot, error);
    }
  }

  /**
   * Stops taking tasks and settles every one (see the rules above). Resolves once every worker
   * is gone. Calling it again returns the same promise; `force` on a later call still applies.
   *
   * @param {boolean} force
   */
  close(force) {
    if (this.#closing === null) {
      let resolve = () => {};
      /** @type {Promise<void>} */
      const promise = new Promise((done) => {
        resolve = () => done();
      });
      this.#closing = { force, promise, resolve };
    }
    const closing = this.#closing;
    if (force) closing.force = true;
    if (closing.force) {
      const error = () => new PoolClosedError('the pool was closed before the task finished');
      for (const task of this.#queue.drain()) this.#fail(task, error());
      for (const slot of this.#slots.live()) this.#kill(slot, error());
    }
    this.#drainCheck();
    return closing.promise;
  }

  // ---- placement ----------------------------------------------------------------------------

  /** @param {Task} task */
  #place(task) {
    const slot = this.#slotFor(task);
    if (slot === null) return this.#queue.offer(task);
    this.#assign(slot, task);
    return true;
  }

  // Moves queued tasks to workers that can take them, each to the first (longest waiting) task
  // that may run there: a task bound to a busy worker lets later ones pass.
  #pump() {
    while (!this.#broken && !this.#closing?.force && this.#queue.length > 0) {
      const anyFree = this.#slots.free() !== null || this.#slots.size < this.#settings.workers;
      const task = this.#queue.take((waiting) => {
        const own = waiting.affinity?.slot;
        return own ? this.#slots.canTake(own) : anyFree;
      });
      if (!task) break;
      const slot = this.#slotFor(task);
      if (slot === null) throw new Error('invariant: the queue gave a task no worker can take');
      this.#assign(slot, task);
    }
    this.#drainCheck();
  }

  // The slot that can take `task` now: its affinity's worker if bound (and free), else any free
  // one, started if there is room for one more; null if none.
  /** @param {Task} task */
  #slotFor(task) {
    const own = task.affinity?.slot;
    if (own) return this.#slots.canTake(own) ? own : null;
    return this.#slots.free() ?? (this.#slots.size < this.#settings.workers ? this.#spawn() : null);
  }

  /** @param {Slot} slot @param {Task} task */
  #assign(slot, task) {
    task.affinity?.bindTo(slot);
    if (slot.state === SlotState.IDLE) this.#dispatch(slot, task);
    else this.#bind(slot, task);
  }

  // Gives the task to a starting worker: posted after its handshake.
  /** @param {Slot} slot @param {Task} task */
  #bind(slot, task) {
    task.state = TaskState.BOUND;
    task.slot = slot;
    this.#slots.bind(slot, task);
    slot.handle.ref();
  }

  // Posts the task to an idle worker and arms its timeout and silence timers.
  /** @param {Slot} slot @param {Task} task */
  #dispatch(slot, task) {
    this.#slots.occupy(slot, task);
    task.slot = slot;
    task.state = TaskState.RUNNING;
    try {
      slot.handle.post({ type: 'task', id: task.id, op: task.op, input: task.input }, task.transfer);
    } catch (error) {
      // The snapshot is cloneable by construction; an owned input may not be.
      this.#slots.vacate(slot);
      slot.handle.unref();
      this.#reservations.release(task);
      this.#fail(task, new InputError(`run: the input cannot be posted: ${messageOf(error)}`, { cause: error }));
      this.#pump();
      return;
    }
    task.input = null;
    task.transfer = [];
    slot.handle.ref();
    slot.lastBeat = now();
    slot.lastDone = 0;
    if (task.timeout !== Infinity) {
      slot.timeoutTimer = setTimeout(() => {
        afterPendingMessages(() => {
          if (slot.task !== task) return; // its result (or another ending) came in meanwhile
          this.#kill(
            slot,
            new TaskTimeoutError(`'${task.op}' ran longer than its ${task.timeout} ms timeout`, {
              timeout: task.timeout,
            }),
          );
        });
      }, task.timeout);
    }
    this.#watchSilence(slot, task);
  }

  // ---- workers ------------------------------------------------------------------------------

  // Starts a worker: a STARTING slot, its startup timer, and `init` posted to it. A host that
  // fails to start it is a startup crash, reported after the caller has used the slot.
  #spawn() {
    const { startupTimeout } = this.#settings;
    const slot = this.#slots.add(this.#settings.name);
    const name = slot.name;
    if (startupTimeout !== Infinity) {
      // Decided once the messages already waiting are delivered: a handshake that came in
      // time moves the slot out of STARTING, and #startupFailed then leaves it alone.
      slot.startupTimer = setTimeout(() => {
        afterPendingMessages(() =>
          this.#startupFailed(
            slot,
            new StartupError(`${name} did not finish its handshake within ${startupTimeout} ms`, 'timeout', {
              timeout: startupTimeout,
            }),
          ),
        );
      }, startupTimeout);
    }
    try {
      slot.handle = this.#settings.spawn(this.#settings.worker, { name });
      slot.handle.listen({
        message: (data) => this.#onMessage(slot, data),
        error: (error) => this.#onError(slot, error),
        exit: (code) => this.#onExit(slot, code),
      });
      slot.handle.unref();
      slot.handle.post({ type: 'init', protocol: PROTOCOL_VERSION, config: this.#settings.config });
    } catch (error) {
      queueMicrotask(() =>
        this.#startupFailed(
          slot,
          new StartupError(`${name} could not be started: ${messageOf(error)}`, 'crash', {}, { cause: error }),
        ),
      );
    }
    return slot;
  }

  /** @param {Slot} slot @param {unknown} data */
  #onMessage(slot, data) {
    if (isRetired(slot)) return; // a late answer: ignored
    /** @type {WorkerMessage} */
    let message;
    try {
      message = checkWorkerMessage(data);
    } catch (error) {
      if (slot.state === SlotState.STARTING) {
        this.#startupFailed(slot, new StartupError(`${slot.name}: ${messageOf(error)}`, 'version'));
      } else {
        this.#kill(slot, new ProtocolError(`${slot.name}: ${messageOf(error)}`));
      }
      return;
    }
    if (slot.state === SlotState.STARTING) return this.#onHandshake(slot, message);
    const task = slot.task;
    const id = 'id' in message ? message.id : undefined;
    if (task === null || id !== task.id || message.type === 'hello' || message.type === 'startup-error') {
      const what = id === undefined ? `a second '${message.type}'` : `a '${message.type}' for task ${id}`;
      const running = task ? `task ${task.id} ('${task.op}')` : 'no task';
      this.#kill(slot, new ProtocolError(`${slot.name} sent ${what} while running ${running}`));
      return;
    }
    switch (message.type) {
      case 'progress':
        this.#beat(slot, task, message.done, message.total);
        if (task.onProgress) {
          try {
            task.onProgress({ done: message.done, total: message.total });
          } catch (error) {
            this.#kill(slot, new TaskError(`'${task.op}': the onProgress callback threw: ${messageOf(error)}`, { cause: error }));
          }
        }
        return;
      case 'result': {
        if (task.validate) {
          try {
            task.validate(message.output);
          } catch (error) {
            this.#kill(slot, new ProtocolError(`${slot.name} returned a malformed output for '${task.op}': ${messageOf(error)}`));
            return;
          }
          if (slot.task !== task) return; // validate() aborted the task or closed the pool
        }
        this.#finish(slot, task);
        task.resolve(message.output);
        return;
      }
      case 'error': {
        const { name = 'Error', message: text, code } = message.error;
        const cause = Object.assign(new Error(text), { name, code });
        const error = new TaskError(`'${task.op}' failed in ${slot.name}: ${name}: ${text}`, { cause });
        if (message.fatal) {
          this.#kill(slot, error);
        } else {
          this.#finish(slot, task);
          task.reject(error);
        }
        return;
      }
    }
  }

  /** @param {Slot} slot @param {WorkerMessage} message */
  #onHandshake(slot, message) {
    const hello = acceptHandshake(slot.name, message, this.#settings.abi);
    if (hello instanceof StartupError) return this.#startupFailed(slot, hello);
    clearTimeout(slot.startupTimer);
    const task = this.#slots.ready(slot, hello.asset);
    if (this.#closing && !task && this.#queue.length === 0) return this.#drainCheck();
    if (task) this.#dispatch(slot, task);
    else slot.handle.unref();
    this.#pump();
  }

  /** @param {Slot} slot @param {unknown} error */
  #onError(slot, error) {
    if (isRetired(slot)) return;
    const detail = messageOf(error)
      ? `${fieldOf(error, 'name') ?? 'Error'}: ${messageOf(error)}`
      : 'an error the host gave no detail of (a script that failed to load?)';
    if (slot.state === SlotState.STARTING) {
      this.#startupFailed(slot, new StartupError(`${slot.name} failed before its handshake: ${detail}`, 'crash', {}, { cause: error }));
    } else {
      this.#kill(slot, new WorkerCrashError(`${slot.name} crashed: ${detail}`, {}, { cause: error }));
    }
  }

  /** @param {Slot} slot @param {number} code */
  #onExit(slot, code) {
    if (slot.state === SlotState.DYING) return this.#bury(slot);
    if (slot.state === SlotState.GONE) return;
    if (slot.state === SlotState.STARTING) {
      this.#startupFailed(slot, new StartupError(`${slot.name} exited with code ${code} before its handshake`, 'crash', { exitCode: code }));
    } else {
      this.#kill(slot, new WorkerCrashError(`${slot.name} exited with code ${code}`, { exitCode: code }));
    }
    this.#bury(slot);
  }

  // ---- hang detection -----------------------------------------------------------------------

  // The running task beat (a progress report): the silence timer starts again, and a beat that
  // raised `done` is measured, as the time since the task's last such beat (or its start) over
  // the work it reported (silence.js). The result ends the task: nothing to watch or learn.
  /** @param {Slot} slot @param {Task} task @param {number} done @param {number} total */
  #beat(slot, task, done, total) {
    const at = now();
    const work = done - slot.lastDone;
    // Before any work, a beat restarts the clock: a task that waited (for a message, say) and
    // beat meanwhile is measured from its last beat, not from its start.
    if (work === 0 && slot.lastDone === 0) slot.lastBeat = at;
    if (work > 0) {
      this.#silence.record(task.op, at - slot.lastBeat, work, done < total);
      slot.lastBeat = at;
      slot.lastDone = done;
    }
    this.#watchSilence(slot, task);
  }

  /** @param {Slot} slot @param {Task} task */
  #watchSilence(slot, task) {
    clearTimeout(slot.silenceTimer);
    const limit = this.#silence.limit(task.op, task.silence);
    if (limit === Infinity) return;
    const token = (slot.silenceToken = {});
    slot.silenceTimer = setTimeout(() => {
      afterPendingMessages(() => {
        if (slot.silenceToken !== token || slot.task !== task) return; // a beat came in meanwhile
        this.#kill(slot, new WorkerHangError(`${slot.name} reported no progress on '${task.op}' for ${limit} ms`, { limit }));
      });
    }, limit);
  }

  // ---- endings ------------------------------------------------------------------------------

  // The running task ended normally: its worker is idle again. The caller settles the task.
  /** @param {Slot} slot @param {Task} task */
  #finish(slot, task) {
    clearTaskTimers(slot);
    this.#slots.vacate(slot);
    slot.handle.unref();
    this.#reservations.release(task);
    markSettled(task);
    this.#pump();
  }

  // Terminates the worker; its task (if any, and not already settled) rejects with `error`
  // (null only for a worker with no task). A task that was posted keeps its reservation until
  // the worker has exited.
  /** @param {Slot} slot @param {Error | null} error */
  #kill(slot, error) {
    if (isRetired(slot)) return;
    clearTimeout(slot.startupTimer);
    clearTaskTimers(slot);
    const wasStarting = slot.state === SlotState.STARTING;
    const task = this.#slots.retire(slot);
    if (task) {
      if (task.state === TaskState.BOUND || wasStarting) this.#reservations.release(task); // never posted
      else this.#reservations.holdUntilGone(slot, task);
      this.#fail(task, error);
    }
    // What the worker held is gone: tasks that must run there can never run.
    for (const affinity of slot.affinities) affinity.lose(error);
    for (const waiting of this.#queue.takeAll((queued) => queued.affinity?.lost === true)) {
      this.#fail(waiting, waiting.affinity?.error());
    }
    /** @type {Promise<unknown>} */
    let ended;
    try {
      ended = slot.handle.terminate();
    } catch (failure) {
      ended = Promise.reject(failure);
    }
    Promise.resolve(ended).then(
      () => this.#bury(slot),
      // A host that cannot say the worker is gone: the reservation stays held, loudly visible
      // in `stats.terminating`, rather than returned for memory that may still be in use.
      () => {
        if (!this.#reservations.holds(slot)) this.#bury(slot);
      },
    );
    this.#pump();
  }

  // The worker is gone: what its task reserved is free.
  /** @param {Slot} slot */
  #bury(slot) {
    if (slot.state === SlotState.GONE) return;
    this.#slots.bury(slot);
    this.#reservations.workerGone(slot);
    this.#drainCheck();
  }

  // The broken-pool rule: the failed worker, every queued task and every worker not running a
  // task go, with the same error; so do later runs (Pool#run checks `broken`).
  /** @param {Slot} slot @param {StartupError} error */
  #startupFailed(slot, error) {
    if (slot.state !== SlotState.STARTING) return;
    this.#broken = error;
    this.#kill(slot, error);
    for (const task of this.#queue.drain()) {
      this.#reservations.release(task);
      this.#fail(task, error);
    }
    for (const other of this.#slots.live()) {
      if (other.state === SlotState.STARTING || other.state === SlotState.IDLE) this.#kill(other, error);
    }
    this.#drainCheck();
  }

  /** @param {Task} task @param {unknown} error */
  #fail(task, error) {
    if (isSettled(task)) return;
    if (task.state === TaskState.QUEUED || task.state === TaskState.BOUND) this.#reservations.release(task);
    markSettled(task);
    task.reject(error);
  }

  // Broken and not closing: idle workers go (no task will come). Closing: once nothing is
  // queued or running, every worker goes; close() resolves once all are gone.
  #drainCheck() {
    const closing = this.#closing;
    if (closing === null) {
      if (this.#broken) {
        for (const slot of this.#slots.live()) if (slot.state === SlotState.IDLE) this.#kill(slot, null);
      }
      return;
    }
    if (this.#queue.length > 0 || this.#slots.anyOccupied()) return;
    for (const slot of this.#slots.live()) this.#kill(slot, null);
    if (this.#slots.size === 0 && this.#slots.dying === 0) closing.resolve();
  }
}
