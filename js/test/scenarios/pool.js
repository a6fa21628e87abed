// The pool's scenarios: its lifecycle with real worker fixtures (test/fixtures/): the handshake,
// crashes, hangs, timeouts, queue and memory, aborts, closing, inputs and progress; and worker
// affinities (src/pool/affinity.js).

import {
  AbortError,
  BudgetError,
  InputError,
  Pool,
  PoolClosedError,
  ProtocolError,
  QueueFullError,
  SILENCE_DEFAULTS,
  StartupError,
  TaskError,
  TaskTimeoutError,
  WorkerCrashError,
  WorkerHangError,
  WorkerLostError,
  createPsiPool,
  psiRequest,
  spawnWorker,
} from '../../src/index.js';
import { blockUntil, equal, ok, rejects, sameBytes, until } from '../assert.js';
import { closed } from './harness.js';

const fixture = (name) => new URL(`../fixtures/${name}.js`, import.meta.url);

// Fast limits so failures are seen in milliseconds; the startup timeout stays generous (a
// loaded machine starts a worker in tens of ms, Chromium's first in hundreds).
const FAST = { startupTimeout: 20_000, silence: { initial: 5_000, min: 200, factor: 10 } };

const pool = (options = {}) => new Pool({ worker: fixture('ops'), workers: 1, ...FAST, ...options });

// A spawner whose workers' termination waits for `release()`, and that records what each
// worker sent: a worker that is slow to die, as a stuck one is.
function gatedSpawn({ urls } = {}) {
  let release;
  const gate = new Promise((resolve) => (release = resolve));
  const record = { spawned: 0, messages: [], terminations: 0, release };
  record.spawn = (url, options) => {
    const chosen = urls ? urls[Math.min(record.spawned, urls.length - 1)] : url;
    record.spawned++;
    const handle = spawnWorker(chosen, options);
    return {
      ...handle,
      listen(listeners) {
        handle.listen({
          ...listeners,
          message: (data) => {
            record.messages.push(data);
            listeners.message(data);
          },
        });
      },
      terminate() {
        record.terminations++;
        return urls ? handle.terminate() : gate.then(() => handle.terminate());
      },
    };
  };
  return record;
}

const ticks = (count, every) => ({ count, every });

// Runs `fn` from Node's check phase (setImmediate): a loop blocked there runs its due timers
// before it delivers the messages that arrived meanwhile. In a page, from a microtask.
const fromCheckPhase = (fn) =>
  new Promise((resolve, reject) =>
    (globalThis.setImmediate ?? queueMicrotask)(() => {
      try {
        resolve(fn());
      } catch (error) {
        reject(error);
      }
    }),
  );

// Lets a worker held at its gate (fixtures/ops.js) go on, then blocks this thread until the
// worker has posted what follows and `deadline` (a performance.now() time) has passed: the
// message is then waiting while the timer that was due at the deadline fires.
const releaseAndBlock = (state, deadline, what) =>
  fromCheckPhase(() => {
    Atomics.store(state, 0, 2);
    Atomics.notify(state, 0);
    blockUntil(() => Atomics.load(state, 0) === 3 && performance.now() > deadline, what);
  });

const sharedState = () => new Int32Array(new SharedArrayBuffer(4));

