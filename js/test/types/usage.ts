// Compiled by `tsc --noEmit` in the tests: the declarations accept real use and refuse misuse.
import {
  BudgetError,
  Pool,
  PsiError,
  RelayClient,
  RelayError,
  StartupError,
  WorkerLostError,
  createJoiner,
  createPsiPool,
  createStarter,
  psiInfo,
  psiRequest,
  relayRound,
  type PsiEngineInfo,
  type PoolStats,
  type PsiIntersection,
  type PsiJoiner,
  type PsiResolved,
  type PsiStarter,
  type WorkerAffinity,
} from 'lockstep';
import { serve } from 'lockstep/worker';

const pool = new Pool({ worker: new URL('./w.js', import.meta.url), workers: 2, maxQueue: 0, memoryBudget: 1 << 20 });
const controller = new AbortController();
const n: Promise<number> = pool.run<number>('square', 3, { signal: controller.signal, timeout: 100, reserve: 64 });
const stats: PoolStats = pool.stats;
const reserved: number = stats.reservedBytes + pool.reservedBytes;

const psi = createPsiPool({ asset: 'simd', workers: 4 });
const nativePsi = createPsiPool({ asset: 'native' });
const engine: Promise<PsiEngineInfo> = psiInfo({ asset: 'auto' });
// @ts-expect-error: the engine loaded is one of three names
const wrongEngine: 'wasm' = (await psiInfo()).asset;
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
// @ts-expect-error: asset is one of four names
createPsiPool({ asset: 'avx2' });
// @ts-expect-error: owned is psiRequest's own business
psiRequest(psi, { key: new Uint8Array(32), values: [] }, { owned: true });

async function round(pool: ReturnType<typeof createPsiPool>) {
  const starter: PsiStarter = await createStarter(pool, { shards: 'auto', shardWait: 1_000 });
  const joiner: PsiJoiner = await createJoiner(pool, { key: new Uint8Array(32), signal: controller.signal, shards: 2 });
  const request: Uint8Array = await joiner.request('email\nada@x\n', { columns: 'email', normalize: true });
  const setup = await starter.setup(['ada@x'], { joinerCount: 1, format: 'gcs', fpr: 1e-6 });
  const response = await starter.respond(request, { joinerCount: 1, sizeOnly: false });
  const found: PsiIntersection = await joiner.intersect(setup, response, { maxSetupBytes: 1 << 20 });
  const resolved: PsiResolved = await starter.resolve(found.pairsFile ?? new Uint8Array(0));
  const affinity: WorkerAffinity = pool.affinity('mine');
  await pool.run('noop', 1, { affinity });
  // @ts-expect-error: a joiner does not respond
  joiner.respond(request, { joinerCount: 1 });
  // @ts-expect-error: setup needs the joiner count
  starter.setup(['a'], { format: 'raw' });
  // @ts-expect-error: formats are raw, gcs and bloom
  starter.setup(['a'], { joinerCount: 1, format: 'zip' });
  // @ts-expect-error: a party's steps choose their own affinity
  joiner.request(['a'], {}, { affinity });
  // @ts-expect-error: a step's shard count is `shards`, no longer `workers`
  await createStarter(pool, { workers: 2 });
  // @ts-expect-error: so too per step
  joiner.request(['a'], {}, { workers: 2 });
  // @ts-expect-error: shards are 'auto' or a number
  starter.setup(['a'], { joinerCount: 1 }, { shards: 'all' });
  return [found.size, resolved.joinerRows, found.rows, starter.lost] as const;
}

function psiErrors(error: unknown) {
  if (error instanceof PsiError && error.code === 'PSI_MESSAGE') return error.message;
  if (error instanceof WorkerLostError) return error.code;
  return undefined;
}

async function throughRelay(starter: PsiStarter, joiner: PsiJoiner) {
  const client = new RelayClient('https://relay.example:8443', 'r.t', { retryFor: 1_000 });
  const view = await client.view();
  const found: PsiIntersection = await relayRound(client, joiner, ['a'], { columns: 'email', normalize: true });
  const made: { setup: Uint8Array; response: Uint8Array } = await relayRound(client, starter, 'email\na\n', { pollMs: 100 });
  // @ts-expect-error: messages are setup, request and response
  await client.post('permutation', new Uint8Array(1));
  // @ts-expect-error: a joiner's round gives an intersection, not messages
  const wrong: { setup: Uint8Array } = await relayRound(client, joiner, ['a']);
  return [view.messages.request?.elements, found.size, made.setup, wrong] as const;
}

function relayErrors(error: unknown) {
  if (error instanceof RelayError && error.code === 'unauthorized') return error.status;
  return undefined;
}

export { n, reserved, bytes, handle, round, psiErrors, throughRelay, relayErrors };
