// What the pool bench measures, the same way in Node and in a browser page. `pool` is any
// object; `run(pool)` submits one no-op task; `close(pool)` ends the pool.

const now = () => performance.now();

export const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** ms from creating a pool to the answer of its first task (a worker's startup and handshake). */
export async function startup({ make, run, close }, samples) {
  const times = [];
  for (let i = 0; i < samples; i++) {
    const start = now();
    const pool = make();
    await run(pool);
    times.push(now() - start);
    await close(pool);
  }
  return median(times);
}

/** µs per task for `count` no-op tasks one after another on a warm pool (median of `rounds`). */
export async function roundTrip({ make, run, close }, count, rounds) {
  const pool = make();
  for (let i = 0; i < 200; i++) await run(pool); // warm up
  const perTask = [];
  for (let r = 0; r < rounds; r++) {
    const start = now();
    for (let i = 0; i < count; i++) await run(pool);
    perTask.push(((now() - start) * 1000) / count);
  }
  await close(pool);
  return median(perTask);
}

/** Tasks per second for `count` no-op tasks submitted at once (median of `rounds`). */
export async function throughput({ make, run, close }, count, rounds) {
  const pool = make();
  for (let i = 0; i < 200; i++) await run(pool);
  const rates = [];
  for (let r = 0; r < rounds; r++) {
    const start = now();
    await Promise.all(Array.from({ length: count }, () => run(pool)));
    rates.push(count / ((now() - start) / 1000));
  }
  await close(pool);
  return median(rates);
}

/** Values per second of a PSI request of `count` values on one worker of `makePool()` (median). */
export async function psiRate(makePool, psiRequest, count, rounds) {
  const pool = makePool();
  const key = new Uint8Array(32).fill(3);
  const values = Array.from({ length: count }, (_, i) => `person-${i}@example.org`);
  await psiRequest(pool, { key, values: values.slice(0, 10) }); // start the worker
  const rates = [];
  for (let r = 0; r < rounds; r++) {
    const start = now();
    await psiRequest(pool, { key, values });
    rates.push(count / ((now() - start) / 1000));
  }
  await pool.close();
  return median(rates);
}
