// The shard protocol's two ends (src/psi/shard/coordinator.js, helper.js, page.js) against scripted
// peers on MessageChannels in this thread, with a stand-in engine: what a coordinator takes from
// a helper before it merges, what it makes of a helper task that resolves without its part,
// which error a step gets when several parts fail, and how a helper stops when its step ends.
// The real engines and workers run the same code in test/scenarios/shard.js.
import { test } from '../bounded.js';
import assert from 'node:assert/strict';
import { runSharded } from '../../src/psi/shard/coordinator.js';
import { runHelper } from '../../src/psi/shard/helper.js';
import { runShardedStep } from '../../src/psi/shard/page.js';
import { ELEMENT_LEN } from '../../src/psi/shard/messages.js';
import { CHUNK } from '../../src/psi/shard/parts.js';

/** The engine's split's shape (lockstep_psi::parts::ranges): `workers` ranges, the first ones a longer by one. */
function psiRanges(count, workers) {
  const out = new Uint32Array(2 * workers);
  let at = 0;
  for (let i = 0; i < workers; i++) {
    const length = Math.floor(count / workers) + (i < count % workers ? 1 : 0);
    out[2 * i] = at;
    out[2 * i + 1] = at + length;
    at += length;
  }
  return out;
}

/** The item of a stand-in element that makes the engine fail ("off the curve"). */
const BAD = 0xee;

/**
 * A stand-in for the engine's re-masking: each element's bytes + 1; an element whose first byte
 * is BAD fails with PSI_MESSAGE naming its index, as the engine's does.
 */
const mapper = {
  remaskPart(elements, first, progress) {
    const count = elements.length / ELEMENT_LEN;
    for (let i = 0; i < count; i++) {
      if (elements[i * ELEMENT_LEN] === BAD) throw Object.assign(new Error(`element ${first + i} is off the curve`), { code: 'PSI_MESSAGE' });
    }
    progress(count, count);
    return elements.map((b) => (b + 1) & 0xff);
  },
};

/** `count` stand-in elements (none BAD unless `bad` names their indexes). */
function elementsOf(count, bad = []) {
  const elements = new Uint8Array(count * ELEMENT_LEN);
  for (let i = 0; i < count; i++) elements.fill(i % 200, i * ELEMENT_LEN, (i + 1) * ELEMENT_LEN);
  for (const i of bad) elements[i * ELEMENT_LEN] = BAD;
  return elements;
}

/** The pool's progress rule (worker.js): whole numbers >= 0, else a TypeError. */
function poolProgress(done, total) {
  if (!(Number.isSafeInteger(done) && done >= 0 && Number.isSafeInteger(total) && total >= 0)) {
    throw new TypeError(`progress(done, total) takes whole numbers >= 0, not (${done}, ${total})`);
  }
}

/**
 * A scripted helper on `port`: says hello, answers the key with ready, and gives each part to
 * `onPart(part, post)`; it records the keys it was sent.
 */
function scriptedHelper(port, onPart) {
  const seen = { keys: [], parts: 0 };
  port.addEventListener('message', ({ data }) => {
    if (data?.type === 'key') {
      seen.keys.push(data.key);
      port.postMessage({ type: 'ready' });
    } else if (data?.type === 'part') {
      seen.parts++;
      onPart(data, (message, transfer) => port.postMessage(message, transfer ?? []));
    }
  });
  port.start();
  port.postMessage({ type: 'hello' });
  return seen;
}

/** A part's outputs as a faithful helper makes them. */
const outputsOf = (part) => mapper.remaskPart(part.elements, part.first, () => {});

/**
 * A respond-like step of `count` items over this thread (the coordinator) and `onParts.length`
 * scripted helpers; `finished` holds what reached `finish`.
 */
