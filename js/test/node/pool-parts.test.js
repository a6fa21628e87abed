// The pool's parts (src/pool/) on their own, without workers: the slot state machine, the
// queue's bound, the reservation ledger, the silence limit, the handshake's verdict and the
// option defaults. The scenarios (test/scenarios/pool.js) check the rules they add up to.
import { test } from '../bounded.js';
import assert from 'node:assert/strict';
import { BudgetError, QueueFullError, StartupError } from '../../src/pool/errors.js';
import { PROTOCOL_VERSION } from '../../src/pool/protocol.js';
import { acceptHandshake } from '../../src/pool/handshake.js';
import { parsePoolOptions } from '../../src/pool/options.js';
import { TaskQueue } from '../../src/pool/queue.js';
import { Reservations } from '../../src/pool/reservations.js';
import { SILENCE_DEFAULTS, SilenceMeter } from '../../src/pool/silence.js';
import { NO_WORKER, SlotState, Slots, isRetired } from '../../src/pool/slots.js';
import { TaskState } from '../../src/pool/tasks.js';

const task = (id) => ({ id, op: 'op', state: TaskState.NEW });

test('slots: starting -> idle -> busy -> idle -> dying -> gone, offered in start order', () => {
  const slots = new Slots();
  const a = slots.add('p');
  const b = slots.add('p');
  assert.equal(a.name, 'p worker #1');
  assert.equal(a.handle, NO_WORKER);
  assert.equal(slots.free(), a, 'an unbound starting slot is free');
  slots.bind(a, task(1));
  assert.equal(slots.free(), b, 'a bound one is not');
  assert.equal(slots.ready(a, 'fixture').id, 1, 'ready hands back the bound task');
  assert.equal(a.state, SlotState.IDLE);
  assert.equal(a.task, null);
  assert.equal(slots.free(), a, 'an idle slot comes before a starting one');
  slots.occupy(a, task(2));
  assert.equal(slots.count(SlotState.BUSY), 1);
  assert.ok(slots.anyOccupied());
  slots.vacate(a);
  assert.equal(a.state, SlotState.IDLE);
  slots.occupy(a, task(3));
  assert.equal(slots.retire(a).id, 3, 'retire hands back the running task');
  assert.ok(isRetired(a));
  assert.deepEqual([slots.size, slots.dying], [1, 1], 'a dying slot no longer counts as live');
  slots.bury(a);
  assert.equal(a.state, SlotState.GONE);
  assert.deepEqual([slots.size, slots.dying], [1, 0]);
  assert.deepEqual(slots.live(), [b]);
});

test('queue: FIFO, the first task that fits, removal anywhere, refusal past maxQueue (0: never queues)', () => {
  const queue = new TaskQueue(2);
  const [t1, t2, t3] = [task(1), task(2), task(3)];
  assert.ok(queue.offer(t1) && queue.offer(t2));
  assert.equal(t1.state, TaskState.QUEUED);
  assert.equal(queue.offer(t3), false);
  assert.equal(t3.state, TaskState.NEW, 'a refused task is left untouched');
  assert.match(queue.refusal('op').message, /already holds maxQueue = 2 tasks/);
  queue.remove(t1);
  queue.remove(t1); // twice: harmless
  assert.equal(queue.length, 1);
  assert.equal(queue.take(() => true), t2);
  // take() gives the longest-waiting task that fits; takeAll() every one that matches.
  const many = new TaskQueue(Infinity);
  const [a, b, c, d] = [task(5), task(6), task(7), task(8)];
  [a, b, c, d].forEach((t) => many.offer(t));
  assert.equal(many.take((t) => t.id % 2 === 0), b, 'the first that fits, not the first');
  assert.deepEqual(many.takeAll((t) => t.id !== 5), [c, d], 'in order');
  assert.equal(many.take(() => false), undefined);
  assert.equal(many.length, 1);
  const none = new TaskQueue(0);
  assert.equal(none.offer(task(4)), false);
  assert.ok(none.refusal('echo') instanceof QueueFullError);
  assert.match(none.refusal('echo').message, /no worker is free for 'echo' and maxQueue is 0/);
});

test('reservations: refused past the budget, released once, held until the worker is gone', () => {
  const reservations = new Reservations(100);
  const [t1, t2] = [task(1), task(2)];
  reservations.take(t1, 60);
  const refusal = reservations.refusal('op', 41);
  assert.ok(refusal instanceof BudgetError);
  assert.deepEqual([refusal.requested, refusal.available, refusal.budget], [41, 40, 100]);
  assert.equal(reservations.refusal('op', 40), null);
  reservations.release(t1);
  reservations.release(t1);
  assert.equal(reservations.reserved, 0, 'released once');
  const slot = new Slots().add('p');
  reservations.take(t2, 30);
  reservations.holdUntilGone(slot, t2);
  assert.ok(reservations.holds(slot));
  assert.equal(reservations.reserved, 30, 'held');
  reservations.workerGone(slot);
  assert.equal(reservations.reserved, 0);
  assert.equal(reservations.holds(slot), false);
});