export const poolScenarios = [
  [
    'a task round-trips its input and reports progress',
    async () => {
      const p = pool();
      equal(await p.run('echo', { a: [1, 'two', null] }).then((v) => JSON.stringify(v)), '{"a":[1,"two",null]}');
      const seen = [];
      equal(await p.run('ticks', ticks(4, 1), { onProgress: (r) => seen.push(`${r.done}/${r.total}`) }), 4);
      equal(seen.join(' '), '1/4 2/4 3/4 4/4', 'progress reports');
      await closed(p);
    },
  ],
  [
    'inputs are snapshotted at submission: mutating or detaching them after cannot change the result',
    async () => {
      const p = pool();
      const running = p.run('ticks', ticks(3, 5));
      const bytes = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]);
      const view = bytes.subarray(2, 6);
      const nested = { list: [new Float64Array([1.5, -0])], view };
      const queued = p.run('echo', nested);
      equal(p.stats.queued, 1, 'the echo waits behind the running task');
      bytes.fill(0); // mutate the subarray's buffer
      nested.list[0][0] = 99;
      nested.list.push('added later');
      structuredClone(nested.list[0].buffer, { transfer: [nested.list[0].buffer] }); // detach
      const out = await queued;
      await running;
      sameBytes(out.view, new Uint8Array([3, 4, 5, 6]), 'the subarray as submitted');
      equal(out.view.buffer.byteLength, 4, 'a subarray snapshot copies its own bytes only');
      equal(out.list.length, 1, 'the list as submitted');
      equal(out.list[0][0], 1.5, 'the float as submitted');
      ok(Object.is(out.list[0][1], -0), '-0 stays -0');
      if (globalThis.Buffer) {
        // Node's Buffer#slice shares memory: the snapshot must not use it.
        const file = globalThis.Buffer.from([1, 1, 1, 1, 1, 1, 1, 1]);
        const part = file.subarray(2, 4);
        const ahead = p.run('ticks', ticks(2, 5));
        const echoed = p.run('echo', part); // queued: posted later
        file.fill(9);
        await ahead;
        sameBytes(await echoed, new Uint8Array([1, 1]), 'a Buffer as submitted');
        equal(file.length, 8, "the caller's Buffer is not detached");
      }
      // Read by its internal slots: a shadowed length or a swapped prototype changes nothing.
      const shadowed = new Uint16Array([7, 8, 9]);
      Object.defineProperty(shadowed, 'length', { value: 1 });
      Object.setPrototypeOf(shadowed, Float64Array.prototype);
      const echoedShadow = await p.run('echo', shadowed);
      ok(echoedShadow instanceof Uint16Array, 'its own class, not the prototype it was given');
      sameBytes(new Uint8Array(echoedShadow.buffer), new Uint8Array(new Uint16Array([7, 8, 9]).buffer), 'all of its elements');
      const disguised = new Uint8Array([4, 5, 6]);
      Object.setPrototypeOf(disguised, ArrayBuffer.prototype);
      const echoedDisguised = await p.run('echo', disguised);
      ok(echoedDisguised instanceof Uint8Array, 'a typed array dressed as an ArrayBuffer stays a typed array');
      sameBytes(echoedDisguised, new Uint8Array([4, 5, 6]), 'with its bytes');
      await closed(p);
    },
  ],
  [
    'an input that cannot be snapshotted is refused at submission',
    async () => {
      const p = pool();
      await rejects(p.run('echo', { f() {} }), InputError, /input\.f is a function/);
      const buffer = new ArrayBuffer(8);
      const view = new Uint8Array(buffer, 2);
      structuredClone(buffer, { transfer: [buffer] });
      await rejects(p.run('echo', [1, view]), InputError, /input\[1\] cannot be copied/);
      equal(p.reservedBytes, 0, 'refused tasks reserve nothing');
      await closed(p);
    },
  ],
  [
    'an input that throws while it is measured or copied is an InputError carrying the throw',
    async () => {
      const p = pool();
      const refusal = new Error('this getter refuses');
      const input = {
        get field() {
          throw refusal;
        },
      };
      // Measured first (the default reservation counts its bytes), then copied (a reservation given).
      const measured = await rejects(p.run('echo', input), InputError, /this getter refuses/);
      equal(measured.cause, refusal, 'measured: the cause');
      const copied = await rejects(p.run('echo', input, { reserve: 10 }), InputError, /this getter refuses/);
      equal(copied.cause, refusal, 'copied: the cause');
      const keys = new Proxy({}, {
        ownKeys() {
          throw refusal;
        },
      });
      equal((await rejects(p.run('echo', [keys]), InputError)).cause, refusal, 'a proxy: the cause');
      equal(p.reservedBytes, 0, 'refused tasks reserve nothing');
      equal(await p.run('echo', 'next'), 'next');
      await closed(p);
    },
  ],
  [
    'an abort fired while the input is measured or copied rejects the task',
    async () => {
      const p = pool();
      const before = await p.run('whoami');
      const aborting = (controller) => ({
        get value() {
          controller.abort(new Error('aborted by a getter'));
          return 1;
        },
      });
      for (const [what, options] of [
        ['while measured', {}],
        ['while copied', { reserve: 10 }],
        ['while its buffers are listed (owned)', { owned: true, reserve: 10 }],
      ]) {
        const controller = new AbortController();
        const task = p.run('echo', aborting(controller), { ...options, signal: controller.signal });
        const error = await rejects(task, AbortError, /aborted/);
        equal(error.cause?.message, 'aborted by a getter', `${what}: the signal's reason`);
        equal(p.reservedBytes, 0, `${what}: nothing reserved`);
      }
      equal(await p.run('whoami'), before, 'refused before any worker saw them');
      // An owned input is cloned when posted, its getters read once more: aborted as it runs.
      const controller = new AbortController();
      let reads = 0;
      const late = {
        get value() {
          if (++reads === 2) controller.abort(new Error('aborted while posted'));
          return 1;
        },
      };
      const posted = p.run('echo', late, { owned: true, reserve: 10, signal: controller.signal });
      equal((await rejects(posted, AbortError, /aborted/)).cause?.message, 'aborted while posted', 'posted: the reason');
      equal(reads, 2, 'read when its buffers were listed, then when posted');
      ok((await p.run('whoami')) !== before, 'the worker it reached was replaced');
      await closed(p);
    },
  ],
  [
    'a worker that exits fails its task; the tasks queued behind it run on a replacement',
    async (env) => {
      const p = pool({ silence: { initial: 300, min: 300 } });
      const first = await p.run('whoami');
      const crash = p.run('exit');
      const behind = [p.run('echo', 1), p.run('whoami')];
      if (env.browser) {
        // Browsers give no exit event: the silence limit catches it.
        await rejects(crash, WorkerHangError, /reported no progress on 'exit' for 300 ms/);
      } else {
        const error = await rejects(crash, WorkerCrashError, /exited with code 7/);
        equal(error.exitCode, 7, 'exit code');
      }
      equal(await behind[0], 1);
      ok((await behind[1]) !== first, 'the queued task ran on a new worker');
      await closed(p);
    },
  ],
  [
    'a worker that hangs without progress is caught by the silence limit and replaced',
    async () => {
      const p = pool({ silence: { initial: 250, min: 50, factor: 10 } });
      const hang = p.run('hang');
      const behind = p.run('echo', 'after');
      const error = await rejects(hang, WorkerHangError, /no progress on 'hang' for 250 ms/);
      equal(error.limit, 250, 'the initial limit applies before any measurement');
      equal(await behind, 'after');
      await closed(p);
    },
  ],
  [
    'the silence limit is derived from measured progress gaps',
    async () => {
      const p = pool({ silence: { initial: 60_000, min: 100, factor: 10 } });
      equal(p.silenceLimit('ticks'), 60_000, 'no measurement yet');
      await p.run('ticks', ticks(5, 10));
      const limit = p.silenceLimit('ticks');
      ok(limit >= 100 && limit < 60_000, `a measured limit (${limit} ms)`);
      // Same op, one beat far slower than ever measured: caught at the derived limit.
      const slow = p.run('ticks', ticks(2, 60_000));
      const error = await rejects(slow, WorkerHangError, /reported no progress on 'ticks'/);
      equal(error.limit, limit, 'the derived limit');
      equal(p.silenceLimit('other op'), 60_000, 'limits are per op');
      await closed(p);
    },
  ],
  [
    'the silence limit scales with the work a beat reports: a small warm-up does not cut a large task short',
    async () => {
      const p = pool({ silence: { initial: 5_000, min: 200, factor: 10 } });
      // A warm-up of 2 units (5 ms each) in one beat: gaps alone would give the 200 ms minimum.
      equal(await p.run('blocks', { total: 2, step: 2, unit: 5 }), 2);
      // Then beats of 100 units, 500 ms each: 10x the warm-up's rate times 100 units allows them.
      const reports = [];
      const large = { total: 300, step: 100, unit: 5 };
      equal(await p.run('blocks', large, { onProgress: ({ done }) => reports.push(done) }), 300);
      equal(reports.join(), '100,200,300', 'every beat arrived');
      const limit = p.silenceLimit('blocks');
      ok(limit >= 10 * 5 * 100, `the op's next first beat may take 10 x its rate x its 100-unit step (${limit} ms)`);
      equal(await p.run('blocks', large), 300, 'a second large task, its first beat judged by the step learnt');
      await closed(p);
    },
  ],
  [
    'silence options given as undefined take their defaults',
    async () => {
      const p = pool({ silence: { initial: undefined, min: undefined, factor: undefined, window: undefined } });
      equal(p.silenceLimit('ticks'), SILENCE_DEFAULTS.initial, 'the default initial limit');
      equal(await p.run('ticks', ticks(3, 5)), 3, 'not taken for hung at once');
      const limit = p.silenceLimit('ticks');
      ok(limit >= SILENCE_DEFAULTS.min && limit < SILENCE_DEFAULTS.initial, `a measured limit, at least the default min (${limit} ms)`);
      await closed(p);
    },
  ],
  [
    'a task that throws fails alone: the worker stays',
    async () => {
      const p = pool();
      const before = await p.run('whoami');
      const error = await rejects(p.run('throw'), TaskError, /'throw' failed in .*RangeError: the fixture refuses/);
      equal(error.cause.name, 'RangeError');
      equal(error.cause.code, 'E_FIXTURE');
      equal(await p.run('whoami'), before, 'same worker');
      await closed(p);
    },
  ],
  [
    'a wasm trap fails its task and retires the worker',
    async () => {
      const p = pool();
      const before = await p.run('whoami');
      // V8 and SpiderMonkey say "unreachable", JavaScriptCore "Unreachable code should not be executed".
      const error = await rejects(p.run('trap'), TaskError, /RuntimeError: (unreachable|Unreachable code should not be executed)/);
      equal(error.cause.name, 'RuntimeError');
      ok((await p.run('whoami')) !== before, 'a new worker');
      await closed(p);
    },
  ],
  [
    'a wasm stack overflow fails its task and retires the worker',
    async () => {
      const p = pool();
      const before = await p.run('whoami');
      // V8: RangeError: Maximum call stack size exceeded; SpiderMonkey: InternalError: too much recursion.
      const error = await rejects(p.run('overflow'), TaskError, /Maximum call stack size exceeded|too much recursion/);
      ok(['RangeError', 'InternalError'].includes(error.cause.name), error.cause.name);
      ok((await p.run('whoami')) !== before, 'a new worker');
      await closed(p);
    },
  ],
  [
    'an error thrown outside any task is a crash',
    async () => {
      const p = pool();
      const crash = p.run('uncaught');
      const behind = p.run('echo', 2);
      await rejects(crash, WorkerCrashError, /crashed: .*thrown outside any task/);
      equal(await behind, 2);
      await closed(p);
    },
  ],
  [
    'a malformed message or output fails the task and replaces the worker',
    async () => {
      const p = pool();
      const before = await p.run('whoami');
      const bad = p.run('malformed');
      const behind = p.run('whoami');
      await rejects(bad, ProtocolError, /sent a 'result' message without a task id/);
      const after = await behind;
      ok(after !== before, 'a new worker');
      const validate = (out) => {
        if (typeof out !== 'number') throw new TypeError('expected a number');
      };
      await rejects(p.run('echo', 'text', { validate }), ProtocolError, /malformed output for 'echo': expected a number/);
      ok((await p.run('whoami')) !== after, 'replaced again');
      await closed(p);
    },
  ],
  [
    'a worker that never finishes its handshake: startup timeout, every pending task rejected',
    async () => {
      const p = new Pool({ worker: fixture('silent'), workers: 1, startupTimeout: 300 });
      const first = p.run('echo', 1);
      const queued = p.run('echo', 2);
      const error = await rejects(first, StartupError, /did not finish its handshake within 300 ms/);
      equal(error.reason, 'timeout');
      equal(await queued.catch((e) => e), error, 'the queued task gets the same error');
      equal(await p.run('echo', 3).catch((e) => e), error, 'so does a later one (no retry)');
      equal(p.reservedBytes, 0);
      await closed(p);
    },
  ],
  [
    'a worker of another protocol version is refused, naming both versions',
    async () => {
      const p = new Pool({ worker: fixture('wrong-protocol'), workers: 2, startupTimeout: 20_000 });
      const tasks = [p.run('echo', 1), p.run('echo', 2), p.run('echo', 3)];
      const error = await rejects(tasks[0], StartupError, /speaks protocol version 99; this pool speaks version 1/);
      equal(error.reason, 'version');
      for (const task of tasks.slice(1)) await rejects(task, StartupError);
      await closed(p);
    },
  ],
  [
    "a worker whose module has another ABI version is refused, naming both and the asset",
    async () => {
      const p = pool({ abi: 2 });
      const error = await rejects(p.run('echo', 1), StartupError, /loaded fixture with ABI version 1; this pool needs ABI version 2/);
      equal(error.expected, 2);
      equal(error.actual, 1);
      await closed(p);
    },
  ],
  [
    'a worker whose module throws while loading is a startup crash',
    async () => {
      const p = new Pool({ worker: fixture('broken-build'), workers: 1, startupTimeout: 20_000 });
      const error = await rejects(p.run('echo', 1), StartupError, /failed before its handshake/);
      equal(error.reason, 'crash');
      await closed(p);
    },
  ],
  [
    'a missing wasm asset is a startup error naming its path',
    async () => {
      const base = new URL('./no-such-folder/', import.meta.url);
      const p = createPsiPool({ workers: 1, assetBase: base, asset: 'scalar', startupTimeout: 20_000 });
      const error = await rejects(
        psiRequest(p, { key: new Uint8Array(32).fill(7), values: ['a'] }),
        StartupError,
        /could not load its asset .*no-such-folder\/scalar\/lockstep_wasm_bg\.wasm/,
      );
      equal(error.reason, 'asset');
      ok(error.path.endsWith('no-such-folder/scalar/lockstep_wasm_bg.wasm'), error.path);
      await closed(p);
    },
  ],
  [
    'a replacement that fails to start rejects every pending task instead of retrying',
    async () => {
      const spawner = gatedSpawn({ urls: [fixture('ops'), fixture('wrong-protocol')] });
      const p = pool({ spawn: spawner.spawn, silence: { initial: 300, min: 300 } });
      const crash = p.run('exit');
      const pending = [p.run('echo', 1), p.run('echo', 2)];
      await rejects(crash, Error, /exited with code 7|no progress on 'exit'/);
      for (const task of pending) await rejects(task, StartupError, /protocol version 99/);
      await rejects(p.run('echo', 3), StartupError, /protocol version 99/);
      equal(spawner.spawned, 2, 'one replacement, no retries');
      await closed(p);
    },
  ],
  [
    'maxQueue bounds the waiting tasks; maxQueue 0 means run now or be refused',
    async () => {
      const zero = pool({ maxQueue: 0 });
      const running = zero.run('ticks', ticks(3, 5));
      await rejects(zero.run('echo', 1), QueueFullError, /no worker is free for 'echo' and maxQueue is 0/);
      await running;
      equal(await zero.run('echo', 2), 2, 'runs once the worker is free');
      // A worker being replaced is a free worker: a task binds to the one starting.
      const crash = zero.run('uncaught');
      await rejects(crash, WorkerCrashError);
      equal(await zero.run('echo', 3), 3, 'runs on the replacement');
      await closed(zero);

      const two = pool({ maxQueue: 2 });
      const tasks = [two.run('ticks', ticks(2, 5)), two.run('echo', 'a'), two.run('echo', 'b')];
      await rejects(two.run('echo', 'c'), QueueFullError, /already holds maxQueue = 2 tasks/);
      equal((await Promise.all(tasks)).join(), '2,a,b');
      await closed(two);
    },
  ],
  [
    'reservations are taken at submission, refused past the budget, returned at the end',
    async () => {
      const p = pool({ workers: 2, memoryBudget: 12_000 });
      const a = p.run('ticks', ticks(2, 5), { reserve: 6_000 });
      equal(p.reservedBytes, 6_000);
      const error = await rejects(p.run('echo', 1, { reserve: 7_000 }), BudgetError, /needs 7000 bytes but only 6000 of the 12000-byte budget are free/);
      equal(error.available, 6_000);
      const b = p.run('echo', new Uint8Array(100)); // default: 4 x 100 + 4096
      equal(p.reservedBytes, 6_000 + 4_496);
      await Promise.all([a, b]);
      equal(p.reservedBytes, 0);
      await rejects(p.run('throw', null, { reserve: 1 }), TaskError);
      equal(p.reservedBytes, 0, 'returned after a failure too');
      await closed(p);
    },
  ],
  [
    "a stuck worker's reservation is held until it is really gone",
    async () => {
      const spawner = gatedSpawn();
      const p = pool({ spawn: spawner.spawn });
      const controller = new AbortController();
      const task = p.run('ticks', ticks(1e9, 5), { reserve: 5_000, signal: controller.signal });
      await until(() => spawner.messages.some((m) => m.type === 'progress'), 'the task to run');
      controller.abort(new Error('user cancelled'));
      const error = await rejects(task, AbortError, /'ticks' was aborted/);
      equal(error.cause.message, 'user cancelled');
      equal(p.reservedBytes, 5_000, 'held while the worker is not gone');
      equal(p.stats.terminating, 1);
      equal(await p.run('echo', 'meanwhile', { reserve: 10 }), 'meanwhile', 'a replacement serves');
      equal(p.reservedBytes, 5_000);
      spawner.release();
      await until(() => p.reservedBytes === 0, 'the reservation to return');
      equal(p.stats.terminating, 0);
      await closed(p);
    },
  ],
  [
    'abort: a queued task is removed, a running one stops its worker, an aborted signal is refused',
    async () => {
      const p = pool();
      const before = await p.run('whoami');
      const running = new AbortController();
      const queued = new AbortController();
      const a = p.run('ticks', ticks(1e9, 5), { signal: running.signal });
      const b = p.run('echo', 'never', { signal: queued.signal, reserve: 700 });
      const c = p.run('whoami');
      queued.abort();
      await rejects(b, AbortError);
      equal(p.stats.queued, 1, 'removed from the queue');
      running.abort();
      await rejects(a, AbortError);
      ok((await c) !== before, 'the next task runs on a replacement');
      await rejects(p.run('echo', 1, { signal: AbortSignal.abort() }), AbortError, /already aborted/);
      await closed(p);
    },
  ],
  [
    'a task timeout starts when the task runs, not while it waits',
    async () => {
      const p = pool();
      const first = p.run('ticks', ticks(6, 20)); // ~120 ms
      const waits = p.run('echo', 'ok', { timeout: 60 });
      const long = p.run('ticks', ticks(1e9, 5), { timeout: 60 });
      equal(await first, 6);
      equal(await waits, 'ok', 'queued longer than its timeout, ran well within it');
      const error = await rejects(long, TaskTimeoutError, /ran longer than its 60 ms timeout/);
      equal(error.timeout, 60);
      await closed(p);
    },
  ],
  [
    'a result that arrived in time is delivered before the task timeout is decided',
    async () => {
      // The result is posted within the 300 ms, and waits while this thread is busy past them.
      const p = pool();
      await p.run('whoami');
      const state = sharedState();
      const posted = performance.now();
      const task = p.run('gated', { state }, { owned: true, timeout: 300 });
      await until(() => Atomics.load(state, 0) === 1, 'the op to start');
      await releaseAndBlock(state, posted + 400, 'the result, and the timeout to be due');
      equal(await task, 'answered', 'the result that came in time');
      await closed(p);
    },
  ],
  [
    'a handshake that arrived in time is delivered before the startup timeout is decided',
    async () => {
      // The handshake is posted within the 300 ms, and waits while this thread is busy past them.
      // The worker is started (and its module loaded) first, so the 300 ms are the handshake's
      // alone, not a loaded machine's time to start a thread.
      const handle = spawnWorker(fixture('ops'), { name: 'started beforehand' });
      let q;
      try {
        const loaded = sharedState();
        handle.post({ type: 'fixture:loaded', state: loaded });
        await until(() => Atomics.load(loaded, 0) === 1, "the worker's module to load");
        const gate = sharedState();
        q = pool({ startupTimeout: 300, config: { gate }, spawn: () => handle });
        const spawned = performance.now();
        const first = q.run('echo', 'up');
        await until(() => Atomics.load(gate, 0) === 1, 'the worker to load its asset');
        await releaseAndBlock(gate, spawned + 400, 'the handshake, and the startup timeout to be due');
        equal(await first, 'up', 'the handshake that came in time');
        equal(q.stats.broken, false, 'the pool is not broken');
      } finally {
        if (q) await closed(q);
        else await handle.terminate();
      }
    },
  ],
  [
    'late responses from a replaced worker are ignored',
    async () => {
      const spawner = gatedSpawn();
      const p = pool({ spawn: spawner.spawn });
      const timed = p.run('ticks', ticks(3, 40), { timeout: 50 });
      await rejects(timed, TaskTimeoutError);
      const next = p.run('ticks', ticks(2, 5));
      // The old worker, not yet terminated, finishes and answers.
      await until(() => spawner.messages.some((m) => m.type === 'result' && m.output === 3), 'the late answer');
      equal(await next, 2, 'the next task is not confused by it');
      spawner.release();
      await closed(p);
    },
  ],
  [
    'close lets queued and running tasks finish; later runs are refused',
    async () => {
      const p = pool();
      const tasks = [p.run('ticks', ticks(3, 5)), p.run('echo', 'queued')];
      const closing = p.close();
      await rejects(p.run('echo', 1), PoolClosedError, /the pool is closed/);
      equal((await Promise.all(tasks)).join(), '3,queued');
      await closing;
      await closed(p);
    },
  ],
  [
    'close({ force }) racing running tasks and an abort settles every task once',
    async () => {
      const p = pool({ workers: 2 });
      const controller = new AbortController();
      const tasks = [
        p.run('ticks', ticks(1e9, 5)),
        p.run('ticks', ticks(1e9, 5), { signal: controller.signal }),
        p.run('echo', 'queued'),
      ];
      await until(() => p.stats.busy === 2, 'both workers to be busy');
      controller.abort();
      const closing = p.close({ force: true });
      const outcomes = await Promise.allSettled(tasks);
      equal(outcomes.map((o) => o.status).join(), 'rejected,rejected,rejected');
      ok(outcomes[0].reason instanceof PoolClosedError, 'running: closed');
      ok(outcomes[1].reason instanceof AbortError, 'aborted first: abort');
      ok(outcomes[2].reason instanceof PoolClosedError, 'queued: closed');
      await closing;
      await closed(p);
    },
  ],
  [
    'await using: disposing a pool closes it',
    async () => {
      const p = pool();
      const dispose = p[Symbol.asyncDispose ?? Symbol.for('Symbol.asyncDispose')];
      const task = p.run('echo', 'last');
      await dispose.call(p);
      equal(await task, 'last');
      await closed(p);
    },
  ],
  [
    'a broken pool still closes once its running tasks end',
    async () => {
      const spawner = gatedSpawn({ urls: [fixture('ops'), fixture('wrong-protocol')] });
      const p = pool({ workers: 2, spawn: spawner.spawn });
      const running = p.run('ticks', ticks(3, 20));
      await until(() => p.stats.busy === 1, 'the first task to run');
      await rejects(p.run('echo', 1), StartupError, /protocol version 99/);
      const closing = p.close(); // before the running task ends
      equal(await running, 3, 'the running task ends normally');
      await closing;
      await closed(p);
    },
  ],
  [
    'a validate callback that aborts its own task settles it once',
    async () => {
      const p = pool();
      const controller = new AbortController();
      const task = p.run('echo', 'x', { signal: controller.signal, validate: () => controller.abort() });
      await rejects(task, AbortError);
      equal(await p.run('echo', 'next'), 'next');
      await closed(p);
    },
  ],
  [
    'progress after a task ended cannot reach the next task; bad progress counts fail the op only',
    async () => {
      const p = pool();
      const before = await p.run('whoami');
      equal(await p.run('lateBeat'), 'returned');
      equal(await p.run('ticks', ticks(3, 10)), 3, 'the next task is untouched');
      await rejects(p.run('badProgress'), TaskError, /progress\(done, total\) takes whole numbers/);
      equal(await p.run('whoami'), before, 'the same worker throughout');
      await closed(p);
    },
  ],
  [
    'limits past what a timer can wait mean no limit; bad per-task options are refused',
    async () => {
      const p = pool({ taskTimeout: 2 ** 40, startupTimeout: 2 ** 40 });
      equal(await p.run('ticks', ticks(2, 5), { timeout: 2 ** 40, silence: 2 ** 40 }), 2);
      await rejects(p.run('echo', 1, { silence: 0 }), RangeError, /silence must be false, a whole number/);
      await rejects(p.run('echo', 1, { silence: { atLeast: 0 } }), RangeError, /silence must be .*atLeast/);
      await rejects(p.run('echo', 1, { silence: null }), RangeError, /silence must be/);
      equal(await p.run('ticks', ticks(2, 5), { silence: { atLeast: 10_000 } }), 2, 'a floor under the learnt limit');
      await rejects(p.run('echo', 1, { signal: {} }), TypeError, /signal must be an AbortSignal/);
      await closed(p);
    },
  ],
  [
    'a busy main thread does not make a beating worker look hung',
    async () => {
      const p = pool({ silence: { initial: 60_000, min: 100, factor: 10 } });
      await p.run('ticks', ticks(5, 10));
      const limit = p.silenceLimit('ticks');
      const block = () => {
        const end = performance.now() + 3 * limit;
        while (performance.now() < end); // the page or process is stuck, the worker is not
      };
      // Blocked from the check phase (Node): the loop then runs its timers before it delivers
      // the beats that arrived meanwhile.
      const later = globalThis.setImmediate ?? queueMicrotask;
      const task = p.run('ticks', ticks(20, 10), {
        onProgress: ({ done }) => done === 3 && later(block),
      });
      equal(await task, 20);
      await closed(p);
    },
  ],
];

