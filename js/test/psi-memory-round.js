// One PSI round for the memory bench (bench/psi-memory.js) and the largest-set test
// (test/node/largest.test.js), the same way in Node and in a page: each role in a pool of its own
// (as two organisations' pages are), each step sharded over `workers`, on
// `count` values a party; after each step the memory its report gives (the page's JS heap, each
// worker's wasm linear memory and JS heap: PsiSharding.memory) and, in Chromium, the browser's
// own breakdown where `measure` (performance.measureUserAgentSpecificMemory) is given.

/** The sets: `count` values a party, half of them shared. */
function sets(count) {
  const starter = Array.from({ length: count }, (_, i) => `person-${i}@example.org`);
  const joiner = Array.from({ length: count }, (_, i) => `person-${i + count / 2}@example.org`);
  return { starter, joiner };
}

/**
 * One round at `count`; resolves with a row per step: { step, seconds, page, workers, browser }.
 *
 * @param {typeof import('../src/index.js')} lockstep
 * @param {number} count
 * @param {number} workers
 * @param {(() => Promise<unknown>) | undefined} measure
 */
export async function memoryRound(lockstep, count, workers, measure) {
  const { starter: starterValues, joiner: joinerValues } = sets(count);
  const starterPool = lockstep.createPsiPool({ workers, asset: 'scalar' });
  const joinerPool = lockstep.createPsiPool({ workers, asset: 'scalar' });
  const rows = [];
  const timed = async (step, party, run) => {
    const start = performance.now();
    const out = await run();
    const seconds = (performance.now() - start) / 1000;
    const sharding = out?.sharding ?? party.lastSharding;
    if (sharding.workers !== workers) throw new Error(`${step} ${sharding.reason}`);
    rows.push({ step, seconds, page: sharding.memory.page, workers: sharding.memory.workers, browser: measure ? summary(await measure()) : undefined });
    return out;
  };
  try {
    const starter = await lockstep.createStarter(starterPool, { shards: workers });
    const joiner = await lockstep.createJoiner(joinerPool, { shards: workers });
    const setup = await timed('setup', starter, () => starter.setup(starterValues, { joinerCount: count, format: 'raw' }));
    const request = await timed('request', joiner, () => joiner.request(joinerValues));
    const response = await timed('respond', starter, () => starter.respond(request, { joinerCount: count }));
    const found = await timed('intersect', joiner, () => joiner.intersect(setup, response));
    if (found.size !== count / 2) throw new Error(`the round found ${found.size}, not ${count / 2}`);
    return rows;
  } finally {
    await starterPool.close();
    await joinerPool.close();
  }
}

/** measureUserAgentSpecificMemory's result as the page's bytes and each worker's. @param {any} result */
function summary(result) {
  if (!result?.breakdown) return undefined;
  let page = 0;
  const workers = [];
  for (const entry of result.breakdown) {
    const scope = entry.attribution?.[0]?.scope;
    if (scope === 'DedicatedWorkerGlobalScope') workers.push(entry.bytes);
    else if (scope === 'Window') page += entry.bytes;
  }
  return { total: result.bytes, page, workers: workers.sort((a, b) => b - a) };
}