test('silence: initial before a measurement, then factor x the longest recent gap, at least min', () => {
  const meter = new SilenceMeter({ initial: 1_000, factor: 10, min: 50, window: 2 });
  assert.equal(meter.limit('op'), 1_000);
  meter.record('op', 30);
  meter.record('op', 2);
  assert.equal(meter.limit('op'), 300);
  meter.record('op', 1); // the 30 ms gap leaves the window of 2
  assert.equal(meter.limit('op'), 50, 'at least min');
  assert.equal(meter.limit('other'), 1_000, 'per op');
  assert.equal(meter.limit('op', false), Infinity);
  assert.equal(meter.limit('op', 7), 7);
  assert.equal(meter.limit('op', 2 ** 40), Infinity, 'past what a timer can wait');
  // A floor under the learnt limit: the larger of the two.
  assert.equal(meter.limit('op', { atLeast: 400 }), 400);
  assert.equal(meter.limit('op', { atLeast: 20 }), 50, 'the learnt limit when higher');
  assert.equal(meter.limit('other', { atLeast: 20 }), 1_000, 'the initial limit before any measurement');
});

test('silence: gaps per unit of work, scaled to the op\'s step; a task\'s last beat teaches nothing', () => {
  const meter = new SilenceMeter({ initial: 1_000, factor: 10, min: 50, window: 4 });
  meter.record('op', 20, 10, false); // a warm-up that ended in one beat: no step seen
  assert.equal(meter.limit('op'), 1_000, 'still the initial limit');
  meter.record('op', 5, 0, true); // no work: nothing learnt
  assert.equal(meter.limit('op'), 1_000);
  meter.record('op', 300, 100, true); // 3 ms a unit, 100 units a beat
  assert.equal(meter.limit('op'), 3_000, '10 x 3 ms x 100 units');
  meter.record('op', 80, 20, true); // 4 ms a unit, on a smaller beat
  assert.equal(meter.limit('op'), 4_000, 'the slowest rate, times the largest step');
  meter.record('op', 1, 1, true);
  meter.record('op', 1, 1, true);
  meter.record('op', 1, 1, true); // the window of 4 now holds the 80 ms beat and three small ones
  assert.equal(meter.limit('op'), 800, '10 x 4 ms x 20 units');
});

test('handshake: a hello of this protocol and ABI is accepted; anything else is a StartupError', () => {
  const hello = { type: 'hello', protocol: PROTOCOL_VERSION, abi: 3, asset: 'wasm-simd' };
  assert.equal(acceptHandshake('w', hello, 3), hello);
  assert.equal(acceptHandshake('w', hello, undefined), hello, 'any ABI when the pool names none');
  const verdicts = [
    [{ ...hello, abi: 2 }, 'version', /loaded wasm-simd with ABI version 2; this pool needs ABI version 3/],
    [{ ...hello, protocol: 99 }, 'version', /speaks protocol version 99/],
    [{ type: 'progress', id: 1, done: 0, total: 1 }, 'version', /sent 'progress' before its handshake/],
    [{ type: 'startup-error', reason: 'asset', message: 'gone', path: '/x.wasm' }, 'asset', /could not load its asset \/x\.wasm: gone/],
    [{ type: 'startup-error', reason: 'load', message: 'bad' }, 'crash', /could not load its asset: bad/],
  ];
  for (const [message, reason, text] of verdicts) {
    const error = acceptHandshake('w', message, 3);
    assert.ok(error instanceof StartupError, JSON.stringify(message));
    assert.equal(error.reason, reason);
    assert.match(error.message, text);
  }
});

test('options: defaults fill in, also for options given as undefined; bad ones are refused', () => {
  const settings = parsePoolOptions({ worker: 'w.js', silence: { min: undefined, factor: undefined } });
  assert.deepEqual(settings.silence, { ...SILENCE_DEFAULTS });
  assert.equal(settings.startupTimeout, 30_000);
  assert.equal(settings.maxQueue, Infinity);
  assert.equal(settings.taskTimeout, Infinity);
  assert.equal(parsePoolOptions({ worker: 'w.js', startupTimeout: 2 ** 40 }).startupTimeout, Infinity);
  assert.throws(() => parsePoolOptions({ worker: 'w.js', silence: { factor: 0.5 } }), /silence\.factor must be >= 1/);
  assert.throws(() => parsePoolOptions({ worker: 'w.js', silence: { initial: null } }), RangeError);
  assert.throws(() => parsePoolOptions({ worker: 'w.js', maxQueue: -1 }), /maxQueue must be a whole number >= 0 or Infinity/);
  assert.throws(() => parsePoolOptions({ worker: 1 }), TypeError);
});