export const affinityScenarios = [
  [
    'tasks with an affinity run on the worker the first of them took; others pass a busy one',
    async () => {
      const p = pool({ workers: 2 });
      const first = p.affinity('the first party');
      const second = p.affinity('the second party');
      const a = await p.run('whoami', null, { affinity: first });
      // Hold the first affinity's worker at a gate (not for a time: starting the second worker
      // can take longer than any short task under load): its next task waits, while unbound
      // work and the other affinity go to the other worker.
      const state = sharedState();
      const busy = p.run('gated', { state }, { affinity: first, owned: true });
      const waiting = p.run('whoami', null, { affinity: first });
      const b = await p.run('whoami', null, { affinity: second });
      ok(a !== b, 'the second affinity took the other worker');
      equal(await p.run('whoami'), b, 'unbound work passes the busy worker');
      await until(() => Atomics.load(state, 0) === 1, "the first affinity's worker at its gate");
      Atomics.store(state, 0, 2);
      Atomics.notify(state, 0);
      equal(await busy, 'answered');
      equal(await waiting, a, 'the waiting task ran on its own worker');
      for (let i = 0; i < 3; i++) equal(await p.run('whoami', null, { affinity: second }), b, `again ${i}`);
      ok(!first.lost && !second.lost, 'nothing lost');
      await closed(p);
    },
  ],
  [
    'an affinity whose worker dies is lost: its waiting and later tasks reject with WorkerLostError, never on another worker',
    async () => {
      const p = pool({ workers: 2 });
      const party = p.affinity('the PSI joiner');
      await p.run('whoami', null, { affinity: party });
      const crash = p.run('exit', null, { affinity: party, silence: 300 });
      const queued = p.run('whoami', null, { affinity: party });
      await rejects(crash, Error, /exited|no progress/);
      const lost = await rejects(queued, WorkerLostError, /the PSI joiner lived in .* which is gone/);
      equal(lost.code, 'ERR_WORKER_LOST');
      ok(party.lost, 'lost');
      await rejects(p.run('whoami', null, { affinity: party }), WorkerLostError, /the PSI joiner/);
      // An abort and a timeout end the worker too.
      for (const end of ['abort', 'timeout']) {
        const other = p.affinity(end);
        await p.run('whoami', null, { affinity: other });
        const controller = new AbortController();
        const running = p.run('ticks', ticks(100, 20), { affinity: other, signal: controller.signal, timeout: end === 'timeout' ? 50 : undefined });
        if (end === 'abort') setTimeout(() => controller.abort(), 30);
        await rejects(running, end === 'abort' ? AbortError : TaskTimeoutError);
        await rejects(p.run('whoami', null, { affinity: other }), WorkerLostError, new RegExp(end));
      }
      // The pool goes on for work without an affinity, and refuses another pool's affinity.
      equal(typeof (await p.run('whoami')), 'string', 'the pool still works');
      const elsewhere = pool();
      await rejects(p.run('whoami', null, { affinity: elsewhere.affinity() }), TypeError, /this pool/);
      await closed(elsewhere);
      await closed(p, true);
    },
  ],
];
