// @ts-check
// The pool's errors: one class per outcome, each with a stable `code` and, where another error
// caused it, that error as `cause`. Async APIs reject with these; only bad constructor options
// throw (TypeError / RangeError). Their declared types are in index.d.ts.
//
// `details` are fields copied onto the error (exit code, versions, limits), as index.d.ts names
// them for each class.
//
// In pool/ with the pool's own errors, the PSI and plan engines' PsiError and PlanError too: all
// derive from LockstepError, and the package exports every error class from this one module.

/** @typedef {{ [field: string]: unknown }} Details */

/** The base of every error the pool produces. */
export class LockstepError extends Error {
  /**
   * @param {string} message
   * @param {string} code
   * @param {ErrorOptions} [options]
   */
  constructor(message, code, options) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/**
 * A worker did not become ready: it missed the startup timeout, spoke another protocol or ABI
 * version, could not load its asset, or died before its handshake. `reason` is one of
 * 'timeout' | 'version' | 'asset' | 'crash'. A startup failure breaks the pool: the tasks
 * waiting for it and every later `run` reject with this error (no retries).
 */
export class StartupError extends LockstepError {
  /**
   * @param {string} message
   * @param {'timeout' | 'version' | 'asset' | 'crash'} reason
   * @param {Details} [details]
   * @param {ErrorOptions} [options]
   */
  constructor(message, reason, details = {}, options) {
    super(message, 'ERR_WORKER_STARTUP', options);
    this.reason = reason;
    Object.assign(this, details);
  }
}

/** The worker running the task exited or threw outside any task; it has been replaced. */
export class WorkerCrashError extends LockstepError {
  /** @param {string} message @param {Details} [details] @param {ErrorOptions} [options] */
  constructor(message, details = {}, options) {
    super(message, 'ERR_WORKER_CRASHED', options);
    Object.assign(this, details);
  }
}

/** The running task reported no progress within the silence limit; its worker was replaced. */
export class WorkerHangError extends LockstepError {
  /** @param {string} message @param {Details} [details] */
  constructor(message, details = {}) {
    super(message, 'ERR_WORKER_SILENT');
    Object.assign(this, details);
  }
}

/** The task ran longer than its timeout (counted from when it started running). */
export class TaskTimeoutError extends LockstepError {
  /** @param {string} message @param {Details} [details] */
  constructor(message, details = {}) {
    super(message, 'ERR_TASK_TIMEOUT');
    Object.assign(this, details);
  }
}

/** The task's own code failed in the worker; `cause` carries the worker's error name and message. */
export class TaskError extends LockstepError {
  /** @param {string} message @param {ErrorOptions} [options] */
  constructor(message, options) {
    super(message, 'ERR_TASK_FAILED', options);
  }
}

/** A worker sent a message the protocol does not allow; the worker was replaced. */
export class ProtocolError extends LockstepError {
  /** @param {string} message */
  constructor(message) {
    super(message, 'ERR_PROTOCOL');
  }
}

/** The queue already holds `maxQueue` tasks (with `maxQueue: 0`, no worker was free). */
export class QueueFullError extends LockstepError {
  /** @param {string} message */
  constructor(message) {
    super(message, 'ERR_QUEUE_FULL');
  }
}

/** The task's reservation does not fit in what is left of the memory budget. */
export class BudgetError extends LockstepError {
  /** @param {string} message @param {Details} [details] */
  constructor(message, details = {}) {
    super(message, 'ERR_BUDGET');
    Object.assign(this, details);
  }
}

/** The task's input cannot be snapshotted (a detached buffer, a function, a symbol, an uncloneable object). */
export class InputError extends LockstepError {
  /** @param {string} message @param {ErrorOptions} [options] */
  constructor(message, options) {
    super(message, 'ERR_INPUT', options);
  }
}

/** The task was cancelled through its AbortSignal; `cause` is the signal's reason. */
export class AbortError extends LockstepError {
  /** @param {string} message @param {ErrorOptions} [options] */
  constructor(message, options) {
    super(message, 'ABORT_ERR', options);
  }
}

/**
 * The task was run with a worker affinity (Pool#affinity) whose worker is gone: terminated
 * after a crash, a hang, a timeout, an abort or a close. What that worker held (a PSI party's
 * key) went with it; `cause` is what ended it.
 */
export class WorkerLostError extends LockstepError {
  /** @param {string} message @param {ErrorOptions} [options] */
  constructor(message, options) {
    super(message, 'ERR_WORKER_LOST', options);
  }
}

/**
 * The PSI engine refused a step of a party (psi/party.js): `code` is the engine's (PSI_KEY,
 * PSI_PARAMS, PSI_LIMIT, PSI_MEMORY, PSI_INPUT, PSI_MESSAGE, PSI_ROUND, PSI_WRONG_ROLE, PSI_ORDER,
 * PSI_USAGE, PSI_CANCELLED, PSI_INTERNAL; bindings/wasm party.rs and lockstep_psi's
 * PsiError::code), the message is the engine's, `cause` the TaskError that carried it; or
 * PSI_SHARD: a helper of a sharded step failed after the split (its worker crashed, hung or
 * broke; psi/shard/coordinator.js), and the step with it, once, without a retry. The party and its
 * worker are kept.
 */
export class PsiError extends LockstepError {
  /** @param {string} message @param {string} code @param {ErrorOptions} [options] */
  constructor(message, code, options) {
    super(message, code, options);
  }
}

/** The pool was closed before the task could finish (or `run` was called after `close`). */
export class PoolClosedError extends LockstepError {
  /** @param {string} message */
  constructor(message) {
    super(message, 'ERR_POOL_CLOSED');
  }
}

/**
 * The plan engine refused a plan or a run (plan/run.js): `code` is the engine's (PLAN_INVALID,
 * PLAN_BINDING, PLAN_BUDGET, PLAN_DIVISION_BY_ZERO, PLAN_CANCELLED, PLAN_RUNTIME, PLAN_ISA;
 * lockstep_plan's `PlanError::code` and `RunError::code`), the message the engine's (naming the
 * item and field, or the input or output), or the package's own: PLAN_DETACHED (an array whose
 * buffer is detached, or an output detached while its run was in flight), PLAN_BACKEND (a
 * backend asked for that cannot load). PLAN_INVALID, PLAN_BINDING, PLAN_DETACHED (of an input),
 * PLAN_BUDGET and PLAN_BACKEND come before any work; PLAN_DIVISION_BY_ZERO, PLAN_CANCELLED and
 * PLAN_RUNTIME during it. None leaves anything written into the caller's outputs. An exception
 * thrown by onProgress ends the run with that exception, as it was thrown.
 */
export class PlanError extends LockstepError {
  /** @param {string} message @param {string} code @param {ErrorOptions} [options] */
  constructor(message, code, options) {
    super(message, code, options);
  }
}
