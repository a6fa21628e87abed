// Types of the `lockstep` package. The behaviour each promises is documented in README.md and in
// the source files named below.

/** The version of the pool/worker messages (pool/protocol.js); a worker of another is refused. */
export declare const PROTOCOL_VERSION: number;

/** Whether this is Node (pool/platform.js). */
export declare const isNode: boolean;

/**
 * Node's os.availableParallelism() or navigator.hardwareConcurrency, at least 1: the hardware's
 * count, which the default worker count below falls back to.
 */
export declare function availableParallelism(): number;

/** A started worker as the pool drives it (pool/platform.js); what a custom `spawn` returns. */
export interface WorkerHandle {
  post(message: unknown, transfer?: Transferable[]): void;
  listen(listeners: {
    message(data: unknown): void;
    error(error: unknown): void;
    exit(code: number): void;
  }): void;
  /** Resolves once the worker is gone (Node: its exit; browsers: at once). */
  terminate(): Promise<unknown>;
  ref(): void;
  unref(): void;
}

/** Starts a worker for the module at `url` (Node worker_threads or a module Web Worker). */
export declare function spawnWorker(url: URL | string, options?: { name?: string }): WorkerHandle;

/**
 * How a task's silence limit is derived: see Pool.silenceLimit. A beat's work is the rise of
 * `done` since its task's last such beat (or its start); a whole beat is one that did not end
 * its task's work (done < total).
 */
export interface SilenceOptions {
  /** The limit (ms) before a whole beat of the op has been measured. Default 30000. */
  initial?: number;
  /**
   * The limit is `factor` x the op's rate (the longest time per unit of work of its recent
   * whole beats) x its step (the most work one of them did). Default 10.
   */
  factor?: number;
  /** The least limit (ms) a measurement can give. Default 2000. */
  min?: number;
  /** How many recent whole beats per op are kept. Default 32. */
  window?: number;
}

export declare const SILENCE_DEFAULTS: Readonly<Required<SilenceOptions>>;

/** The default reservation of a task whose input holds `bytes`: 4 x bytes + 4096. */
export declare function defaultReservation(bytes: number): number;

/**
 * The default worker count, one rule for every pool (new Pool, createPsiPool, createPlanPool;
 * limits.js) and for runPlan's native threads (the engine's policy), as the CLI's: in Node, the LOCKSTEP_WORKERS
 * environment variable when it is set (a whole number 1..256; any other value makes the call that
 * needs the default throw a RangeError naming the variable and the value), else
 * availableParallelism(); in a browser, navigator.hardwareConcurrency. Read when the caller gives
 * no count; a count given wins. At most 256.
 */
export interface PoolOptions {
  /** The worker module: it calls `serve` from 'lockstep/worker'. */
  worker: URL | string;
  /** How many workers at most. Default: the default worker count (LOCKSTEP_WORKERS in Node, else availableParallelism()). */
  workers?: number;
  /** The ABI version the worker's module must report; unchecked when absent. */
  abi?: number;
  /** Sent to every worker's `load` in its init message (structured-cloneable). */
  config?: unknown;
  /** A name for the workers (seen in errors and debuggers). Default 'lockstep'. */
  name?: string;
  /** ms a worker has to finish its handshake. Default 30000. */
  startupTimeout?: number;
  /** ms a task may run (from when it starts running). Default Infinity. */
  taskTimeout?: number;
  /** Tasks that may wait for a worker; 0: run now or be refused. Default Infinity. */
  maxQueue?: number;
  /** Bytes all tasks' reservations may add up to. Default Infinity. */
  memoryBudget?: number;
  silence?: SilenceOptions;
  /** Starts a worker (tests, custom hosts). Default: spawnWorker. */
  spawn?: (url: URL | string, options: { name: string }) => WorkerHandle;
}

export interface Progress {
  done: number;
  total: number;
}

export interface RunOptions<T = unknown> {
  /** Aborting removes a queued task, or terminates and replaces the worker of a running one. */
  signal?: AbortSignal;
  /** Called for each progress report of the task. A throw fails the task. */
  onProgress?: (progress: Progress) => void;
  /** ms the task may run, from when it starts. Default: the pool's taskTimeout. */
  timeout?: number;
  /** Bytes reserved against the budget. Default: defaultReservation(input bytes). */
  reserve?: number;
  /** The input is the caller's to hand over: its buffers are transferred (detached), not copied. */
  owned?: boolean;
  /** Checks the output; a throw makes it a ProtocolError and replaces the worker. */
  validate?: (output: unknown) => void;
  /**
   * This task's silence limit in ms, or false for none, or `{ atLeast }`: the derived limit but
   * never below `atLeast` ms (a task with a phase it cannot beat in, known to grow with its
   * input). Default: derived (SilenceOptions).
   */
  silence?: number | false | { atLeast: number };
  /**
   * Run on the worker this affinity is bound to (the first task with it binds it to the worker
   * that takes it); once that worker is gone, reject with WorkerLostError. From Pool.affinity.
   */
  affinity?: WorkerAffinity;
}

