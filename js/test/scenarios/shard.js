// The sharded PSI steps' scenarios (src/psi/shard/): the CLI's bytes at every shard count, the
// key never shown to the page, helpers that fail, stop reporting or are terminated, and helpers
// freed however their step ends.

import {
  AbortError,
  PoolClosedError,
  TaskTimeoutError,
  WorkerCrashError,
  WorkerHangError,
  PsiError,
  createJoiner,
  createPsiPool,
  createStarter,
  spawnWorker,
} from '../../src/index.js';
import { equal, ok, rejects, sameBytes, until } from '../assert.js';
import { closed, fromB64, KEYED, psiPool } from './harness.js';

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
  const starter = await createStarter(p, { key: fromB64(r.starterKey), shards: 2 });
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

// Every message the page's ports receive while `fn` runs: each port the page starts (the
// control channels of sharded steps, which messages.js's Link starts; helper channels' ends all
// leave the page) gets a recording listener as it starts. The hook is on MessagePort.prototype,
// not a MessageChannel subclass put in place of the global: JavaScriptCore, once it has optimized
// the package's `new MessageChannel()`, keeps building the original class after the global is
// replaced (WebKitGTK 2.50, after a few dozen scenarios in one page), and nothing was recorded.
async function recordingChannels(fn) {
  const start = MessagePort.prototype.start;
  const received = [];
  MessagePort.prototype.start = function recordingStart() {
    this.addEventListener('message', (event) => received.push(event.data));
    return start.call(this);
  };
  try {
    return { result: await fn(), received };
  } finally {
    MessagePort.prototype.start = start;
  }
}

export const shardScenarios = [
  [
    "sharded steps of both roles give the CLI's bytes at 1, 2, 3 and 4 workers, and the one-worker bytes around every split",
    async (env) => {
      const r = env.psi.round;
      const p = createPsiPool({ ...psiPool(env), workers: 4 });
      for (const workers of [1, 2, 3, 4]) {
        const starter = await createStarter(p, { key: fromB64(r.starterKey), shards: workers });
        const joiner = await createJoiner(p, { key: fromB64(r.joinerKey), shards: workers });
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
        const starter = await createStarter(p, { key: keys.starter, shards: workers });
        const joiner = await createJoiner(p, { key: keys.joiner, shards: workers });
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
        const starter = await createStarter(p, { key: fromB64(r.starterKey), shards: 3 });
        const joiner = await createJoiner(p, { key: fromB64(r.joinerKey), shards: 3 });
        const fresh = await createJoiner(p, { shards: 3 });
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
      const joiner = await createJoiner(p, { key: fromB64(r.joinerKey), shards: 2, shardWait: 300 });
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
      const joiner = await createJoiner(p, { shards: 2 });
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
      const joiner = await createJoiner(p, { shards: 2 });
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
      const joiner = await createJoiner(p, { shards: 3, shardWait: 3_000 });
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
      const [starter, joiner] = await Promise.all([createStarter(p, { shards: 2, shardWait: 2_000 }), createJoiner(p, { shards: 1 })]);
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
