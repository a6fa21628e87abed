// The pool's lifecycle scenarios, with real worker fixtures (test/fixtures/), run the same way in
// Node (test/node/pool.test.js), in headless Chromium (test/node/browser.test.js) and in headless
// Firefox (test/node/firefox.test.js). Each scenario closes its pool and checks that every
// reservation came back. Pages are cross-origin isolated (test/node/serve.js), so every
// environment has SharedArrayBuffer: some scenarios hold a worker at a gate with it.
//
// `env`: { browser, psi: { key, values, distinct, request, sizeOnly, normalized } } where the
// last three are the bytes `lockstep psi request` (native) wrote for `key` and `values`.

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
  PsiError,
  WorkerLostError,
  createJoiner,
  createPsiPool,
  createStarter,
  psiRequest,
  spawnWorker,
} from '../src/index.js';
import { blockUntil, equal, ok, rejects, sameBytes, until } from './assert.js';

const fixture = (name) => new URL(`./fixtures/${name}.js`, import.meta.url);

// Fast limits so failures are seen in milliseconds; the startup timeout stays generous (a
// loaded machine starts a worker in tens of ms, Chromium's first in hundreds).
const FAST = { startupTimeout: 20_000, silence: { initial: 5_000, min: 200, factor: 10 } };

const pool = (options = {}) => new Pool({ worker: fixture('ops'), workers: 1, ...FAST, ...options });

// Closes the pool and checks that it settled everything and holds no bytes.
async function closed(p, force = false) {
  await p.close({ force });
  const s = p.stats;
  equal(s.reservedBytes, 0, 'bytes reserved after close');
  equal(s.starting + s.idle + s.busy + s.terminating, 0, 'workers left after close');
  equal(s.queued, 0, 'tasks queued after close');
}

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

// A spawner that records, for each task it posts, the byte length of the buffer behind its
// input's `key` and of each buffer transferred with it.
function postRecorder() {
  const posts = [];
  const spawn = (url, options) => {
    const handle = spawnWorker(url, options);
    return {
      ...handle,
      post(message, transfer) {
        if (message?.type === 'task') {
          posts.push({
            keyBuffer: message.input?.key?.buffer.byteLength,
            transferred: (transfer ?? []).map((buffer) => buffer.byteLength),
          });
        }
        handle.post(message, transfer);
      },
    };
  };
  return { posts, spawn };
}

// Base64 (how the CLI's round reaches a page) to bytes.
const fromB64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

// @openmined/psi.js 2.0.6 in this environment: its web build (a classic script, served by
// test/node/serve.js under /peers/psi.js/) in a page, its Node build from peers/ in Node.
async function loadPsiJs(env) {
  if (env.browser) {
    if (!globalThis.PSI) {
      await new Promise((resolve, reject) => {
        const script = document.createElement('script');
        script.src = '/peers/psi.js/psi_wasm_web.js';
        script.onload = resolve;
        script.onerror = () => reject(new Error('cannot load psi.js from /peers/psi.js/'));
        document.head.append(script);
      });
    }
    return globalThis.PSI();
  }
  const { createRequire } = await import('node:module');
  const { pathToFileURL } = await import('node:url');
  const peers = createRequire(new URL('../../peers/package.json', import.meta.url));
  return (await import(pathToFileURL(peers.resolve('@openmined/psi.js')).href)).default();
}

/** The number of bits set in a byte. @param {number} byte */
const bitCount = (byte) => {
  let n = 0;
  for (let b = byte; b; b &= b - 1) n++;
  return n;
};

// Whether two byte arrays are equal (sameBytes asserts it).
const equalBytes = (a, b) => a.length === b.length && a.every((byte, i) => byte === b[i]);

// A PSI pool whose spawner can fail the workers running helpers ('psi.helper' tasks): `onHelper`
// gets each message a helper's worker sends (with its handle) and returns false to drop it;
// `onHelperTask` gets each helper task posted and returns false to hold it back; `received`
// records every message any worker sent the page.
function helperSpawn(onHelper = () => true, onHelperTask = () => true) {
  const received = [];
  const spawn = (url, options) => {
    const handle = spawnWorker(url, options);
    let helping = false;
    const wrapped = {
      ...handle,
      post(message, transfer) {
        if (message?.type === 'task') helping = message.op === 'psi.helper';
        if (helping && message?.type === 'task' && onHelperTask(wrapped) === false) return;
        handle.post(message, transfer);
      },
      listen(listeners) {
        handle.listen({
          ...listeners,
          message: (data) => {
            received.push(data);
            if (helping && onHelper(data, wrapped) === false) return;
            if (data?.type === 'result' || data?.type === 'error') helping = false;
            listeners.message(data);
          },
        });
      },
    };
    return wrapped;
  };
  return { spawn, received };
}

// A PSI pool's spawner that shows `watch(data, handle, op)` every message a worker sends, with
// the op of the task that worker runs now; `watch` returns false to drop the message. `onEnd(op)`
// hears each worker the pool (or a test) terminates, with the op it ran; `onPost(op)` each task
// posted to a worker.
function opSpawn(watch, { onEnd = () => {}, onPost = () => {} } = {}) {
  return (url, options) => {
    const handle = spawnWorker(url, options);
    let op = null;
    const wrapped = {
      ...handle,
      post(message, transfer) {
        if (message?.type === 'task') op = message.op;
        handle.post(message, transfer);
        if (message?.type === 'task') onPost(message.op);
      },
      terminate() {
        onEnd(op);
        return handle.terminate();
      },
      listen(listeners) {
        handle.listen({
          ...listeners,
          message: (data) => {
            if (watch(data, wrapped, op) === false) return;
            listeners.message(data);
          },
        });
      },
    };
    return wrapped;
  };
}