/** Tasks that must run on one worker (Pool.affinity). */
export interface WorkerAffinity {
  /** What it stands for, in WorkerLostError's message. */
  readonly label: string;
  /** Whether its worker is gone (every task with it now rejects with WorkerLostError). */
  readonly lost: boolean;
}

export interface PoolStats {
  workers: number;
  starting: number;
  idle: number;
  busy: number;
  terminating: number;
  queued: number;
  reservedBytes: number;
  memoryBudget: number;
  closed: boolean;
  broken: boolean;
}

/** The supervised pool (pool/pool.js). */
export declare class Pool {
  constructor(options: PoolOptions);
  readonly workers: number;
  readonly reservedBytes: number;
  readonly stats: PoolStats;
  /** Runs `op` in a worker; rejects with one of this package's errors, never throws. */
  run<T = unknown>(op: string, input?: unknown, options?: RunOptions<T>): Promise<T>;
  /** A new worker affinity: see RunOptions.affinity. */
  affinity(label?: string): WorkerAffinity;
  /** The silence limit (ms) a task of `op` gets now. */
  silenceLimit(op: string, override?: number | false | { atLeast: number }): number;
  /** Settles every task (queued and running finish; with force, they reject), then ends the workers. */
  close(options?: { force?: boolean }): Promise<void>;
  destroy(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** The wasm module's ABI version this package speaks. */
export declare const WASM_ABI: number;
export declare const PSI_WORKER_URL: URL;

/** The engine a PSI pool's workers load. */
export type PsiAsset = 'auto' | 'native' | 'simd' | 'scalar';

export interface PsiPoolOptions extends Omit<PoolOptions, 'worker' | 'abi' | 'config'> {
  /**
   * 'auto' (the native addon where its platform package loads, else the wasm build faster for
   * PSI: scalar today, see js/README.md), 'native' (a startup error without the addon), 'simd'
   * or 'scalar'. Default 'auto'. Every engine gives the same bytes.
   */
  asset?: PsiAsset;
  /** The folder holding scalar/ and simd/. Default: the package's wasm/. */
  assetBase?: URL | string;
}

/** A pool whose workers run lockstep's PSI engine: the native addon or the wasm module. */
export declare function createPsiPool(options?: PsiPoolOptions): Pool;

/** Which engine a PSI pool's workers load, and why 'auto' fell back to wasm. */
export interface PsiEngineInfo {
  asset: 'native' | 'wasm-scalar' | 'wasm-simd';
  asked: PsiAsset;
  /** Why 'auto' fell back to wasm (the platform package missing or refused), else undefined. */
  reason: string | undefined;
  /** The platform package tried (Node only). */
  nativePackage: string | undefined;
}

/** Which engine `createPsiPool({ asset })` loads in this realm; rejects for 'native' without the addon. */
export declare function psiInfo(options?: { asset?: PsiAsset }): Promise<PsiEngineInfo>;

/** Values packed as the wasm module takes them. */
export declare function packValues(values: Array<string | Uint8Array>): { bytes: Uint8Array; ends: Uint32Array };

/**
 * A joiner's psi_proto.Request bytes over its rows' values, grouped into distinct keys (empty
 * values left out; normalized with `normalize: true`): identical to `lockstep psi request
 * --input FILE [--normalize]` for a FILE of these values, one per line.
 */
export declare function psiRequest(
  pool: Pool,
  request: { key: Uint8Array; values: Array<string | Uint8Array>; reveal?: boolean; normalize?: boolean },
  options?: Omit<RunOptions<Uint8Array>, 'owned' | 'validate'>,
): Promise<Uint8Array>;

/**
 * A party's rows: an array of values (one per row, strings as UTF-8 or bytes), or a record
 * file's text or bytes, read as `lockstep psi ... --input FILE` reads it: CSV with a header
 * when `columns` are named, else one value per line (a byte-order mark, CR/LF line ends and
 * quoting handled as the CLI does).
 */
export type PsiRows = Array<string | Uint8Array> | string | Uint8Array;

/** Which fields form a row's key, as the CLI's `--column` and `--normalize`. */
export interface PsiKeyOptions {
  /** The key column(s) of a CSV file; several make an unambiguous composite key. */
  columns?: string | string[];
  /** Trim, lowercase and collapse whitespace in key fields (both parties must agree). */
  normalize?: boolean;
}

export interface PsiSetupOptions extends PsiKeyOptions {
  /** How many distinct keys the joiner will ask about (its request's element count). */
  joinerCount: number;
  /** 'raw' (exact; the only one resolve works after), 'gcs' (smallest) or 'bloom'. Default 'raw'. */
  format?: 'raw' | 'gcs' | 'bloom';
  /** The false-positive rate of the joiner's whole query (GCS, Bloom), in (0, 1). Default 1e-9. */
  fpr?: number;
}

export interface PsiRequestOptions extends PsiKeyOptions {
  /** Ask for the intersection's size only. */
  sizeOnly?: boolean;
}

/** A step's run options: progress counts distinct keys (or elements); aborting a running step ends its worker, and so the party. */
export type PsiStepOptions = Omit<RunOptions, 'owned' | 'validate' | 'affinity' | 'reserve'>;

/**
 * How a party shards its setup, request, respond and intersect over the pool: the same bytes at
 * every count.
 */
export interface ShardOptions {
  /**
   * How many workers a step is split over: 'auto' (the default: the hardware concurrency capped
   * at MAX_AUTO_WORKERS, 1 in a browser on macOS, at most the pool's workers) or a whole number
   * >= 1 (at most the pool's). Anything else is a TypeError. Named `workers` before this release.
   */
  shards?: number | 'auto';
  /**
   * Renamed `shards`: given, it is a TypeError ("`workers` is now `shards` (how many workers a
   * step is split over)"). A pool's `workers` (its slots) and runPlan's (its native threads) keep
   * their name.
   */
  workers?: never;
  /**
   * The ms the party's worker waits for its helpers to start before it splits (default 5,000); a
   * helper not started by then is left out, and the step says so.
   */
  shardWait?: number;
}

/** How a step ran. */
export interface PsiSharding {
  /** The workers it ran on: the party's and its helpers' (the shards it was split into). */
  workers: number;
  /** Its items: the distinct keys a setup or request masked (a request's count is the joinerCount to tell the starter), the elements a response or intersection mapped. */
  items: number;
  /** The `shards` asked for. */
  asked: number | 'auto';
  /** The workers the choice gave, before helpers that did not start were left out. */
  chosen: number;
  /** Why, in words: the choice's reason, the count it ran on, each helper left out. */
  reason: string;
  /** The helpers left out before the split (1-based), and why. */
  left: Array<{ index: number; why: string }>;
  /**
   * Bytes held after the step: the page's JS heap (where the host tells it), and each worker
   * that ran a part, the party's first (its wasm instance's linear memory, which never shrinks,
   * so the instance's peak; its JS heap where the host tells it).
   */
  memory: { page?: number; workers: PsiWorkerMemory[] };
}

/** What one worker held after a step. */
export interface PsiWorkerMemory {
  /** Its wasm instance's linear memory: the instance's peak. */
  wasmBytes: number;
  /** Its JS heap in use (Node: the isolate's; Chromium's performance.memory where a worker has it). */
  heapBytes?: number;
  /** Node: the isolate's external memory (ArrayBuffers, the wasm memory among them). */
  externalBytes?: number;
}

/** The built-in sample data (the files `lockstep psi demo --rows N --dir D` writes), made in a worker of `pool`. */
export declare function psiSample(pool: Pool, options?: { rows?: number } & PsiStepOptions): Promise<{
  starter: Uint8Array;
  joiner: Uint8Array;
  starterRows: number;
  joinerRows: number;
  keyColumn: string;
  columns: string[];
}>;

/** The most workers an automatic count takes: a step's shards with 'auto', a plan pool's workers from the hardware. */
export declare const MAX_AUTO_WORKERS: 4;
/**
 * The shard choice for `asked` (a step's `shards`) on a pool of `poolWorkers` in this environment
 * (or `host`): the workers it is split over, what was asked, and why. A TypeError for an `asked`
 * that is neither 'auto' nor a whole number >= 1.
 */
export declare function shardChoice(
  asked: number | 'auto' | undefined,
  poolWorkers: number,
  host?: { concurrency: number; browser: boolean; userAgent?: string; platform?: string; uaPlatform?: string },
): { workers: number; asked: number | 'auto'; reason: string };

export interface PsiResolved {
  /** 0-based joiner rows, each matched with starterRows at the same index; sorted. */
  joinerRows: Uint32Array;
  starterRows: Uint32Array;
  /** The CSV `lockstep psi resolve --out` writes (joiner_row, starter_row, the starter's columns). */
  file: Uint8Array;
}

export interface PsiIntersection {
  /** Distinct keys found in the setup. */
  size: number;
  /** The matched rows, 0-based, ascending (empty for a size-only request). */
  rows: Uint32Array;
  /** The setup position each matched row's key had (raw setups only). */
  setupPositions?: Uint32Array;
  /** The CSV `lockstep psi intersect --out` writes (absent for a size-only request). */
  rowsFile?: Uint8Array;
  /** After a raw setup, the pairs file for the starter's resolve (`--pairs-out`). */
  pairsFile?: Uint8Array;
  /** How the intersection ran. */
  sharding: PsiSharding;
}

/** What both parties share (psi/party.js). */
declare class PsiParty {
  /** Whether the party's worker is gone: every step now rejects with WorkerLostError. */
  readonly lost: boolean;
  /** The key's 32 big-endian bytes: the only way it leaves the worker. */
  exportKey(options?: PsiStepOptions): Promise<Uint8Array>;
  /** Drops the party in its worker (its key is wiped there). */
  dispose(options?: PsiStepOptions): Promise<void>;
  /** How the last setup, request, respond or intersect ran (null before the first). */
  readonly lastSharding: PsiSharding | null;
}

/** A PSI starter living in one worker of a PSI pool. */
export declare class PsiStarter extends PsiParty {
  readonly role: 'starter';
  /** The setup message (`lockstep psi setup`). */
  setup(rows: PsiRows, setup: PsiSetupOptions, options?: PsiStepOptions & ShardOptions): Promise<Uint8Array>;
  /** The last raw setup's permutation file (`--permutation-out`). */
  permutationFile(options?: PsiStepOptions): Promise<Uint8Array>;
  /** The response to a request (`lockstep psi respond`). */
  respond(request: Uint8Array, respond: { joinerCount: number; sizeOnly?: boolean }, options?: PsiStepOptions & ShardOptions): Promise<Uint8Array>;
  /** The joiner's pairs file resolved to this starter's rows (`lockstep psi resolve`). */
  resolve(pairs: Uint8Array, options?: PsiStepOptions): Promise<PsiResolved>;
}

/** A PSI joiner living in one worker of a PSI pool. */
export declare class PsiJoiner extends PsiParty {
  readonly role: 'joiner';
  /** The request (`lockstep psi request`). */
  request(rows: PsiRows, request?: PsiRequestOptions, options?: PsiStepOptions & ShardOptions): Promise<Uint8Array>;
  /** The intersection of the setup and the response to the last request (`lockstep psi intersect`). */
  intersect(setup: Uint8Array, response: Uint8Array, intersect?: { maxSetupBytes?: number }, options?: PsiStepOptions & ShardOptions): Promise<PsiIntersection>;
}

/** A starter in a worker of `pool` (createPsiPool), with a fresh key made there or `key`; `shards` and `shardWait` are its steps' defaults. */
export declare function createStarter(pool: Pool, options?: { key?: Uint8Array } & ShardOptions & PsiStepOptions): Promise<PsiStarter>;
/** A joiner in a worker of `pool` (createPsiPool), with a fresh key made there or `key`; `shards` and `shardWait` are its steps' defaults. */
export declare function createJoiner(pool: Pool, options?: { key?: Uint8Array } & ShardOptions & PsiStepOptions): Promise<PsiJoiner>;

export declare class LockstepError extends Error {
  readonly code: string;
}
export declare class StartupError extends LockstepError {
  readonly code: 'ERR_WORKER_STARTUP';
  readonly reason: 'timeout' | 'version' | 'asset' | 'crash';
  readonly expected?: number;
  readonly actual?: number;
  readonly path?: string;
  readonly exitCode?: number;
}
export declare class WorkerCrashError extends LockstepError {
  readonly code: 'ERR_WORKER_CRASHED';
  readonly exitCode?: number;
}
export declare class WorkerHangError extends LockstepError {
  readonly code: 'ERR_WORKER_SILENT';
  readonly limit: number;
}
export declare class TaskTimeoutError extends LockstepError {
  readonly code: 'ERR_TASK_TIMEOUT';
  readonly timeout: number;
}
export declare class TaskError extends LockstepError {
  readonly code: 'ERR_TASK_FAILED';
}
export declare class ProtocolError extends LockstepError {
  readonly code: 'ERR_PROTOCOL';
}
export declare class QueueFullError extends LockstepError {
  readonly code: 'ERR_QUEUE_FULL';
}
export declare class BudgetError extends LockstepError {
  readonly code: 'ERR_BUDGET';
  readonly requested: number;
  readonly available: number;
  readonly budget: number;
}
export declare class InputError extends LockstepError {
  readonly code: 'ERR_INPUT';
}
export declare class AbortError extends LockstepError {
  readonly code: 'ABORT_ERR';
}
export declare class PsiError extends LockstepError {
  readonly code:
    | 'PSI_KEY' | 'PSI_PARAMS' | 'PSI_LIMIT' | 'PSI_MEMORY' | 'PSI_INPUT' | 'PSI_MESSAGE' | 'PSI_ROUND'
    | 'PSI_WRONG_ROLE' | 'PSI_ORDER' | 'PSI_USAGE' | 'PSI_CANCELLED' | 'PSI_INTERNAL';
}
export declare class WorkerLostError extends LockstepError {
  readonly code: 'ERR_WORKER_LOST';
}
export declare class PoolClosedError extends LockstepError {
  readonly code: 'ERR_POOL_CLOSED';
}
export declare class PlanError extends LockstepError {
  readonly code:
    | 'PLAN_INVALID' | 'PLAN_BINDING' | 'PLAN_DETACHED' | 'PLAN_BUDGET' | 'PLAN_DIVISION_BY_ZERO'
    | 'PLAN_CANCELLED' | 'PLAN_RUNTIME' | 'PLAN_ISA' | 'PLAN_BACKEND';
}

/** The typed arrays a plan reads and writes (Node Buffers and subviews too). */
export type PlanArray =
  | Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array;

/** Where a plan runs: lockstep's native addon (its platform package), its wasm module, or the first that loads. */
export type PlanBackend = 'native' | 'wasm' | 'auto';

export interface RunPlanOptions {
  /** Default 'auto': the native addon where its platform package is installed, else wasm (planInfo says which and why). */
  backend?: PlanBackend;
  /**
   * 'sync': on the calling thread (blocking it for the compile and the run); 'worker': on a
   * supervised worker, where the plan is also read, validated and compiled (a first small task,
   * then the run: the calling thread never parses the plan). Default 'worker'.
   */
  placement?: 'sync' | 'worker';
  /** Aborting ends the run: queued, it is removed; running, its worker is stopped and replaced. */
  signal?: AbortSignal;
  /** Progress in elements (worker placement, and wasm runs on the calling thread). A throw fails the run. */
  onProgress?: (progress: Progress) => void;
  /**
   * Arrays to write the outputs into (in the plan's order, or by id), each long enough for its
   * view; elements a view skips keep their values. Default: new arrays, as long as each view needs.
   * Written only when the whole run succeeded.
   */
  outputs?: PlanArray[] | Record<string, PlanArray>;
  /** The most bytes the run may hold: inputs, outputs and working memory (the engine's figures). */
  budget?: number;
  /**
   * Native worker threads for the run, at most 256 (0 or absent: the engine's policy, the CLI's
   * rule: LOCKSTEP_WORKERS where it is set, else the cores, lowered for a run smaller than the
   * plan's grain; a bad LOCKSTEP_WORKERS is refused, PLAN_BINDING). wasm runs on one.
   */
  workers?: number;
  /** The pool for worker placement (createPlanPool). Default: one shared pool per backend. */
  pool?: Pool;
  /** ms the run may take on its worker (the run task; the task that reads the plan there before it is not bounded by it). */
  timeout?: number;
  /** The wasm build: 'simd' or 'scalar'. Default: simd where the engine runs it. */
  wasm?: 'simd' | 'scalar';
  /**
   * Worker placement: hand the inputs' buffers over to the worker (transferred: the caller's
   * input arrays, and every view of their buffers, are detached afterwards) instead of copying
   * them at submission. Refused for inputs backed by a SharedArrayBuffer. Default false.
   */
  transfer?: boolean;
  /** The folder holding the wasm builds' scalar/ and simd/. Default: the package's wasm/. */
  assetBase?: URL | string;
}

/**
 * Runs a plan of format v1 (JSON text or an object) over `inputs` (in the plan's order, or by
 * id): the outputs, byte for byte what `lockstep plan run` writes for the same plan and arrays,
 * on every backend and placement. Refusals (PlanError: an invalid plan, an array of the wrong
 * dtype or length, a detached buffer, a budget too small) come before any work and leave the
 * caller's outputs untouched; with placement 'worker' the engine's come from the worker that read
 * the plan, with the same codes and messages.
 */
export declare function runPlan(
  plan: string | object,
  inputs: PlanArray[] | Record<string, PlanArray>,
  options?: RunPlanOptions,
): Promise<PlanArray[]>;

export interface PlanPoolOptions extends Omit<PoolOptions, 'worker' | 'abi' | 'config'> {
  backend?: PlanBackend;
  wasm?: 'simd' | 'scalar';
  assetBase?: URL | string;
}

/**
 * A supervised pool whose workers run plans (runPlan's `pool`). Default workers: LOCKSTEP_WORKERS
 * in Node when set, else min(availableParallelism(), MAX_AUTO_WORKERS) (each worker's native runs
 * start threads of their own).
 */
export declare function createPlanPool(options?: PlanPoolOptions): Pool;

/** Closes the shared pools runPlan made. */
export declare function closePlanPools(): Promise<void>;

export interface PlanBackendInfo {
  /** What loaded. */
  backend: 'native' | 'wasm-simd' | 'wasm-scalar';
  asked: PlanBackend;
  /** Why 'auto' fell back to wasm (the platform package missing, or its binary refused). */
  reason: string | undefined;
  /** The platform package tried (Node only). */
  nativePackage: string | undefined;
}

/** Which backend `backend` loads here, and why. */
export declare function planInfo(options?: { backend?: PlanBackend; wasm?: 'simd' | 'scalar'; assetBase?: URL | string }): Promise<PlanBackendInfo>;

/** The relay refused, or could not be reached (relay/client.js): `code` is the relay's refusal code, or `unreachable`, `digest`, `role`, `timeout`. */
export declare class RelayError extends LockstepError {
  /** The HTTP status of a refusal. */
  readonly status?: number;
}

/** A round as one party sees it on the relay (crates/server/src/wire.rs's RoundView). */
export interface RelayRoundView {
  round: string;
  role: 'starter' | 'joiner';
  format: 'raw' | 'gcs' | 'bloom';
  size_only: boolean;
  max_rows: number;
  max_bytes: number;
  expires_at: number;
  messages: { [kind in 'setup' | 'request' | 'response']?: { digest: string; len: number; elements: number | null } };
}

/** A party's connection to its round on a relay (`lockstep serve`); the invitation is `ROUND.TOKEN`, sent only in the Authorization header. */
export declare class RelayClient {
  constructor(server: string, invitation: string, options?: { retryFor?: number; answerWithin?: number; fetch?: typeof fetch });
  readonly server: string;
  readonly round: string;
  view(options?: { signal?: AbortSignal }): Promise<RelayRoundView>;
  post(kind: 'setup' | 'request' | 'response', bytes: Uint8Array, options?: { signal?: AbortSignal }): Promise<{ digest: string; len: number; elements: number | null }>;
  read(kind: 'setup' | 'request' | 'response', posted: { digest: string }, options?: { signal?: AbortSignal }): Promise<Uint8Array>;
  close(options?: { signal?: AbortSignal }): Promise<void>;
}

/** Runs a party's whole side of the client's round (`lockstep psi round`'s order): the joiner's intersection, or the starter's messages. */
export declare function relayRound(
  client: RelayClient,
  party: PsiJoiner,
  rows: PsiRows,
  options?: RelayRoundOptions,
): Promise<PsiIntersection>;
export declare function relayRound(
  client: RelayClient,
  party: PsiStarter,
  rows: PsiRows,
  options?: RelayRoundOptions,
): Promise<{ setup: Uint8Array; response: Uint8Array }>;

/** relayRound's options: the rows' key columns, a GCS/Bloom rate, polling and waiting bounds, progress. */
export interface RelayRoundOptions {
  columns?: string | string[];
  normalize?: boolean;
  fpr?: number;
  /** Joiner: leave the round on the relay (default: close it, removing its messages). */
  keep?: boolean;
  pollMs?: number;
  waitMs?: number;
  signal?: AbortSignal;
  onStep?: (step: { step: 'make' | 'post' | 'wait' | 'read' | 'done'; kind?: string; bytes?: number }) => void;
}
