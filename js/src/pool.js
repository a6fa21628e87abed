// The supervised pool: a fixed number of workers, each running one task at a time, that never
// loses track of one. The rules it keeps (each has a test with a real worker fixture):
//
// - Handshake: a worker is sent { init, protocol, config } and must answer with its protocol
//   version, its module's ABI version and the asset it loaded, within `startupTimeout`. A
//   mismatch, a missing asset, a crash or silence before the answer is a StartupError, and a
//   startup failure breaks the pool: tasks not yet running and every later run reject with it.
//   No worker is retried, so a bad build cannot loop.
// - A task's timeout starts when the task is posted to its worker, not when it is queued.
// - A running task fails, and its worker is terminated and replaced, when the worker exits or
//   throws outside a task (WorkerCrashError), is silent longer than the silence limit
//   (WorkerHangError; see `silenceLimit`), breaks the protocol or returns a malformed output
//   (ProtocolError), or the task times out (TaskTimeoutError) or is aborted while running.
// - Reservations: every task reserves bytes against `memoryBudget` when submitted (refused at
//   once if they do not fit) and returns them when it ends; a task whose worker is being
//   terminated keeps its bytes reserved until that worker has really exited.
// - `maxQueue` bounds the tasks waiting for a worker; 0 means run now or be refused.
// - Inputs are snapshotted at submission (see snapshot.js).
// - Messages from a worker being terminated are ignored, so a late answer cannot settle
//   anything.

import {
  AbortError,
  BudgetError,
  InputError,
  PoolClosedError,
  ProtocolError,
  QueueFullError,
  StartupError,
  TaskError,
  TaskTimeoutError,
  WorkerCrashError,
  WorkerHangError,
} from './errors.js';
import { PROTOCOL_VERSION, checkWorkerMessage } from './protocol.js';
import { availableParallelism, spawnWorker } from './platform.js';
import { inputBytes, ownedBuffers, snapshot } from './snapshot.js';

const asyncDispose = Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose');

/** How the silence limit is derived when not told otherwise (see `silenceLimit`). */
export const SILENCE_DEFAULTS = Object.freeze({ initial: 30_000, factor: 10, min: 2_000, window: 32 });

/**
 * The default reservation of a task whose input holds `bytes`: the pool's copy, the worker's
 * copy, the engine's working memory and the output, as the prior system measured (4x + 4 KiB).
 */
export const defaultReservation = (bytes) => 4 * bytes + 4096;

export class Pool {
  #options;
  #workerCount;
  #slots = new Set(); // workers starting, idle or busy
  #dying = new Set(); // workers told to terminate and not yet gone
  #queue = [];
  #reserved = 0;
  #nextTask = 1;
  #nextWorker = 1;
  #gaps = new Map(); // op -> recent silences between a task's beats, in ms
  #broken = null;
  #closing = null; // { force, promise, resolve } once close() is called

