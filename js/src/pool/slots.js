// @ts-check
// Worker slots: one record per worker the pool started, and the state machine it moves
// through. Only this file changes a slot's state:
//
//   STARTING --handshake--> IDLE --task posted--> BUSY --task ended--> IDLE
//       \                    |                      |
//        +-------------------+----------------------+--terminated--> DYING --exited--> GONE
//
// A STARTING slot may already hold the one task that will be posted after its handshake (the
// task is BOUND to it). Live slots (STARTING, IDLE, BUSY) count against `workers`; DYING ones
// do not (so a replacement can start at once) but are counted as `terminating` until gone.

/** The states of a worker slot. */
export const SlotState = Object.freeze({
  STARTING: 'starting',
  IDLE: 'idle',
  BUSY: 'busy',
  DYING: 'dying',
  GONE: 'gone',
});

/** @typedef {typeof SlotState[keyof typeof SlotState]} SlotStateName */
/** @typedef {import('../index.js').WorkerHandle} WorkerHandle */
/** @typedef {import('./tasks.js').Task} Task */
/** @typedef {import('./timing.js').Timer} Timer */

/**
 * @typedef {object} Slot
 * @property {number} id            1, 2, ... in the order the pool started them
 * @property {string} name          `${pool name} worker #${id}`, in every error about it
 * @property {SlotStateName} state
 * @property {WorkerHandle} handle  NO_WORKER until (and unless) the host started it
 * @property {Task | null} task     STARTING: the task bound to it; BUSY: the one running
 * @property {string | null} asset  what its handshake said it loaded
 * @property {number} lastBeat      when its running task last did work (a rise of `done`) or was posted (now())
 * @property {number} lastDone      the most `done` its running task has reported (0 when posted)
 * @property {Timer | undefined} startupTimer
 * @property {Timer | undefined} timeoutTimer
 * @property {Timer | undefined} silenceTimer
 * @property {object | null} silenceToken  the armed silence timer's identity (a beat replaces it)
 * @property {Set<import('./affinity.js').Affinity>} affinities  the affinities bound to it
 */

/**
 * The handle of a slot whose worker the host has not (or could not) start: it posts nothing
 * and is gone at once, so a slot's handle needs no null checks.
 *
 * @type {WorkerHandle}
 */
export const NO_WORKER = Object.freeze({
  post() {},
  listen() {},
  terminate: () => Promise.resolve(),
  ref() {},
  unref() {},
});

/** Whether a STARTING slot has no task bound to it yet. @param {Slot} slot */
const isStartingFree = (slot) => slot.state === SlotState.STARTING && slot.task === null;

/** Whether the slot was told to terminate (DYING) or is gone: its messages are ignored. @param {Slot} slot */
export const isRetired = (slot) => slot.state === SlotState.DYING || slot.state === SlotState.GONE;

/** Clears the timers of the slot's running task (not its startup timer). @param {Slot} slot */
export function clearTaskTimers(slot) {
  clearTimeout(slot.timeoutTimer);
  clearTimeout(slot.silenceTimer);
  slot.silenceToken = null;
}

/**
 * The pool's slots: the live ones (in the order they started, which is the order they are
 * offered work in) and the dying ones, with the transitions between their states.
 */
export class Slots {
  /** @type {Set<Slot>} STARTING, IDLE or BUSY */
  #live = new Set();
  /** @type {Set<Slot>} told to terminate and not yet gone */
  #dying = new Set();
  #nextId = 1;

  /** How many live slots there are. */
  get size() {
    return this.#live.size;
  }

  /** How many slots are DYING. */
  get dying() {
    return this.#dying.size;
  }

  /** The live slots, as a copy: safe to iterate while killing some. */
  live() {
    return [...this.#live];
  }

  /** How many live slots are in `state`. @param {SlotStateName} state */
  count(state) {
    return this.live().filter((slot) => slot.state === state).length;
  }

  /** Whether a live slot is running a task or holds one bound to it. */
  anyOccupied() {
    return this.live().some((slot) => slot.state === SlotState.BUSY || slot.task !== null);
  }

  /**
   * The first slot that can take a task now: an IDLE one, else a STARTING one with no task
   * bound to it yet (a worker being started or replaced counts as free). Null if none.
   */
  free() {
    const live = this.live();
    return live.find((slot) => slot.state === SlotState.IDLE) ?? live.find(isStartingFree) ?? null;
  }

  /** Whether `slot` is live and can take a task now (IDLE, or STARTING with none bound). @param {Slot} slot */
  canTake(slot) {
    return this.#live.has(slot) && (slot.state === SlotState.IDLE || isStartingFree(slot));
  }

  /**
   * A new live slot in STARTING, with no worker yet: the caller starts it and sets `handle`.
   *
   * @param {string} poolName
   * @returns {Slot}
   */
  add(poolName) {
    const id = this.#nextId++;
    /** @type {Slot} */
    const slot = {
      id,
      name: `${poolName} worker #${id}`,
      state: SlotState.STARTING,
      handle: NO_WORKER,
      task: null,
      asset: null,
      lastBeat: 0,
      lastDone: 0,
      startupTimer: undefined,
      timeoutTimer: undefined,
      silenceTimer: undefined,
      silenceToken: null,
      affinities: new Set(),
    };
    this.#live.add(slot);
    return slot;
  }

  /**
   * STARTING -> IDLE, after its handshake. Returns the task bound to it (now unbound, to be
   * posted by the caller), or null.
   *
   * @param {Slot} slot
   * @param {string} asset
   */
  ready(slot, asset) {
    slot.asset = asset;
    slot.state = SlotState.IDLE;
    const task = slot.task;
    slot.task = null;
    return task;
  }

  /** Binds `task` to a STARTING slot: posted after its handshake. @param {Slot} slot @param {Task} task */
  bind(slot, task) {
    slot.task = task;
  }

  /** Takes the bound task off a STARTING slot (the task was aborted). @param {Slot} slot */
  unbind(slot) {
    slot.task = null;
  }

  /** IDLE -> BUSY, running `task`. @param {Slot} slot @param {Task} task */
  occupy(slot, task) {
    slot.state = SlotState.BUSY;
    slot.task = task;
  }

  /** BUSY -> IDLE: its task ended (or could not be posted). @param {Slot} slot */
  vacate(slot) {
    slot.task = null;
    slot.state = SlotState.IDLE;
  }

  /**
   * A live slot -> DYING: told to terminate. Returns the task it held (bound or running), now
   * taken off it, or null.
   *
   * @param {Slot} slot
   */
  retire(slot) {
    const task = slot.task;
    slot.task = null;
    slot.state = SlotState.DYING;
    this.#live.delete(slot);
    this.#dying.add(slot);
    return task;
  }

  /** -> GONE: the worker has exited. @param {Slot} slot */
  bury(slot) {
    if (slot.state !== SlotState.DYING) this.#live.delete(slot);
    slot.state = SlotState.GONE;
    this.#dying.delete(slot);
  }
}