// A psi_proto.Request of `count` copies of `request`'s first element, its other fields kept in
// their places: as long to re-mask as any request of that size, and built in milliseconds. Its
// elements are its length-delimited fields of 33 bytes (compressed points); `point` is where
// the first element's 33 bytes start in it.
function repeatedRequest(request, count) {
  let element = null;
  const before = [];
  const after = [];
  for (let at = 0; at < request.length;) {
    const start = at;
    const tag = request[at++];
    let length = -1;
    if ((tag & 7) === 2) {
      length = 0;
      for (let shift = 0, byte = 0x80; byte & 0x80; shift += 7) {
        byte = request[at++];
        length |= (byte & 0x7f) << shift;
      }
      at += length;
    } else if ((tag & 7) === 0) {
      while (request[at++] & 0x80);
    } else {
      throw new Error(`a request field of wire type ${tag & 7}`);
    }
    if (length === 33) element ??= request.subarray(start, at);
    else (element ? after : before).push(request.subarray(start, at));
  }
  equal(element?.length, 35, 'an element field: tag, length 33, a compressed point');
  const head = before.reduce((n, f) => n + f.length, 0);
  const bytes = new Uint8Array(head + count * element.length + after.reduce((n, f) => n + f.length, 0));
  let at = 0;
  for (const field of before) {
    bytes.set(field, at);
    at += field.length;
  }
  for (let i = 0; i < count; i++, at += element.length) bytes.set(element, at);
  for (const field of after) {
    bytes.set(field, at);
    at += field.length;
  }
  return { bytes, point: head + 2 };
}

// How long a helper may take to free its worker after its step ended, however it ended: it
// stops between two chunks of its part (2,048 items: some 0.3 s on wasm here, 0.1 s on the addon,
// up to 2 s seen in Chromium with the machine loaded), so this is a margin for a loaded machine.
// A helper that maps its part to the end takes 9 s and more after these steps end (their parts
// are sized for that).
const HELPER_FREED_MS = 5_000;

// A starter's sharded respond over 2 workers (its own and one helper's), ended as `end` says
// while the helper maps its part; then the helper's worker must be free (idle, kept) within
// HELPER_FREED_MS of the step's end and take the next task at once, and close() must not wait
// for it. `end.start(ctx)` runs at the helper's first beat inside its part; `end.watch(data, op,
// ctx)` may drop what workers send; `end.step(starter, request, count, ctx)` runs the step;
// `end.outcome(settled, ctx)` checks how it settled; `end.closes`: the step ends by a forced
// close, which must then resolve within HELPER_FREED_MS. `env.figure(name, ms)`, where the
// runner gives one, hears the ms from the step's end to the helper's worker being free.
async function helperEndsWithStep(env, end) {
  const r = env.psi.round;
  // The helper's part: over 9 s of work past the step's end on either engine (the addon
  // re-masks some 20,000-30,000 elements a second a worker here, wasm some 7,000), even when the
  // step ends at the party's silence floor (2 s + 200 ns a byte of its input: 35 bytes an item).
  const part = end.part ?? (env.psiAsset === 'native' ? 600_000 : 100_000);
  const ctx = { working: false, party: null, pool: null, terminated: [] };
  let started;
  const working = new Promise((resolve) => (started = resolve));
  const spawn = opSpawn((data, handle, op) => {
    if (op?.startsWith('psi.party.')) ctx.party = handle;
    if (op === 'psi.helper' && data?.type === 'progress' && data.total > 0 && !ctx.working) {
      ctx.working = true;
      started();
    }
    return end.watch?.(data, op, ctx) ?? true;
  }, { onEnd: (op) => ctx.terminated.push(op) });
  // A silence limit of 2 s at least: a helper's beats come a block apart, which on this loaded
  // machine (the party's worker still running, or finishing its last wasm call once terminated in
  // Chromium) can stretch past a limit learnt from the first ones, and its worker must be kept.
  const p = (ctx.pool = createPsiPool({ ...psiPool(env), workers: 2, spawn, silence: { initial: 2_000, min: 2_000, factor: 10 } }));
  const starter = await createStarter(p, { key: fromB64(r.starterKey), workers: 2 });
  const { bytes: request, point } = repeatedRequest(fromB64(r.request), 2 * part);
  ctx.point = point;
  const running = end.step(starter, request, 2 * part, ctx);
  working.then(() => end.start?.(ctx)).catch((error) => (ctx.startFailed = error));
  const settled = await running.then((value) => ({ value }), (error) => ({ error }));
  const ended = performance.now();
  if (ctx.startFailed) throw ctx.startFailed;
  end.outcome(settled, ctx);
  if (end.closes) {
    const took = await ctx.closed;
    if (took instanceof Error) throw took;
    ok(took < HELPER_FREED_MS, `close({ force: true }) took ${Math.round(took)} ms`);
    env.figure?.(`close after ${end.name}`, took);
    return;
  }
  await until(() => p.stats.busy === 0, `the helper's worker to be free within ${HELPER_FREED_MS} ms of the step's end (${end.name})`, HELPER_FREED_MS);
  const freed = performance.now() - ended;
  ok(p.stats.idle >= 1, `the helper's worker is kept, idle (${JSON.stringify(p.stats)}; workers terminated, by the op they ran: ${ctx.terminated.join(', ') || 'none'})`);
  ok(!ctx.terminated.includes('psi.helper'), `the helper's worker was not terminated (${ctx.terminated.join(', ')})`);
  const next = performance.now();
  equal(await p.run('noop', 7), 7, 'the next task runs');
  ok(performance.now() - next < HELPER_FREED_MS, `the next task ran in ${Math.round(performance.now() - next)} ms`);
  const closing = performance.now();
  await closed(p);
  ok(performance.now() - closing < HELPER_FREED_MS, `close() took ${Math.round(performance.now() - closing)} ms`);
  env.figure?.(`helper free after ${end.name}`, freed);
}