function shardedStep({ count, onParts, bad = [], party = mapper }) {
  const control = new MessageChannel();
  const channels = onParts.map(() => new MessageChannel());
  const helpers = onParts.map((onPart, i) => scriptedHelper(channels[i].port2, onPart));
  const finished = [];
  const key = Uint8Array.from({ length: 32 }, (_, i) => i + 1);
  const exported = [];
  const run = runSharded({
    shard: { control: control.port2, helpers: channels.map((c) => c.port1), wait: 2_000 },
    role: 'starter',
    party: {
      ...party,
      exportKey: () => {
        const copy = key.slice();
        exported.push(copy);
        return copy;
      },
    },
    begin: () => ({ kind: 'remask', elements: elementsOf(count, bad) }),
    finish: (mapped) => {
      finished.push(mapped);
      return mapped;
    },
    psiRanges,
    progress: poolProgress,
    memory: () => ({ wasmBytes: 0 }),
  });
  return { run, control: control.port1, helpers, finished, exported };
}

/** Rejects after `ms` with what it was waiting for: a wait that must end, bounded. */
function within(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new assert.AssertionError({ message: `still waiting after ${ms} ms: ${what}` })), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Runs `fn`, failing if anything throws uncaught meanwhile (a message listener, say). */
async function noUncaught(fn) {
  const caught = [];
  const listener = (error) => caught.push(error);
  process.on('uncaughtException', listener);
  try {
    return await fn();
  } finally {
    // Listeners of messages already delivered have run by the next macrotask.
    await new Promise((resolve) => setTimeout(resolve, 20));
    process.off('uncaughtException', listener);
    assert.deepEqual(caught.map((e) => e?.message ?? e), [], 'nothing thrown uncaught');
  }
}

async function refusedPart(onPart, pattern) {
  const step = shardedStep({ count: 64, onParts: [onPart] });
  const error = await within(step.run.then(() => null, (e) => e), 5_000, 'the step to settle');
  assert.ok(error, 'the step fails');
  assert.equal(error.code, 'PSI_SHARD', error.message);
  assert.match(error.message, pattern);
  assert.equal(step.finished.length, 0, 'nothing was merged');
}

test("a helper's part 33 bytes short is refused before the merge: PSI_SHARD naming its length", async () => {
  await refusedPart(
    (part, post) => post({ type: 'result', output: outputsOf(part).subarray(ELEMENT_LEN) }),
    /^helper 1 of the sharded step failed: its part's outputs are 1023 bytes for 32 items \(1056 expected\)$/,
  );
});

test("a helper's part 64 MiB long is refused before the merge", async () => {
  await refusedPart(
    (_part, post) => post({ type: 'result', output: new Uint8Array(64 << 20) }),
    /^helper 1 of the sharded step failed: its part's outputs are 67108864 bytes for 32 items \(1056 expected\)$/,
  );
});

