// @ts-check
// A task: one `run` call, from its submission to its settlement. Its state says where it is:
//
//   QUEUED   waiting in the queue for a worker (queue.js)
//   BOUND    given to a worker that is still starting; posted after that worker's handshake
//   RUNNING  posted to its worker
//   DONE     resolved or rejected, once: nothing can settle it again
//
// A task is created when its options are checked, its input copied and its bytes about to be
// reserved, so every task that exists holds a reservation until it is DONE (or, when its worker
// is being terminated, until that worker is gone: reservations.js).

/** The states of a task, in the order it moves through them (QUEUED and BOUND are optional). */
export const TaskState = Object.freeze({
  NEW: 'new',
  QUEUED: 'queued',
  BOUND: 'bound',
  RUNNING: 'running',
  DONE: 'done',
});

/** @typedef {typeof TaskState[keyof typeof TaskState]} TaskStateName */
/** @typedef {import('../index.js').Progress} Progress */
/** @typedef {import('./slots.js').Slot} Slot */

/**
 * @typedef {object} Task
 * @property {number} id              the pool's number for it, sent to the worker
 * @property {string} op
 * @property {unknown} input          the snapshot (or the owned input) until posted; then null
 * @property {Transferable[]} transfer  the buffers posted with the input; emptied once posted
 * @property {(output: unknown) => void} resolve
 * @property {(reason: unknown) => void} reject
 * @property {TaskStateName} state
 * @property {Slot | null} slot       the worker it is bound to or running on
 * @property {number} timeout         ms it may run once posted; Infinity for no limit
 * @property {number | false | { atLeast: number } | undefined} silence  its own silence limit (false: none), or a
 *   floor under the learnt one
 * @property {AbortSignal | undefined} signal
 * @property {(() => void) | undefined} onAbort    the listener on `signal`, removed when DONE
 * @property {((progress: Progress) => void) | undefined} onProgress
 * @property {((output: unknown) => void) | undefined} validate
 * @property {import('./affinity.js').Affinity | undefined} affinity  the worker it must run on
 */

/**
 * A new task (state NEW, on no worker) for the checked `spec` and copied `input`.
 *
 * @param {{ id: number, op: string, input: unknown, transfer: Transferable[],
 *           resolve: Task['resolve'], reject: Task['reject'] }} submitted
 * @param {import('./options.js').RunSpec} spec
 * @returns {Task}
 */
export function createTask({ id, op, input, transfer, resolve, reject }, spec) {
  return {
    id,
    op,
    input,
    transfer,
    resolve,
    reject,
    state: TaskState.NEW,
    slot: null,
    timeout: spec.timeout,
    silence: spec.silence,
    signal: spec.signal,
    onAbort: undefined,
    onProgress: spec.onProgress,
    validate: spec.validate,
    affinity: spec.affinity,
  };
}

/** Whether the task has been resolved or rejected. @param {Task} task */
export const isSettled = (task) => task.state === TaskState.DONE;

/**
 * Marks the task DONE and stops listening to its signal. The caller resolves or rejects it
 * right after; since nothing settles a DONE task, that happens once.
 *
 * @param {Task} task
 */
export function markSettled(task) {
  task.state = TaskState.DONE;
  if (task.onAbort) task.signal?.removeEventListener('abort', task.onAbort);
}