// The ways a sharded step can end, each a scenario of helperEndsWithStep.
const HELPER_ENDINGS = [
  {
    name: 'a normal finish',
    part: 6_000,
    step: (starter, request, count) => starter.respond(request, { joinerCount: count }),
    outcome: ({ value, error }) => {
      ok(!error, `the step finished: ${error?.message}`);
      equal(value.length > 0, true, 'a response');
    },
  },
  {
    name: "an engine error in the party's part",
    // The first element made no point (x = 2^256 - 1 is no field element): part 0 fails in its
    // first chunk, while the helper has its whole part ahead.
    step: (starter, request, count, ctx) => {
      const broken = request.slice();
      broken[ctx.point] = 0x02;
      broken.fill(0xff, ctx.point + 1, ctx.point + 33);
      return starter.respond(broken, { joinerCount: count });
    },
    outcome: ({ error }) => {
      ok(error instanceof PsiError && error.code === 'PSI_MESSAGE', `an engine error: ${error?.name}: ${error?.message}`);
    },
  },
  {
    name: "an abort of the party's step",
    step: (starter, request, count, ctx) => {
      ctx.controller = new AbortController();
      return starter.respond(request, { joinerCount: count }, { signal: ctx.controller.signal });
    },
    start: (ctx) => ctx.controller.abort(new Error('enough')),
    outcome: ({ error }, ctx) => {
      ok(error instanceof AbortError, `aborted: ${error?.name}: ${error?.message}`);
      ok(ctx.working, 'the helper was mapping its part');
    },
  },
  {
    name: 'a task timeout',
    step: (starter, request, count) => starter.respond(request, { joinerCount: count }, { timeout: 3_000 }),
    outcome: ({ error }, ctx) => {
      ok(error instanceof TaskTimeoutError, `timed out: ${error?.name}: ${error?.message}`);
      ok(ctx.working, 'the helper was mapping its part when the step timed out');
    },
  },
  {
    name: "the pool's silence limit",
    // The party's worker falls silent (its beats are lost) once its helper maps.
    watch: (data, op, ctx) => !(ctx.silent && op === 'psi.party.respond' && data?.type === 'progress'),
    step: (starter, request, count) => starter.respond(request, { joinerCount: count }),
    start: (ctx) => (ctx.silent = true),
    outcome: ({ error }, ctx) => {
      ok(error instanceof WorkerHangError && /no progress on 'psi.party.respond'/.test(error.message), `silent: ${error?.name}: ${error?.message}`);
      ok(ctx.working, 'the helper was mapping its part');
    },
  },
  {
    name: "a crash of the party's worker",
    step: (starter, request, count) => starter.respond(request, { joinerCount: count }),
    start: (ctx) => ctx.party.terminate(),
    outcome: ({ error }, ctx) => {
      // Node reports the exit; a browser reports none, so the pool's silence limit sees it.
      ok(error instanceof WorkerCrashError || error instanceof WorkerHangError, `crashed: ${error?.name}: ${error?.message}`);
      ok(ctx.working, 'the helper was mapping its part');
    },
  },
  {
    name: "the pool's close",
    closes: true,
    step: (starter, request, count) => starter.respond(request, { joinerCount: count }),
    start: (ctx) => {
      const closing = performance.now();
      ctx.closed = closed(ctx.pool, true).then(() => performance.now() - closing, (error) => error);
    },
    outcome: ({ error }, ctx) => {
      ok(error instanceof PoolClosedError, `closed: ${error?.name}: ${error?.message}`);
      ok(ctx.working, 'the helper was mapping its part');
    },
  },
];

// Whether `key` occurs in any byte buffer, string (as UTF-8 or hex) or number list inside `value`.
function holdsKey(value, key) {
  const hex = [...key].map((b) => b.toString(16).padStart(2, '0')).join('');
  const seen = new Set();
  const inBytes = (bytes) => {
    for (let i = 0; i + key.length <= bytes.length; i++) {
      let j = 0;
      while (j < key.length && bytes[i + j] === key[j]) j++;
      if (j === key.length) return true;
    }
    return false;
  };
  const walk = (item) => {
    if (typeof item === 'string') return item.toLowerCase().includes(hex) || inBytes(new TextEncoder().encode(item));
    if (item === null || typeof item !== 'object' || seen.has(item)) return false;
    seen.add(item);
    if (item instanceof ArrayBuffer) return inBytes(new Uint8Array(item));
    if (ArrayBuffer.isView(item)) return inBytes(new Uint8Array(item.buffer, item.byteOffset, item.byteLength));
    if (Array.isArray(item) && item.every((x) => Number.isInteger(x))) return inBytes(item);
    return Object.values(item).some(walk);
  };
  return walk(value);
}

// Every message the page's ends of MessageChannels receive while `fn` runs (the control
// channels of sharded steps; helper channels' ends all leave the page).
async function recordingChannels(fn) {
  const Native = globalThis.MessageChannel;
  const received = [];
  globalThis.MessageChannel = class extends Native {
    constructor() {
      super();
      this.port1.addEventListener('message', (event) => received.push(event.data));
    }
  };
  try {
    return { result: await fn(), received };
  } finally {
    globalThis.MessageChannel = Native;
  }
}

const PSI_POOL = { workers: 2, asset: 'scalar', startupTimeout: 20_000 };

/**
 * The PSI pool options of a scenario tagged `{ engines: true }`: PSI_POOL on the engine the run
 * asks for (`env.psiAsset`: Node runs those scenarios on the wasm scalar build and again on the
 * native addon).
 *
 * @param {{ psiAsset?: string }} env
 */
const psiPool = (env) => ({ ...PSI_POOL, asset: env.psiAsset ?? PSI_POOL.asset });
const KEYED = { columns: 'email', normalize: true };

