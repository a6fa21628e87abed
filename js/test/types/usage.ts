// Compiled by `tsc --noEmit` in the tests: the declarations accept real use and refuse misuse.
import {
  BudgetError,
  Pool,
  StartupError,
  createPsiPool,
  psiRequest,
  type PoolStats,
} from 'lockstep';
import { serve } from 'lockstep/worker';

const pool = new Pool({ worker: new URL('./w.js', import.meta.url), workers: 2, maxQueue: 0, memoryBudget: 1 << 20 });
const controller = new AbortController();
const n: Promise<number> = pool.run<number>('square', 3, { signal: controller.signal, timeout: 100, reserve: 64 });
const stats: PoolStats = pool.stats;
const reserved: number = stats.reservedBytes + pool.reservedBytes;

const psi = createPsiPool({ asset: 'simd', workers: 4 });
const bytes: Promise<Uint8Array> = psiRequest(psi, { key: new Uint8Array(32), values: ['a', new Uint8Array(1)] });

async function handle(error: unknown) {
  if (error instanceof StartupError && error.reason === 'version') return error.expected;
  if (error instanceof BudgetError) return error.available;
  await pool.close({ force: true });
  await using scoped = new Pool({ worker: 'w.js' });
  return scoped.workers;
}

serve({
  load: async () => ({ asset: 'js', abi: 1 }),
  ops: { square: (x: number, { progress }) => (progress(1, 1), x * x) },
});

// @ts-expect-error: the worker option is required
new Pool({ workers: 2 });
// @ts-expect-error: asset is one of three names
createPsiPool({ asset: 'avx2' });
// @ts-expect-error: owned is psiRequest's own business
psiRequest(psi, { key: new Uint8Array(32), values: [] }, { owned: true });

export { n, reserved, bytes, handle };
