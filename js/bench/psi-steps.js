// What the PSI bench measures, the same way in Node and in a page: every step of a round, on
// one worker for us (a party of lockstep's npm package, per wasm build, and in Node on the native
// addon) and sharded over 2 and 4 (the scalar build; the addon in Node), and on the calling thread for @openmined/psi.js 2.0.6 (its own wasm), on
// the same values, in the same run.
// Values per second, median of `rounds` (after one warm-up round each). `PSI` is psi.js's
// module factory; `lockstep` this package's exports.
//
// Steps: setup (raw, the starter's set), request (the joiner's set), respond (the request),
// intersect (the response against the raw setup: the joiner's rows). Ours include the round
// trip to the worker and the copies in and out.

const now = () => performance.now();

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** Values per second of `step()` over `count` values: median of `rounds`, after a warm-up. */
async function rate(count, rounds, step) {
  await step();
  const rates = [];
  for (let r = 0; r < rounds; r++) {
    const start = now();
    await step();
    rates.push(count / ((now() - start) / 1000));
  }
  return median(rates);
}

/** The sets: the starter's `count` values and the joiner's `count`, half of them shared. */
export function sets(count) {
  const starter = Array.from({ length: count }, (_, i) => `person-${i}@example.org`);
  const joiner = Array.from({ length: count }, (_, i) => `person-${i + count / 2}@example.org`);
  return { starter, joiner };
}

/** Our four steps with `asset`, each sharded over `workers` workers of a PSI pool of as many. */
export async function ours(lockstep, asset, count, rounds, workers = 1) {
  const { starter: starterValues, joiner: joinerValues } = sets(count);
  const pool = lockstep.createPsiPool({ workers, asset });
  try {
    const starter = await lockstep.createStarter(pool, { shards: workers });
    const joiner = await lockstep.createJoiner(pool, { shards: workers });
    let setup;
    let request;
    let response;
    const out = {};
    out.setup = await rate(count, rounds, async () => {
      setup = await starter.setup(starterValues, { joinerCount: count, format: 'raw' });
    });
    out.request = await rate(count, rounds, async () => {
      request = await joiner.request(joinerValues);
    });
    out.respond = await rate(count, rounds, async () => {
      response = await starter.respond(request, { joinerCount: count });
    });
    let found;
    out.intersect = await rate(count, rounds, async () => {
      found = await joiner.intersect(setup, response);
    });
    if (found.size !== count / 2) throw new Error(`our round found ${found.size}, not ${count / 2}`);
    if (found.sharding.workers !== workers) throw new Error(`ran on ${found.sharding.reason}, not ${workers} workers`);
    return out;
  } finally {
    await pool.close();
  }
}

/** psi.js's four steps on the calling thread. */
export async function theirs(PSI, count, rounds) {
  const psi = await PSI();
  const { starter: starterValues, joiner: joinerValues } = sets(count);
  const server = psi.server.createWithNewKey(true);
  const client = psi.client.createWithNewKey(true);
  let setup;
  let request;
  let response;
  const out = {};
  out.setup = await rate(count, rounds, () => {
    setup = server.createSetupMessage(1e-9, count, starterValues, psi.dataStructure.Raw).serializeBinary();
  });
  out.request = await rate(count, rounds, () => {
    request = client.createRequest(joinerValues).serializeBinary();
  });
  out.respond = await rate(count, rounds, () => {
    response = server.processRequest(psi.request.deserializeBinary(request)).serializeBinary();
  });
  let found;
  out.intersect = await rate(count, rounds, () => {
    found = client.getIntersection(psi.serverSetup.deserializeBinary(setup), psi.response.deserializeBinary(response));
  });
  if (found.length !== count / 2) throw new Error(`psi.js's round found ${found.length}, not ${count / 2}`);
  server.delete?.();
  client.delete?.();
  return out;
}

/**
 * Every measure of one environment: ours per build on one worker, the scalar build sharded over
 * each of `shards` (counts above 1), with `native` (Node) the native addon on one worker and
 * sharded the same way, and psi.js, interleaved.
 */
export async function measureAll(lockstep, PSI, count, rounds, shards = [2, 4], { native = false } = {}) {
  const before = await theirs(PSI, count, rounds);
  const scalar = await ours(lockstep, 'scalar', count, rounds);
  const sharded = {};
  for (const workers of shards) sharded[workers] = await ours(lockstep, 'scalar', count, rounds, workers);
  let nativeSharded;
  if (native) {
    nativeSharded = { 1: await ours(lockstep, 'native', count, rounds) };
    for (const workers of shards) nativeSharded[workers] = await ours(lockstep, 'native', count, rounds, workers);
  }
  const simd = await ours(lockstep, 'simd', count, rounds);
  const after = await theirs(PSI, count, rounds);
  // psi.js's better figure of its two runs, so noise favours the peer.
  const psiJs = Object.fromEntries(Object.keys(before).map((k) => [k, Math.max(before[k], after[k])]));
  return { scalar, simd, psiJs, sharded: { 1: scalar, ...sharded }, native: nativeSharded };
}