test("a part's outputs that are no bytes are refused", async () => {
  await refusedPart((_part, post) => post({ type: 'result', output: [1, 2, 3] }), /its part's outputs are not bytes but object/);
});

test('progress counts outside 0 to the part\'s items fail the step; none throws in a message listener', async () => {
  for (const done of [-1, 33, 1.5, 'ten']) {
    await noUncaught(() =>
      refusedPart(
        (part, post) => {
          post({ type: 'progress', done });
          post({ type: 'result', output: outputsOf(part) });
        },
        new RegExp(`^helper 1 of the sharded step failed: it reported ${done === 'ten' ? '"ten"' : String(done).replace('.', '\\.')} items done of a part of 32$`),
      ),
    );
  }
  // In range: counted, and the step merges.
  const step = shardedStep({
    count: 64,
    onParts: [(part, post) => {
      post({ type: 'progress', done: 0 });
      post({ type: 'progress', done: 32 });
      post({ type: 'result', output: outputsOf(part) });
    }],
  });
  const { result } = await within(step.run, 5_000, 'the step');
  assert.deepEqual(result, mapper.remaskPart(elementsOf(64), 0, () => {}), 'the one-part bytes');
});

test('a helper task that resolves without its part fails the step at once: PSI_SHARD, not a wait', async () => {
  // The page (runShardedStep) over a stand-in pool: the coordinator runs here; the helper task
  // takes its key and part, then resolves without posting the outputs (as one that gave up
  // waiting did).
  const pool = {
    run(op, input) {
      if (op === 'psi.helper') {
        return new Promise((resolve) => {
          scriptedHelper(input.port, (part) => resolve({ used: true, items: part.elements.length / ELEMENT_LEN }));
        });
      }
      return runSharded({
        shard: input.shard,
        role: 'starter',
        party: { ...mapper, exportKey: () => new Uint8Array(32).fill(7) },
        begin: () => ({ kind: 'remask', elements: elementsOf(64) }),
        finish: (mapped) => mapped,
        psiRanges,
        progress: poolProgress,
        memory: () => ({ wasmBytes: 0 }),
      });
    },
  };
  const started = performance.now();
  const error = await within(
    runShardedStep(/** @type {any} */ (pool), 'psi.party.respond', {}, {}, { helpers: 1, wait: 2_000 }).then(() => null, (e) => e),
    5_000,
    'the step to settle once its helper resolved without its part',
  );
  assert.ok(error, 'the step fails');
  assert.equal(error.code, 'PSI_SHARD');
  assert.match(error.message, /^helper 1 of the sharded step failed: its task ended without its part's outputs$/);
  assert.ok(performance.now() - started < 1_000, `settled in ${Math.round(performance.now() - started)} ms`);
});

test("the step's error is the lowest part's: the party's own engine error wins over a higher helper that failed first", async () => {
  // The party's own part (part 0) holds a bad element in its last chunk; helper 1's worker fails
  // (the page says so) as soon as it is given its part, long before.
  const own = 5 * CHUNK;
  const step = shardedStep({ count: 2 * own, bad: [own - 1], onParts: [() => {}] });
  const gone = new Promise((resolve) => {
    const watch = setInterval(() => {
      if (step.helpers[0].parts > 0) {
        clearInterval(watch);
        step.control.postMessage({ type: 'helper-failed', index: 1, message: 'WorkerCrashError: gone' });
        resolve();
      }
    }, 1);
  });
  const error = await within(step.run.then(() => null, (e) => e), 10_000, 'the step to settle');
  await gone;
  assert.equal(error?.code, 'PSI_MESSAGE', `the own part's error, not ${error?.code}: ${error?.message}`);
  assert.match(error.message, new RegExp(`element ${own - 1} is off the curve`));
  // And where the lower part is sound, the helper's failure is the step's.
  const sound = shardedStep({ count: 64, onParts: [() => {}] });
  const failing = new Promise((resolve) => {
    const watch = setInterval(() => {
      if (sound.helpers[0].parts > 0) {
        clearInterval(watch);
        sound.control.postMessage({ type: 'helper-failed', index: 1, message: 'WorkerCrashError: gone' });
        resolve();
      }
    }, 1);
  });
  const shard = await within(sound.run.then(() => null, (e) => e), 5_000, 'the step to settle');
  await failing;
  assert.equal(shard?.code, 'PSI_SHARD');
  assert.match(shard.message, /^helper 1 of the sharded step failed: WorkerCrashError: gone$/);
});

/**
 * A stand-in PsiHelper whose parts take `msPerChunk` a chunk (busy, as a wasm call is: nothing
 * else runs meanwhile), recording the chunks it mapped, the keys it was given and its frees.
 */
function slowHelperClass(msPerChunk) {
  const record = { chunks: 0, keys: [], frees: 0 };
  const PsiHelper = {
    fromKey(role, key) {
      record.keys.push({ role, key, bytes: [...key] });
      return {
        remaskPart(elements, first, progress) {
          const until = performance.now() + msPerChunk;
          while (performance.now() < until);
          record.chunks++;
          return mapper.remaskPart(elements, first, progress);
        },
        free() {
          record.frees++;
        },
      };
    },
  };
  return { PsiHelper, record };
}

/** This thread as a helper's coordinator: answers its hello with `key` and gives it `part`. */
function scriptedCoordinator(port, key, part) {
  const seen = [];
  port.addEventListener('message', ({ data }) => {
    seen.push(data);
    if (data?.type === 'hello') {
      const copy = new Uint8Array(new ArrayBuffer(32));
      copy.set(key);
      port.postMessage({ type: 'key', role: 'starter', key: copy }, [copy.buffer]);
    } else if (data?.type === 'ready') {
      port.postMessage({ type: 'part', ...part }, [part.elements.buffer]);
    }
  });
  port.start();
  return seen;
}

test("a helper stops within a chunk of its part when the page ends its step (its coordinator silent), and frees its key", async () => {
  const chunks = 40;
  const { PsiHelper, record } = slowHelperClass(25);
  const channel = new MessageChannel();
  const end = new MessageChannel();
  const key = Uint8Array.from({ length: 32 }, (_, i) => 100 + i);
  const seen = scriptedCoordinator(channel.port1, key, { kind: 'remask', first: 0, elements: elementsOf(chunks * CHUNK) });
  let endedAt = 0;
  const done = runHelper({ port: channel.port2, end: end.port2 }, PsiHelper, (d, total) => {
    // Its first beat inside the part: the step ends now (the coordinator says nothing more).
    if (total > 0 && endedAt === 0) {
      endedAt = performance.now();
      end.port1.postMessage({ type: 'end' });
    }
  }, () => ({ wasmBytes: 0 }));
  const outcome = await within(done, 5_000, 'the helper to return');
  const took = performance.now() - endedAt;
  assert.deepEqual(outcome, { used: true, items: 0 }, 'it gave up its part');
  assert.ok(record.chunks <= 2, `it mapped ${record.chunks} of ${chunks} chunks after the end`);
  assert.ok(took < 500, `it returned ${Math.round(took)} ms after the end`);
  assert.ok(record.frees >= 1, 'its key was freed');
  assert.equal(record.keys.length, 1);
  assert.deepEqual(record.keys[0].bytes, [...key], 'the key it was delivered');
  assert.ok(record.keys[0].key.every((b) => b === 0), 'the bytes it was given are wiped, even where the engine does not');
  assert.ok(!seen.some((m) => m?.type === 'result'), 'no outputs were sent');
});

test('a helper ended before its key or part comes returns at once, unused', async () => {
  const { PsiHelper, record } = slowHelperClass(1);
  const channel = new MessageChannel();
  const end = new MessageChannel();
  // Ended before it even starts (a queued helper task whose step is over).
  end.port1.postMessage({ type: 'end' });
  const started = performance.now();
  const outcome = await within(runHelper({ port: channel.port2, end: end.port2 }, PsiHelper, () => {}, () => ({ wasmBytes: 0 })), 2_000, 'the helper to return');
  assert.deepEqual(outcome, { used: false, items: 0 });
  assert.ok(performance.now() - started < 500, `returned in ${Math.round(performance.now() - started)} ms`);
  assert.equal(record.keys.length, 0, 'no key was imported');
});

test("a helper resolves only once its part's outputs are acknowledged, or its step ended", async () => {
  const { PsiHelper } = slowHelperClass(0);
  const channel = new MessageChannel();
  const end = new MessageChannel();
  const key = new Uint8Array(32).fill(9);
  const part = { kind: 'remask', first: 0, elements: elementsOf(10) };
  const expected = outputsOf(part);
  let resolved = false;
  let result = null;
  channel.port1.addEventListener('message', ({ data }) => {
    if (data?.type === 'hello') {
      const copy = new Uint8Array(new ArrayBuffer(32));
      copy.set(key);
      channel.port1.postMessage({ type: 'key', role: 'starter', key: copy }, [copy.buffer]);
    } else if (data?.type === 'ready') {
      channel.port1.postMessage({ type: 'part', ...part }, [part.elements.buffer]);
    } else if (data?.type === 'result') {
      result = data.output;
    }
  });
  channel.port1.start();
  const done = runHelper({ port: channel.port2, end: end.port2 }, PsiHelper, () => {}, () => ({ wasmBytes: 0 })).then((o) => {
    resolved = true;
    return o;
  });
  const deadline = performance.now() + 2_000;
  while (result === null && performance.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(result, expected, 'its outputs came');
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(resolved, false, 'still waiting for the acknowledgment');
  channel.port1.postMessage({ type: 'ack' });
  assert.deepEqual(await within(done, 2_000, 'the helper to return once acknowledged'), { used: true, items: 10 });
});