export const scenarios = [
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
      const error = await rejects(p.run('trap'), TaskError, /RuntimeError: unreachable/);
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
  [
    'PSI request through the pool equals the native CLI on every engine: wasm scalar and simd128, and the addon in Node',
    async (env) => {
      for (const asset of env.browser ? ['scalar', 'simd'] : ['scalar', 'simd', 'native']) {
        const p = createPsiPool({ workers: 2, asset, startupTimeout: 20_000 });
        const reports = [];
        const [reveal, sizeOnly, normalized] = await Promise.all([
          psiRequest(p, { key: env.psi.key, values: env.psi.values }, { onProgress: (r) => reports.push(r.done) }),
          psiRequest(p, { key: env.psi.key, values: env.psi.values, reveal: false }),
          psiRequest(p, { key: env.psi.key, values: env.psi.values, normalize: true }),
        ]);
        sameBytes(reveal, env.psi.request, `${asset}: reveal request`);
        sameBytes(sizeOnly, env.psi.sizeOnly, `${asset}: size-only request`);
        sameBytes(normalized, env.psi.normalized, `${asset}: normalized request`);
        equal(reports.at(-1), env.psi.distinct, 'progress counts distinct keys, to the end');
        ok(env.psi.key.some((byte) => byte !== 0), "the caller's key is untouched");
        await rejects(psiRequest(p, { key: new Uint8Array(32), values: ['a'] }), TaskError, /key/);
        await closed(p);
      }
    },
  ],
  [
    "psiRequest sends the key's own 32 bytes: a Buffer or a view into a larger buffer is neither sent whole nor detached",
    async (env) => {
      const recorder = postRecorder();
      const p = createPsiPool({ workers: 1, asset: 'scalar', startupTimeout: 20_000, spawn: recorder.spawn });
      const values = ['ada@example.org', 'alan@example.org'];
      const expected = await psiRequest(p, { key: env.psi.key.slice(), values });
      // A view whose slice() shares its memory, as Node's Buffer#slice does, inside 8 KiB of other data.
      class SharedSlice extends Uint8Array {
        slice(start, end) {
          return this.subarray(start, end);
        }
      }
      const slab = new SharedSlice(8192).fill(0xa5);
      slab.set(env.psi.key, 100);
      const keys = [];
      if (globalThis.Buffer) {
        keys.push(['a pooled Buffer (as readFileSync of a key gives)', globalThis.Buffer.from(env.psi.key)]);
        const unpooled = globalThis.Buffer.alloc(32);
        unpooled.set(env.psi.key);
        keys.push(['an unpooled Buffer', unpooled]);
      }
      keys.push(['a view into 8 KiB whose slice() shares it', slab.subarray(100, 132)]);
      for (const [what, key] of keys) {
        const buffer = key.buffer.byteLength;
        sameBytes(await psiRequest(p, { key, values }), expected, `${what}: the request`);
        const post = recorder.posts.at(-1);
        equal(post.keyBuffer, 32, `${what}: the bytes sent as the key`);
        equal(post.transferred[0], 32, `${what}: the buffer moved with the key`);
        equal(key.length, 32, `${what}: the caller's key is not detached`);
        equal(key.buffer.byteLength, buffer, `${what}: nor the buffer it is in`);
        sameBytes(key, env.psi.key, `${what}: the caller's key is untouched`);
      }
      ok(slab.every((byte, i) => (i >= 100 && i < 132) || byte === 0xa5), 'the bytes around the view are untouched');
      await closed(p);
    },
  ],
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
  [
    "the two parties of a round, in two workers, give the CLI's bytes in every format and mode",
    async (env) => {
      const r = env.psi.round;
      const p = createPsiPool(psiPool(env));
      const starter = await createStarter(p, { key: fromB64(r.starterKey) });
      const joiner = await createJoiner(p, { key: fromB64(r.joinerKey) });
      const request = await joiner.request(r.joiner, KEYED);
      sameBytes(request, fromB64(r.request), 'the request');
      sameBytes(await joiner.request(new TextEncoder().encode(r.joiner), KEYED), request, 'the rows as bytes');
      const response = await starter.respond(request, { joinerCount: r.joinerCount });
      sameBytes(response, fromB64(r.response), 'the response');
      const setups = {};
      for (const format of ['raw', 'gcs', 'bloom']) {
        const expected = r.formats[format];
        const seen = [];
        setups[format] = await starter.setup(
          r.starter,
          { ...KEYED, joinerCount: r.joinerCount, format },
          { onProgress: ({ done, total }) => seen.push(done <= total) },
        );
        sameBytes(setups[format], fromB64(expected.setup), `the ${format} setup`);
        ok(seen.length > 0 && seen.every(Boolean), `the ${format} setup reported progress`);
        const found = await joiner.intersect(setups[format], response);
        equal(found.size, expected.size, `the ${format} intersection's size`);
        sameBytes(found.rowsFile, fromB64(expected.rows), `the ${format} matched rows`);
        if (format === 'raw') {
          sameBytes(await starter.permutationFile(), fromB64(r.permutation), 'the permutation file');
          sameBytes(found.pairsFile, fromB64(r.pairs), 'the pairs file');
          equal(found.setupPositions.length, found.rows.length, 'a position per matched row');
          const resolved = await starter.resolve(found.pairsFile);
          sameBytes(resolved.file, fromB64(r.resolved), 'the resolved pairs');
          equal(resolved.joinerRows.length, resolved.starterRows.length, 'pairs');
        } else {
          equal(found.pairsFile, undefined, `no pairs after a ${format} setup`);
        }
      }
      const sizeRequest = await joiner.request(r.joiner, { ...KEYED, sizeOnly: true });
      sameBytes(sizeRequest, fromB64(r.requestSize), 'the size-only request');
      const sizeResponse = await starter.respond(sizeRequest, { joinerCount: r.joinerCount, sizeOnly: true });
      sameBytes(sizeResponse, fromB64(r.responseSize), 'the size-only response');
      for (const format of ['raw', 'gcs', 'bloom']) {
        const found = await joiner.intersect(setups[format], sizeResponse);
        equal(found.size, r.formats[format].size, `the size-only ${format} size`);
        equal(found.rows.length, 0, 'no rows');
        equal(found.rowsFile, undefined, 'no rows file');
      }
      await closed(p);
    },
    { engines: true },
  ],
  [
    'a key made in a worker leaves it only through exportKey, and re-imported it masks the same',
    async (env) => {
      const r = env.psi.round;
      const p = createPsiPool(psiPool(env));
      const fresh = await createJoiner(p);
      const other = await createJoiner(p);
      const key = await fresh.exportKey();
      equal(key.length, 32, 'a 32-byte key');
      ok(!equalBytes(key, await other.exportKey()), 'two fresh keys differ');
      const again = await createJoiner(p, { key });
      const values = ['ada@example.org', 'alan@example.org', 'ada@example.org', ''];
      const first = await fresh.request(values);
      sameBytes(await again.request(values), first, 'the re-imported key masks the same');
      ok(!equalBytes(first, await other.request(values)), 'another key masks otherwise');
      // A round of fresh parties finds what the CLI's found.
      const starter = await createStarter(p);
      const setup = await starter.setup(r.starter, { ...KEYED, joinerCount: r.joinerCount });
      const request = await fresh.request(r.joiner, KEYED);
      const found = await fresh.intersect(setup, await starter.respond(request, { joinerCount: r.joinerCount }));
      equal(found.size, r.formats.raw.size, 'the same intersection');
      await fresh.dispose();
      const gone = await rejects(fresh.request(values), PsiError, /no party/);
      equal(gone.code, 'PSI_USAGE');
      await closed(p);
    },
    { engines: true },
  ],
  [
    'bad input to a party is a PsiError with a code, and the party and its worker are kept',
    async (env) => {
      const r = env.psi.round;
      const p = createPsiPool({ ...psiPool(env), workers: 1 });
      const starter = await createStarter(p, { key: fromB64(r.starterKey) });
      const joiner = await createJoiner(p, { key: fromB64(r.joinerKey) });
      const code = async (promise, expected, pattern) => {
        const error = await rejects(promise, PsiError, pattern);
        equal(error.code, expected, error.message);
      };
      for (const key of [new Uint8Array(31).fill(1), new Uint8Array(33).fill(1), new Uint8Array(32)]) {
        await code(createJoiner(p, { key }), 'PSI_KEY');
      }
      await code(joiner.intersect(fromB64(r.formats.raw.setup), fromB64(r.response)), 'PSI_ORDER', /needs a request first/);
      const request = await joiner.request(r.joiner, KEYED);
      const setup = await starter.setup(r.starter, { ...KEYED, joinerCount: r.joinerCount });
      // Messages of the wrong role, and malformed ones, from the page or a peer.
      await code(joiner.intersect(setup, setup), 'PSI_MESSAGE');
      await code(starter.respond(setup, { joinerCount: r.joinerCount }), 'PSI_MESSAGE');
      await code(starter.respond(new Uint8Array([0xff, 0xff, 0xff]), { joinerCount: 5 }), 'PSI_MESSAGE');
      await code(starter.resolve(new TextEncoder().encode('not a pairs file\n')), 'PSI_MESSAGE');
      // An element that is no point: the first element's SEC1 prefix (after its field tag 0x0a
      // and length 33) made 0x05.
      const broken = fromB64(r.response);
      const element = broken.findIndex((byte, i) => byte === 0x0a && broken[i + 1] === 33);
      broken[element + 2] = 0x05;
      await code(joiner.intersect(setup, broken), 'PSI_MESSAGE');
      // Steps of the other role, out of order, over the stated limits.
      const { PsiStarter } = await import('../src/party.js');
      await code(PsiStarter.prototype.respond.call(joiner, request, { joinerCount: 9 }), 'PSI_WRONG_ROLE', /a joiner cannot respond/);
      await code(starter.respond(request, { joinerCount: r.joinerCount - 1 }), 'PSI_LIMIT');
      await code(joiner.intersect(setup, await starter.respond(request, { joinerCount: r.joinerCount }), { maxSetupBytes: 100 }), 'PSI_LIMIT');
      await code(starter.setup(r.starter, { ...KEYED, joinerCount: r.joinerCount, format: 'gcs', fpr: 1e-300 }), 'PSI_LIMIT');
      await code(starter.setup(r.starter, { ...KEYED, joinerCount: r.joinerCount, format: 'bloom', fpr: 2 }), 'PSI_PARAMS');
      await code(starter.setup(r.starter, { ...KEYED, joinerCount: 0 }), 'PSI_PARAMS');
      await code(starter.setup(r.starter, { columns: 'no such column', joinerCount: 5 }), 'PSI_INPUT', /no column named/);
      await code(starter.setup(['a'], { columns: 'email', joinerCount: 5 }), 'PSI_USAGE');
      await code(starter.setup(r.starter, { ...KEYED, joinerCount: 5, format: 'zip' }), 'PSI_USAGE');
      await rejects(starter.setup(r.starter, { ...KEYED, joinerCount: -1 }), TypeError, /joinerCount/);
      equal(p.stats.terminating, 0, 'no worker was replaced');
      // Both parties still work, on the same worker.
      const response = await starter.respond(request, { joinerCount: r.joinerCount });
      equal((await joiner.intersect(setup, response)).size, r.formats.raw.size, 'a round after the refusals');
      ok(!starter.lost && !joiner.lost, 'nothing lost');
      await closed(p);
    },
    { engines: true },
  ],
  [
    "a party whose worker ends (an aborted step) is lost: its next step rejects with WorkerLostError, never with a new key",
    async (env) => {
      const p = createPsiPool(psiPool(env));
      const joiner = await createJoiner(p);
      const values = Array.from({ length: 20_000 }, (_, i) => `person-${i}@example.org`);
      const controller = new AbortController();
      const running = joiner.request(values, {}, {
        signal: controller.signal,
        onProgress: () => controller.abort(new Error('enough')),
      });
      await rejects(running, AbortError);
      ok(joiner.lost, 'the party is lost');
      const lost = await rejects(joiner.request(['a']), WorkerLostError, /the PSI joiner lived in .*which is gone/);
      equal(lost.code, 'ERR_WORKER_LOST');
      await rejects(joiner.exportKey(), WorkerLostError);
      const other = await createJoiner(p);
      equal((await other.request(['a'])).length > 0, true, 'the pool still makes parties');
      await closed(p);
    },
    { engines: true },
  ],
  [
    "a psi.js party completes a round with our pooled starter, and with our pooled joiner, in the same page",
    async (env) => {
      const psi = await loadPsiJs(env);
      const starterValues = Array.from({ length: 400 }, (_, i) => `person-${i}@example.org`);
      const joinerValues = Array.from({ length: 150 }, (_, i) => `person-${3 * i}@example.org`);
      const expected = joinerValues.map((v, i) => [v, i]).filter(([v]) => starterValues.includes(v)).map(([, i]) => i);
      const p = createPsiPool(psiPool(env));
      // psi.js's client against our starter, every format.
      const starter = await createStarter(p, { workers: 2 });
      const client = psi.client.createWithNewKey(true);
      const request = client.createRequest(joinerValues).serializeBinary();
      const response = await starter.respond(request, { joinerCount: joinerValues.length });
      for (const format of ['raw', 'gcs', 'bloom']) {
        const setup = await starter.setup(starterValues, { joinerCount: joinerValues.length, format });
        const message = psi.serverSetup.deserializeBinary(setup);
        const found = client.getIntersection(message, psi.response.deserializeBinary(response)).sort((a, b) => a - b);
        // A Bloom filter's false positives are one in a billion for this query at the default
        // rate: a mismatch says how full the filter was (one was seen once in CI, 2026-12-01).
        const bloom = format === 'bloom' ? message.getBloomFilter() : undefined;
        const filled = bloom && [...bloom.getBits_asU8()].reduce((n, byte) => n + bitCount(byte), 0);
        equal(
          found.join(','),
          expected.join(','),
          `psi.js's client and our ${format} setup${bloom ? ` (${bloom.getNumHashFunctions()} hash functions, ${filled} of ${8 * bloom.getBits_asU8().length} bits set)` : ''}`,
        );
      }
      // psi.js's server against our joiner.
      const server = psi.server.createWithNewKey(true);
      const joiner = await createJoiner(p, { workers: 2 });
      for (const [name, structure] of [['raw', psi.dataStructure.Raw], ['gcs', psi.dataStructure.GCS]]) {
        const setup = server.createSetupMessage(1e-9, joinerValues.length, starterValues, structure).serializeBinary();
        const ours = await joiner.request(joinerValues);
        const theirs = server.processRequest(psi.request.deserializeBinary(ours)).serializeBinary();
        const found = await joiner.intersect(setup, theirs);
        equal([...found.rows].join(','), expected.join(','), `our joiner and psi.js's ${name} setup`);
      }
      client.delete?.();
      server.delete?.();
      await closed(p);
    },
    { engines: true },
  ],
  [
    "sharded steps of both roles give the CLI's bytes at 1, 2, 3 and 4 workers, and the one-worker bytes around every split",
    async (env) => {
      const r = env.psi.round;
      const p = createPsiPool({ ...psiPool(env), workers: 4 });
      for (const workers of [1, 2, 3, 4]) {
        const starter = await createStarter(p, { key: fromB64(r.starterKey), workers });
        const joiner = await createJoiner(p, { key: fromB64(r.joinerKey), workers });
        const request = await joiner.request(r.joiner, KEYED);
        sameBytes(request, fromB64(r.request), `the request on ${workers} workers`);
        equal(joiner.lastSharding.workers, workers, `the request ran on ${workers} workers`);
        ok(joiner.lastSharding.reason.includes(`${workers} asked`), joiner.lastSharding.reason);
        const response = await starter.respond(request, { joinerCount: r.joinerCount });
        sameBytes(response, fromB64(r.response), `the response on ${workers} workers`);
        equal(starter.lastSharding.workers, workers, 'the response ran sharded');
        for (const format of ['raw', 'gcs', 'bloom']) {
          const setup = await starter.setup(r.starter, { ...KEYED, joinerCount: r.joinerCount, format });
          sameBytes(setup, fromB64(r.formats[format].setup), `the ${format} setup on ${workers} workers`);
          const found = await joiner.intersect(setup, response);
          equal(found.sharding.workers, workers, 'the intersection ran sharded');
          sameBytes(found.rowsFile, fromB64(r.formats[format].rows), `the ${format} rows on ${workers} workers`);
          if (format === 'raw') {
            sameBytes(await starter.permutationFile(), fromB64(r.permutation), 'the permutation file');
            sameBytes(found.pairsFile, fromB64(r.pairs), 'the pairs file');
            sameBytes((await starter.resolve(found.pairsFile)).file, fromB64(r.resolved), 'the resolved pairs');
          }
        }
        const sizeRequest = await joiner.request(r.joiner, { ...KEYED, sizeOnly: true });
        sameBytes(sizeRequest, fromB64(r.requestSize), 'the size-only request');
        sameBytes(await starter.respond(sizeRequest, { joinerCount: r.joinerCount, sizeOnly: true }), fromB64(r.responseSize), 'the size-only response');
        await starter.dispose();
        await joiner.dispose();
      }
      // 0, 1, workers - 1 and workers + 1 values: the one-worker bytes, or its error.
      const keys = { starter: await (await createStarter(p)).exportKey(), joiner: await (await createJoiner(p)).exportKey() };
      const outcome = (promise) => promise.then((bytes) => ({ bytes }), (error) => ({ code: error.code ?? error.name }));
      const roundOf = async (workers, count) => {
        const starter = await createStarter(p, { key: keys.starter, workers });
        const joiner = await createJoiner(p, { key: keys.joiner, workers });
        const values = Array.from({ length: count }, (_, i) => `v${i}@x`);
        const setup = await outcome(starter.setup(values.filter((_, i) => i % 2 === 0), { joinerCount: Math.max(1, count) }));
        const request = await outcome(joiner.request(values));
        const response = request.bytes ? await outcome(starter.respond(request.bytes, { joinerCount: Math.max(1, count) })) : request;
        const found = setup.bytes && response.bytes
          ? await outcome(joiner.intersect(setup.bytes, response.bytes).then((f) => f.rowsFile))
          : { code: 'none' };
        await starter.dispose();
        await joiner.dispose();
        return { setup, request, response, found };
      };
      for (const count of [0, 1, 2, 3, 4, 5]) {
        const one = await roundOf(1, count);
        for (const workers of [2, 3, 4]) {
          const many = await roundOf(workers, count);
          for (const step of ['setup', 'request', 'response', 'found']) {
            equal(many[step].code, one[step].code, `${step} of ${count} values on ${workers} workers: the same error`);
            if (one[step].bytes) sameBytes(many[step].bytes, one[step].bytes, `${step} of ${count} values on ${workers} workers`);
          }
        }
      }
      await closed(p);
    },
    { engines: true },
  ],
  [
    'a sharded step never shows the page the key: it goes from the party\'s worker to its helpers over channels the page only connects',
    async (env) => {
      const r = env.psi.round;
      const workers = helperSpawn();
      const { result: key, received } = await recordingChannels(async () => {
        const p = createPsiPool({ ...psiPool(env), workers: 3, spawn: workers.spawn });
        // Known keys, to look for; and a fresh one, exported only once the steps are done.
        const starter = await createStarter(p, { key: fromB64(r.starterKey), workers: 3 });
        const joiner = await createJoiner(p, { key: fromB64(r.joinerKey), workers: 3 });
        const fresh = await createJoiner(p, { workers: 3 });
        const request = await joiner.request(r.joiner, KEYED);
        const setup = await starter.setup(r.starter, { ...KEYED, joinerCount: r.joinerCount });
        const found = await joiner.intersect(setup, await starter.respond(request, { joinerCount: r.joinerCount }));
        equal(found.sharding.workers, 3, 'sharded');
        await fresh.request(r.joiner, KEYED);
        equal(fresh.lastSharding.workers, 3, 'the fresh party sharded too');
        const before = workers.received.length;
        const exported = await fresh.exportKey();
        workers.received.length = before; // the export itself is the one way out
        await closed(p);
        return exported;
      });
      ok(workers.received.length > 10 && received.some((m) => m?.type === 'started'), 'messages were recorded');
      for (const [name, bytes] of [['starter', fromB64(r.starterKey)], ['joiner', fromB64(r.joinerKey)], ['fresh', key]]) {
        ok(!holdsKey(workers.received, bytes), `no message from a worker holds the ${name} key`);
        ok(!holdsKey(received, bytes), `no control message holds the ${name} key`);
      }
    },
    { engines: true },
  ],
  [
    'a helper that fails before the split leaves the step on the first worker, which says so; the bytes are the same',
    async (env) => {
      const r = env.psi.round;
      // Each helper's worker is terminated instead of given its task (so before its hello).
      const workers = helperSpawn(() => true, (handle) => {
        handle.terminate();
        return false;
      });
      const p = createPsiPool({ ...psiPool(env), workers: 2, spawn: workers.spawn, silence: { initial: 2_000, min: 200, factor: 10 } });
      const joiner = await createJoiner(p, { key: fromB64(r.joinerKey), workers: 2, shardWait: 300 });
      const request = await joiner.request(r.joiner, KEYED);
      sameBytes(request, fromB64(r.request), 'the request');
      equal(joiner.lastSharding.workers, 1, 'ran on the first worker');
      equal(joiner.lastSharding.chosen, 2, 'two were chosen');
      ok(/helper 1 (failed before the split|did not start within 300 ms)/.test(joiner.lastSharding.reason), joiner.lastSharding.reason);
      ok(!joiner.lost, 'the party is kept');
      await closed(p, true);
    },
    { engines: true },
  ],
  [
    'a helper whose worker is terminated mid-part fails the step with one clear error; nothing hangs and the party is kept',
    async (env) => {
      const r = env.psi.round;
      let terminated = 0;
      const workers = helperSpawn((data, handle) => {
        // The beat that starts a part (done 0 of its items): its worker goes as it works.
        if (data?.type === 'progress' && data.total > 0 && data.done < data.total && terminated === 0) {
          terminated++;
          handle.terminate();
          return false;
        }
        return true;
      });
      const p = createPsiPool({ ...psiPool(env), workers: 2, spawn: workers.spawn, silence: { initial: 2_000, min: 200, factor: 10 } });
      const joiner = await createJoiner(p, { workers: 2 });
      const values = Array.from({ length: 12_000 }, (_, i) => `person-${i}@example.org`);
      const error = await rejects(joiner.request(values), PsiError, /helper 1 of the sharded step failed: .*(exited|crash|no progress)/i);
      equal(error.code, 'PSI_SHARD');
      equal(terminated, 1, 'one helper was terminated');
      ok(!joiner.lost, 'the party is kept');
      // The next step runs (on the replaced worker as a helper again).
      const again = await joiner.request(r.joiner, { ...KEYED });
      ok(again.length > 0 && joiner.lastSharding.workers === 2, 'the next step ran sharded');
      await closed(p);
    },
    { engines: true },
  ],
  [
    "a helper that stops reporting is caught by the pool's silence limit and fails the step",
    async (env) => {
      // Every progress report from helpers' workers is lost on its way to the pool.
      const workers = helperSpawn((data) => data?.type !== 'progress');
      const p = createPsiPool({ ...psiPool(env), workers: 2, spawn: workers.spawn, silence: { initial: 1_000, min: 200, factor: 10 } });
      const joiner = await createJoiner(p, { workers: 2 });
      // The helper's part must outlast the silence limit: the addon maps an order of magnitude
      // faster than wasm, so it gets more values.
      const length = env.psiAsset === 'native' ? 200_000 : 16_000;
      const values = Array.from({ length }, (_, i) => `person-${i}@example.org`);
      const started = performance.now();
      const error = await rejects(joiner.request(values), PsiError, /helper 1 of the sharded step failed: WorkerHangError: .*no progress on 'psi.helper'/);
      equal(error.code, 'PSI_SHARD');
      ok(performance.now() - started < 30_000, 'caught in time');
      ok(!joiner.lost, 'the party is kept');
      await closed(p);
    },
    { engines: true },
  ],
  [
    "helpers of a party whose worker ends before the split free their workers: nothing hangs, the pool closes",
    async (env) => {
      // The second helper task is held back (never reaches its worker: the pool's silence limit
      // takes that worker), so the step waits for it; meanwhile the step is aborted, which ends
      // the party's worker. The helper that had the key and said ready must give up by itself.
      let tasks = 0;
      const workers = helperSpawn(() => true, () => ++tasks !== 2);
      const p = createPsiPool({ ...psiPool(env), workers: 3, spawn: workers.spawn, silence: { initial: 2_000, min: 200, factor: 10 } });
      const joiner = await createJoiner(p, { workers: 3, shardWait: 3_000 });
      const values = Array.from({ length: 2_000 }, (_, i) => `person-${i}@example.org`);
      const controller = new AbortController();
      // Aborted at the party's first beat once both helper tasks were posted (it beats while it waits).
      const running = joiner.request(values, {}, {
        signal: controller.signal,
        onProgress: () => {
          if (tasks >= 2) controller.abort(new Error('enough'));
        },
      });
      await rejects(running, AbortError);
      ok(joiner.lost, 'the aborted party is lost with its worker');
      equal(tasks, 2, 'both helpers were submitted');
      const started = performance.now();
      await closed(p);
      ok(performance.now() - started < 20_000, `closed in ${Math.round(performance.now() - started)} ms`);
    },
    { engines: true },
  ],
  ...['finishes', 'is aborted'].map((how) => [
    `a helper task still queued when its step ${how} never holds a worker: it returns as soon as it starts, or is refused`,
    async (env) => {
      // Helper tasks posted to a worker and not yet answered.
      let helping = 0;
      const helperResults = [];
      const spawn = opSpawn((data, _handle, op) => {
        if (op !== 'psi.helper' || (data?.type !== 'result' && data?.type !== 'error')) return;
        helping--;
        helperResults.push(data.output);
      }, { onPost: (op) => op === 'psi.helper' && helping++ });
      const p = createPsiPool({ ...psiPool(env), workers: 2, spawn });
      // Made at once, so on two workers: the starter's, and the joiner's, which a long request of
      // its own (on one worker) keeps busy while the starter's step runs; the step's helper task
      // waits in the queue. Once the step is over it gets the starter's worker, or (the step
      // aborted, that worker gone) the one started in its place, after that one's handshake. Node
      // then refuses to post it (its channel's other end went with the party's worker); a
      // browser cannot tell, and it must return at once, seeing that its step ended.
      const [starter, joiner] = await Promise.all([createStarter(p, { workers: 2, shardWait: 2_000 }), createJoiner(p, { workers: 1 })]);
      const long = Array.from({ length: env.psiAsset === 'native' ? 80_000 : 20_000 }, (_, i) => `person-${i}@example.org`);
      const busy = joiner.request(long);
      await until(() => p.stats.busy === 1, "the joiner's request running");
      const values = Array.from({ length: 2_000 }, (_, i) => `person-${i}@example.org`);
      const controller = new AbortController();
      const step = starter.setup(values, { joinerCount: 10 }, {
        signal: controller.signal,
        // The party's worker beats while it waits for its helper: aborted then, helper queued.
        onProgress: () => {
          if (how === 'is aborted' && p.stats.queued === 1) controller.abort(new Error('enough'));
        },
      });
      if (how === 'finishes') {
        await step;
        equal(starter.lastSharding.workers, 1, 'the step ran without its helper');
        ok(/helper 1 did not start within 2000 ms/.test(starter.lastSharding.reason), starter.lastSharding.reason);
      } else {
        await rejects(step, AbortError);
      }
      const ended = performance.now();
      await until(() => p.stats.queued === 0 && helping === 0, 'the late helper task to leave the queue and hold no worker', 2_000);
      env.figure?.(`a late helper gone after its step ${how}`, performance.now() - ended);
      ok(helperResults.every((output) => output?.used === false), `a helper that ran was unused: ${JSON.stringify(helperResults)}`);
      await busy;
      ok(!joiner.lost, 'the other party is kept');
      await closed(p);
    },
    { engines: true },
  ]),
  ...HELPER_ENDINGS.map((end) => [
    `a helper frees its worker within ${HELPER_FREED_MS} ms when its step ends by ${end.name}, and close() does not wait for it`,
    (env) => helperEndsWithStep(env, end),
    { engines: true },
  ]),
];
