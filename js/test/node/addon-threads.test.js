// The addon's native threads stay bounded however many distinct `workers` counts a process asks
// for (issue 28, 4): the addon keeps one set of pools (bindings/node/src/lib.rs, `pool`;
// crates/shard/src/pools.rs, `Pools::for_process`) holding at most `keep` = max(2 x the
// machine's parallelism, 16) worker threads in all, each kept pool with at most one watchdog
// thread; a pool larger than that is made for its run and not kept (its threads end after it);
// more than 256 workers is refused. Counted from /proc/self/status (`Threads:`) and, by name,
// from /proc/self/task/*/comm (`lockstep-worker-N`, `lockstep-watchdog`; a name is cut to 15
// bytes there). Before the bound, 24 runs with `workers` 1..24 left every pool running: 11 threads
// became 335 (1 + 2 + ... + 24 workers and 24 watchdogs), and 1..256 would pass the pid limit.
import { test } from '../bounded.js';
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { readFileSync, readdirSync } from 'node:fs';
import { loadAddon } from '../../src/engines/native.js';
import { runPlan } from '../../src/index.js';

/** The threads of this process now. */
const threads = () => Number(/^Threads:\s+(\d+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);

/** This process's threads by kind: the native pools' workers, their watchdogs. */
function named() {
  let workers = 0;
  let watchdogs = 0;
  for (const task of readdirSync('/proc/self/task')) {
    let name = '';
    try {
      name = readFileSync(`/proc/self/task/${task}/comm`, 'utf8').trim();
    } catch {
      continue; // a thread that ended meanwhile
    }
    if (name.startsWith('lockstep-worker')) workers++;
    else if (name.startsWith('lockstep-watch')) watchdogs++;
  }
  return { workers, watchdogs };
}

// The allowance of Pools::for_process. Rust's parallelism also counts a cgroup's CPU quota, so
// it is at most Node's (the affinity mask): `keep` here is at least the addon's.
const KEEP = Math.max(2 * availableParallelism(), 16);

/** Whether the pools' threads are within the bound now: at most KEEP workers, a watchdog each. */
function within(baseline) {
  const { workers, watchdogs } = named();
  const total = threads();
  return { ok: workers <= KEEP && watchdogs <= workers && total <= baseline + 2 * KEEP, workers, watchdogs, total };
}

/**
 * Waits (at most 5 s) until the pools' threads are within the bound: the threads of a pool no
 * longer kept end once its run is over, not at once. Returns the last count.
 */
async function settled(baseline) {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const now = within(baseline);
    if (now.ok || Date.now() > deadline) return now;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const PLAN = { version: 1, inputs: [{ id: 'x', dtype: 'f64' }], nodes: [{ id: 'y', op: 'sqrt', args: ['x'] }], outputs: [{ id: 'o', from: 'y' }] };

test('plan runs on the addon with workers 1..24 and 256 keep its threads bounded; 257 is refused', { timeout: 120_000 }, async (t) => {
  try {
    readFileSync('/proc/self/status');
    readdirSync('/proc/self/task');
  } catch {
    t.skip('no /proc/self here');
    return;
  }
  const { addon, reason } = await loadAddon();
  assert.ok(addon, `the addon loads here (scripts/build-node): ${reason}`);
  const plan = addon.PlanProgram.fromJson(JSON.stringify(PLAN));
  // Past the executor's one-task size (32,768 elements), so a run is split over its workers.
  const n = 100_003;
  const x = Float64Array.from({ length: n }, (_, i) => i);
  const expected = x.map(Math.sqrt);
  const baseline = threads();
  assert.equal(named().workers, 0, 'no pool before the first run');
  let most = { workers: 0, watchdogs: 0, total: baseline };
  /** @param {string} what */
  const check = async (what) => {
    const now = await settled(baseline);
    assert.ok(now.ok, `${what}: ${now.workers} pool workers and ${now.watchdogs} watchdogs (at most ${KEEP} and one a worker), ${now.total} threads (from ${baseline}, at most ${baseline + 2 * KEEP})`);
    if (now.total > most.total) most = now;
  };
  for (const pass of ['first', 'again']) {
    for (let workers = 1; workers <= 24; workers++) {
      const out = new Float64Array(n);
      plan.run([x], [out], workers);
      assert.deepEqual(out, expected, `run on ${workers} workers`);
      await check(`${pass}: after run(workers ${workers})`);
    }
    // runAsync (a worker's placement) on a thread of its own, on the same pools.
    for (let workers = 1; workers <= 24; workers++) {
      const out = new Float64Array(n);
      const outcome = await plan.runAsync([x], [out], workers, new addon.PlanControl());
      assert.equal(outcome, null, `runAsync on ${workers} workers: ${outcome}`);
      assert.deepEqual(out, expected, `runAsync on ${workers} workers`);
      await check(`${pass}: after runAsync(workers ${workers})`);
    }
  }
  // 256, the most a run may ask: a pool of 256 threads for the run, not kept.
  const out = new Float64Array(n);
  plan.run([x], [out], 256);
  assert.deepEqual(out, expected, 'run on 256 workers');
  await check('after run(workers 256)');
  const [viaFront] = await runPlan(PLAN, [x], { backend: 'native', placement: 'sync', workers: 256 });
  assert.deepEqual(viaFront, expected, 'runPlan on 256 workers');
  await check('after runPlan(workers 256)');
  // Past it: refused before any thread starts, by the addon and by runPlan.
  // tryRun, the call runPlan makes: a throw from an addon ends Node under
  // --abort-on-uncaught-exception, under which npm test runs this file (nodejs/node#28409).
  const refused = plan.tryRun([x], [new Float64Array(n)], 257);
  assert.ok(Array.isArray(refused) && refused[0] === 'PLAN_BINDING' && /at most 256/.test(refused[1]), `tryRun(257): ${refused}`);
  await assert.rejects(runPlan(PLAN, [x], { backend: 'native', placement: 'sync', workers: 257 }), (e) => e.code === 'PLAN_BINDING');
  await check('after workers 257');
  t.diagnostic(`threads: ${baseline} before, at most ${most.total} after any run settled (${most.workers} pool workers, ${most.watchdogs} watchdogs; allowance ${KEEP} workers)`);
});

test('PSI on the addon starts no native threads (its calls run on the calling thread)', async (t) => {
  try {
    readdirSync('/proc/self/task');
  } catch {
    t.skip('no /proc/self here');
    return;
  }
  const { addon, reason } = await loadAddon();
  assert.ok(addon, `the addon loads here (scripts/build-node): ${reason}`);
  const before = named();
  const values = new TextEncoder().encode('a@x'.repeat(2_000));
  const ends = Uint32Array.from({ length: 2_000 }, (_, i) => 3 * (i + 1));
  const key = new Uint8Array(32);
  key[31] = 7;
  const request = addon.psiRequest(key, values, ends, true, false, undefined);
  assert.ok(request.length > 0, 'a request');
  assert.deepEqual(named(), before, 'the same pool workers and watchdogs');
});