  /**
   * @param {object} options see index.d.ts (PoolOptions) for each option's meaning
   */
  constructor(options) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError('Pool: options must be an object with at least { worker }');
    }
    const { worker } = options;
    if (!(worker instanceof URL) && typeof worker !== 'string') {
      throw new TypeError('Pool: options.worker must be the URL of a worker module');
    }
    const count = (name, value, fallback, { zero = false, infinite = false } = {}) => {
      if (value === undefined) return fallback;
      const ok =
        (infinite && value === Infinity) ||
        (Number.isSafeInteger(value) && (zero ? value >= 0 : value > 0));
      if (!ok) {
        const range = zero ? 'a whole number >= 0' : 'a whole number >= 1';
        throw new RangeError(`Pool: options.${name} must be ${range}${infinite ? ' or Infinity' : ''}, not ${value}`);
      }
      return value;
    };
    const silence = { ...SILENCE_DEFAULTS, ...(options.silence ?? {}) };
    count('silence.initial', silence.initial, 0, { infinite: true });
    count('silence.min', silence.min, 0);
    count('silence.window', silence.window, 0);
    if (!(silence.factor >= 1)) throw new RangeError('Pool: options.silence.factor must be >= 1');
    if (options.abi !== undefined) count('abi', options.abi, 0, { zero: true });
    if (options.spawn !== undefined && typeof options.spawn !== 'function') {
      throw new TypeError('Pool: options.spawn must be a function (url, { name }) -> worker handle');
    }
    this.#workerCount = count('workers', options.workers, availableParallelism());
    this.#options = {
      worker,
      abi: options.abi,
      config: options.config,
      name: options.name ?? 'lockstep',
      startupTimeout: bounded(count('startupTimeout', options.startupTimeout, 30_000, { infinite: true })),
      taskTimeout: bounded(count('taskTimeout', options.taskTimeout, Infinity, { infinite: true })),
      maxQueue: count('maxQueue', options.maxQueue, Infinity, { zero: true, infinite: true }),
      memoryBudget: count('memoryBudget', options.memoryBudget, Infinity, { zero: true, infinite: true }),
      silence,
      spawn: options.spawn ?? spawnWorker,
    };
  }

  /** The number of workers this pool runs at most. */
  get workers() {
    return this.#workerCount;
  }

  /** The bytes reserved now: tasks submitted and not ended, and tasks whose worker is not yet gone. */
  get reservedBytes() {
    return this.#reserved;
  }

  /** A snapshot of the pool's state, for tests and monitoring. */
  get stats() {
    const by = (state) => [...this.#slots].filter((slot) => slot.state === state).length;
    return {
      workers: this.#workerCount,
      starting: by('starting'),
      idle: by('idle'),
      busy: by('busy'),
      terminating: this.#dying.size,
      queued: this.#queue.length,
      reservedBytes: this.#reserved,
      memoryBudget: this.#options.memoryBudget,
      closed: this.#closing !== null,
      broken: this.#broken !== null,
    };
  }

  /**
   * Runs `op` on `input` in a worker. Resolves with the worker's output; rejects with one of the
   * errors in errors.js. Never throws.
   */
  run(op, input, options = {}) {
    return new Promise((resolve, reject) => {
      const task = { id: this.#nextTask++, op, resolve, reject, settled: false, reserved: 0 };
      const refuse = (error) => {
        task.settled = true;
        reject(error);
      };
      if (typeof op !== 'string') return refuse(new TypeError('run: op must be a string'));
      if (this.#closing) return refuse(new PoolClosedError('run: the pool is closed'));
      if (this.#broken) return refuse(this.#broken);
      const { signal } = options;
      if (signal?.aborted) {
        return refuse(new AbortError('run: the signal was already aborted', { cause: signal.reason }));
      }
      if (signal !== undefined && typeof signal?.addEventListener !== 'function') {
        return refuse(new TypeError('run: signal must be an AbortSignal'));
      }
      const { silence } = options;
      if (!(silence === undefined || silence === false || silence === Infinity || (Number.isSafeInteger(silence) && silence > 0))) {
        return refuse(new RangeError(`run: silence must be false or a whole number of ms >= 1, not ${silence}`));
      }
      let timeout;
      try {
        timeout = taskTimeout(options.timeout, this.#options.taskTimeout);
      } catch (error) {
        return refuse(error);
      }
      const reserve = options.reserve ?? defaultReservation(inputBytes(input));
      if (!(Number.isSafeInteger(reserve) && reserve >= 0)) {
        return refuse(new RangeError(`run: reserve must be a whole number of bytes, not ${reserve}`));
      }
      const budget = this.#options.memoryBudget;
      if (this.#reserved + reserve > budget) {
        return refuse(
          new BudgetError(
            `run: '${op}' needs ${reserve} bytes but only ${budget - this.#reserved} of the ` +
              `${budget}-byte budget are free`,
            { requested: reserve, available: budget - this.#reserved, budget },
          ),
        );
      }
      try {
        if (options.owned) {
          task.input = input;
          task.transfer = ownedBuffers(input);
        } else {
          ({ value: task.input, transfer: task.transfer } = snapshot(input));
        }
      } catch (error) {
        return refuse(error instanceof InputError ? error : new InputError(error.message, { cause: error }));
      }
      Object.assign(task, {
        timeout,
        signal,
        onProgress: options.onProgress,
        validate: options.validate,
        silence: options.silence,
        state: 'new',
        slot: null,
      });
      this.#reserve(task, reserve);
      if (!this.#place(task)) {
        this.#release(task);
        const max = this.#options.maxQueue;
        return refuse(
          new QueueFullError(
            max === 0
              ? `run: no worker is free for '${op}' and maxQueue is 0`
              : `run: the queue already holds maxQueue = ${max} tasks`,
          ),
        );
      }
      if (signal && !task.settled) {
        task.onAbort = () => this.#abort(task);
        signal.addEventListener('abort', task.onAbort, { once: true });
      }
    });
  }

  /**
   * Stops taking tasks and settles every one. Without `force`, queued and running tasks finish
   * first; with it they reject with PoolClosedError and their workers are terminated. Resolves
   * once every worker is gone (and so every reservation returned).
   */
  close({ force = false } = {}) {
    if (!this.#closing) {
      let resolve;
      const promise = new Promise((r) => (resolve = r));
      this.#closing = { force, promise, resolve };
    }
    if (force && !this.#closing.force) this.#closing.force = true;
    if (this.#closing.force) {
      const error = () => new PoolClosedError('the pool was closed before the task finished');
      for (const task of this.#queue.splice(0)) this.#fail(task, error());
      for (const slot of [...this.#slots]) this.#kill(slot, error());
    }
    this.#drainCheck();
    return this.#closing.promise;
  }

  /** close({ force: true }). */
  destroy() {
    return this.close({ force: true });
  }

  /** close(): `await using pool = new Pool(...)` settles every task at the end of the scope. */
  [asyncDispose]() {
    return this.close();
  }

  // ---- placement ----------------------------------------------------------------------------

  // Gives the task a worker (idle: posted now; starting: posted after its handshake; none but
  // room for one: a new worker) or a place in the queue. False if neither is allowed.
  #place(task) {
    for (const slot of this.#slots) {
      if (slot.state === 'idle') {
        this.#dispatch(slot, task);
        return true;
      }
    }
    for (const slot of this.#slots) {
      if (slot.state === 'starting' && slot.task === null) {
        this.#bind(slot, task);
        return true;
      }
    }
    if (this.#slots.size < this.#workerCount) {
      this.#bind(this.#spawn(), task);
      return true;
    }
    if (this.#queue.length >= this.#options.maxQueue) return false;
    task.state = 'queued';
    this.#queue.push(task);
    return true;
  }

  // Moves queued tasks to workers that can take them.
  #pump() {
    while (!this.#broken && !this.#closing?.force && this.#queue.length > 0) {
      const slot =
        [...this.#slots].find((s) => s.state === 'idle') ??
        [...this.#slots].find((s) => s.state === 'starting' && s.task === null) ??
        (this.#slots.size < this.#workerCount ? this.#spawn() : null);
      if (slot === null) break;
      const task = this.#queue.shift();
      if (slot.state === 'idle') this.#dispatch(slot, task);
      else this.#bind(slot, task);
    }
    this.#drainCheck();
  }

  #bind(slot, task) {
    task.state = 'bound';
    task.slot = slot;
    slot.task = task;
    slot.handle?.ref();
  }

  #dispatch(slot, task) {
    slot.state = 'busy';
    slot.task = task;
    task.slot = slot;
    task.state = 'running';
    try {
      slot.handle.post({ type: 'task', id: task.id, op: task.op, input: task.input }, task.transfer);
    } catch (error) {
      // The snapshot is cloneable by construction; an owned input may not be.
      slot.state = 'idle';
      slot.task = null;
      slot.handle.unref();
      this.#release(task);
      this.#fail(task, new InputError(`run: the input cannot be posted: ${error.message}`, { cause: error }));
      this.#pump();
      return;
    }
    task.input = task.transfer = null;
    slot.handle.ref();
    slot.lastBeat = now();
    if (task.timeout !== Infinity) {
      slot.timeoutTimer = setTimeout(() => {
        this.#kill(
          slot,
          new TaskTimeoutError(`'${task.op}' ran longer than its ${task.timeout} ms timeout`, {
            timeout: task.timeout,
          }),
        );
      }, task.timeout);
    }
    this.#watchSilence(slot);
  }

  // ---- workers ------------------------------------------------------------------------------

  #spawn() {
    const slot = { id: this.#nextWorker++, state: 'starting', task: null, handle: null, asset: null };
    this.#slots.add(slot);
    const name = `${this.#options.name} worker #${slot.id}`;
    slot.name = name;
    if (this.#options.startupTimeout !== Infinity) {
      slot.startupTimer = setTimeout(() => {
        this.#startupFailed(
          slot,
          new StartupError(
            `${name} did not finish its handshake within ${this.#options.startupTimeout} ms`,
            'timeout',
            { timeout: this.#options.startupTimeout },
          ),
        );
      }, this.#options.startupTimeout);
    }
    try {
      slot.handle = this.#options.spawn(this.#options.worker, { name });
      slot.handle.listen({
        message: (data) => this.#onMessage(slot, data),
        error: (error) => this.#onError(slot, error),
        exit: (code) => this.#onExit(slot, code),
      });
      slot.handle.unref();
      slot.handle.post({ type: 'init', protocol: PROTOCOL_VERSION, config: this.#options.config });
    } catch (error) {
      queueMicrotask(() =>
        this.#startupFailed(
          slot,
          new StartupError(`${name} could not be started: ${error.message}`, 'crash', {}, { cause: error }),
        ),
      );
    }
    return slot;
  }

  #onMessage(slot, data) {
    if (slot.state === 'dying' || slot.state === 'gone') return; // a late answer: ignored
    let message;
    try {
      message = checkWorkerMessage(data);
    } catch (error) {
      if (slot.state === 'starting') {
        this.#startupFailed(slot, new StartupError(`${slot.name}: ${error.message}`, 'version'));
      } else {
        this.#kill(slot, new ProtocolError(`${slot.name}: ${error.message}`));
      }
      return;
    }
    if (slot.state === 'starting') return this.#onHandshake(slot, message);
    const task = slot.task;
    const forTask = task !== null && message.id === task.id;
    if (!forTask || message.type === 'hello' || message.type === 'startup-error') {
      const what = message.id === undefined ? `a second '${message.type}'` : `a '${message.type}' for task ${message.id}`;
      const running = task ? `task ${task.id} ('${task.op}')` : 'no task';
      this.#kill(slot, new ProtocolError(`${slot.name} sent ${what} while running ${running}`));
      return;
    }
    switch (message.type) {
      case 'progress':
        this.#beat(slot);
        if (task.onProgress) {
          try {
            task.onProgress({ done: message.done, total: message.total });
          } catch (error) {
            this.#kill(slot, new TaskError(`'${task.op}': the onProgress callback threw: ${error?.message}`, { cause: error }));
          }
        }
        return;
      case 'result': {
        this.#beat(slot);
        if (task.validate) {
          try {
            task.validate(message.output);
          } catch (error) {
            this.#kill(slot, new ProtocolError(`${slot.name} returned a malformed output for '${task.op}': ${error?.message}`));
            return;
          }
          if (slot.task !== task) return; // validate() aborted the task or closed the pool
        }
        this.#finish(slot);
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
          this.#finish(slot);
          task.reject(error);
        }
        return;
      }
    }
  }

  #onHandshake(slot, message) {
    const name = slot.name;
    if (message.type === 'startup-error') {
      const reason = message.reason === 'asset' ? 'asset' : 'crash';
      const where = message.path ? ` ${message.path}` : '';
      return this.#startupFailed(
        slot,
        new StartupError(`${name} could not load its asset${where}: ${message.message}`, reason, {
          path: message.path,
        }),
      );
    }
    if (message.type !== 'hello') {
      return this.#startupFailed(slot, new StartupError(`${name} sent '${message.type}' before its handshake`, 'version'));
    }
    if (message.protocol !== PROTOCOL_VERSION) {
      return this.#startupFailed(
        slot,
        new StartupError(
          `${name} speaks protocol version ${message.protocol}; this pool speaks version ${PROTOCOL_VERSION}`,
          'version',
          { expected: PROTOCOL_VERSION, actual: message.protocol },
        ),
      );
    }
    const abi = this.#options.abi;
    if (abi !== undefined && message.abi !== abi) {
      return this.#startupFailed(
        slot,
        new StartupError(
          `${name} loaded ${message.asset} with ABI version ${message.abi}; this pool needs ABI version ${abi}`,
          'version',
          { expected: abi, actual: message.abi, asset: message.asset },
        ),
      );
    }
    clearTimeout(slot.startupTimer);
    slot.asset = message.asset;
    slot.state = 'idle';
    const task = slot.task;
    slot.task = null;
    if (this.#closing && !task && this.#queue.length === 0) return this.#drainCheck();
    if (task) this.#dispatch(slot, task);
    else slot.handle.unref();
    this.#pump();
  }

  #onError(slot, error) {
    if (slot.state === 'dying' || slot.state === 'gone') return;
    const detail = error?.message ? `${error.name ?? 'Error'}: ${error.message}` : 'an error the host gave no detail of (a script that failed to load?)';
    if (slot.state === 'starting') {
      this.#startupFailed(slot, new StartupError(`${slot.name} failed before its handshake: ${detail}`, 'crash', {}, { cause: error }));
    } else {
      this.#kill(slot, new WorkerCrashError(`${slot.name} crashed: ${detail}`, {}, { cause: error }));
    }
  }

  #onExit(slot, code) {
    if (slot.state === 'dying') return this.#bury(slot);
    if (slot.state === 'gone') return;
    if (slot.state === 'starting') {
      this.#startupFailed(slot, new StartupError(`${slot.name} exited with code ${code} before its handshake`, 'crash', { exitCode: code }));
    } else {
      this.#kill(slot, new WorkerCrashError(`${slot.name} exited with code ${code}`, { exitCode: code }));
    }
    this.#bury(slot);
  }

  // ---- hang detection -----------------------------------------------------------------------

  /**
   * How long the running task may go without a beat (its start, a progress report): the
   * task's own `silence` option if given (false: no limit); else, once tasks of this op have
   * been measured, `factor` times the longest of the last `window` silences seen between their
   * beats, at least `min`; before that, `initial`.
   */
  silenceLimit(op, override) {
    if (override === false) return Infinity;
    if (override !== undefined) return bounded(override);
    const { initial, factor, min } = this.#options.silence;
    const gaps = this.#gaps.get(op);
    if (!gaps || gaps.length === 0) return bounded(initial);
    return bounded(Math.max(min, Math.ceil(factor * Math.max(...gaps))));
  }

  #beat(slot) {
    const at = now();
    const op = slot.task.op;
    let gaps = this.#gaps.get(op);
    if (!gaps) this.#gaps.set(op, (gaps = []));
    gaps.push(at - slot.lastBeat);
    if (gaps.length > this.#options.silence.window) gaps.shift();
    slot.lastBeat = at;
    this.#watchSilence(slot);
  }

  #watchSilence(slot) {
    clearTimeout(slot.silenceTimer);
    const task = slot.task;
    const limit = this.silenceLimit(task.op, task.silence);
    if (limit === Infinity) return;
    const token = (slot.silenceToken = {});
    slot.silenceTimer = setTimeout(() => {
      // The timer may be late because this thread was busy: let beats that are already
      // queued be delivered before deciding (Node: setImmediate runs after the poll phase).
      afterPendingMessages(() => {
        if (slot.silenceToken !== token || slot.task !== task) return; // a beat came in meanwhile
        this.#kill(
          slot,
          new WorkerHangError(`${slot.name} reported no progress on '${task.op}' for ${limit} ms`, { limit }),
        );
      });
    }, limit);
  }

  // ---- endings ------------------------------------------------------------------------------

  // The running task ended normally: its worker is idle again.
  #finish(slot) {
    const task = slot.task;
    slot.silenceToken = null;
    clearTimeout(slot.timeoutTimer);
    clearTimeout(slot.silenceTimer);
    slot.task = null;
    slot.state = 'idle';
    slot.handle.unref();
    this.#release(task);
    this.#settled(task);
    this.#pump();
  }

  // Terminates the worker; its task (if any, and not already settled) rejects with `error`.
  // The task's reservation stays held until the worker has exited.
  #kill(slot, error) {
    if (slot.state === 'dying' || slot.state === 'gone') return;
    clearTimeout(slot.startupTimer);
    clearTimeout(slot.timeoutTimer);
    clearTimeout(slot.silenceTimer);
    slot.silenceToken = null;
    const task = slot.task;
    slot.task = null;
    const wasStarting = slot.state === 'starting';
    slot.state = 'dying';
    this.#slots.delete(slot);
    this.#dying.add(slot);
    if (task) {
      if (task.state === 'bound' || wasStarting) this.#release(task); // never posted
      else slot.held = task;
      this.#fail(task, error);
    }
    let ended;
    try {
      ended = slot.handle ? slot.handle.terminate() : Promise.resolve();
    } catch (failure) {
      ended = Promise.reject(failure);
    }
    Promise.resolve(ended).then(
      () => this.#bury(slot),
      // A host that cannot say the worker is gone: the reservation stays held, loudly visible
      // in `stats.terminating`, rather than returned for memory that may still be in use.
      () => {
        if (!slot.held) this.#bury(slot);
      },
    );
    this.#pump();
  }

  // The worker is gone: what its task reserved is free.
  #bury(slot) {
    if (slot.state === 'gone') return;
    if (slot.state !== 'dying') {
      this.#slots.delete(slot);
    }
    slot.state = 'gone';
    this.#dying.delete(slot);
    if (slot.held) this.#release(slot.held);
    slot.held = null;
    this.#drainCheck();
  }

  #startupFailed(slot, error) {
    if (slot.state !== 'starting') return;
    this.#broken = error;
    this.#kill(slot, error);
    for (const task of this.#queue.splice(0)) {
      this.#release(task);
      this.#fail(task, error);
    }
    for (const other of [...this.#slots]) {
      if (other.state === 'starting' || other.state === 'idle') this.#kill(other, error);
    }
    this.#drainCheck();
  }

  #abort(task) {
    if (task.settled) return;
    const error = new AbortError(`'${task.op}' was aborted`, { cause: task.signal.reason });
    if (task.state === 'queued') {
      this.#queue.splice(this.#queue.indexOf(task), 1);
      this.#release(task);
      this.#fail(task, error);
      this.#drainCheck();
    } else if (task.state === 'bound') {
      task.slot.task = null;
      this.#release(task);
      this.#fail(task, error);
      this.#pump();
    } else if (task.state === 'running') {
      this.#kill(task.slot, error);
    }
  }

  #fail(task, error) {
    if (task.settled) return;
    if (task.state === 'queued' || task.state === 'bound') this.#release(task);
    this.#settled(task);
    task.reject(error);
  }

  #settled(task) {
    task.settled = true;
    task.state = 'done';
    if (task.onAbort) task.signal.removeEventListener('abort', task.onAbort);
  }

  #reserve(task, bytes) {
    task.reserved = bytes;
    task.held = true;
    this.#reserved += bytes;
  }

  #release(task) {
    if (!task.held) return;
    task.held = false;
    this.#reserved -= task.reserved;
  }

  // While closing: once nothing is queued or running, terminate the rest; resolve close() once
  // every worker is gone.
  #drainCheck() {
    const closing = this.#closing;
    if (!closing && !this.#broken) return;
    const busy = [...this.#slots].some((slot) => slot.state === 'busy' || slot.task !== null);
    if (this.#broken && !closing) {
      for (const slot of [...this.#slots]) if (slot.state === 'idle') this.#kill(slot, null);
      return;
    }
    if (this.#queue.length > 0 || busy) return;
    for (const slot of [...this.#slots]) this.#kill(slot, null);
    if (this.#slots.size === 0 && this.#dying.size === 0) closing.resolve();
  }
}

function taskTimeout(value, fallback) {
  if (value === undefined) return fallback;
  if (value === Infinity || (Number.isSafeInteger(value) && value > 0)) return bounded(value);
  throw new RangeError(`run: timeout must be a whole number of ms >= 1 or Infinity, not ${value}`);
}

const now = () => globalThis.performance.now();

// Timers cannot wait longer than this (setTimeout fires at once past it): a limit above it,
// 24.8 days, is no limit.
const MAX_DELAY = 0x7fffffff;
const bounded = (ms) => (ms > MAX_DELAY ? Infinity : ms);

const afterPendingMessages =
  typeof globalThis.setImmediate === 'function'
    ? (fn) => globalThis.setImmediate(fn)
    : (fn) => {
        const { port1, port2 } = new MessageChannel();
        port1.onmessage = () => {
          port1.close();
          fn();
        };
        port2.postMessage(null);
      };
