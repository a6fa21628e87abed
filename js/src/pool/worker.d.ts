// Types of 'lockstep/worker': the worker side of the pool's protocol (worker.js).

export interface Loaded {
  /** The asset this worker loaded (reported in the handshake), e.g. 'wasm-simd'. */
  asset: string;
  /** The ABI version of what it loaded. */
  abi: number;
  /** Handed to every op. */
  context?: unknown;
}

export interface OpContext {
  /**
   * Reports progress; also the beat the pool's hang detection listens to. `done` is the work
   * so far: the pool learns the time per unit of it, so beats may do different amounts of work.
   */
  progress(done: number, total: number): void;
  context: unknown;
}

export declare function serve(options: {
  load?: (config: unknown) => Promise<Loaded> | Loaded;
  ops: Record<string, (input: any, context: OpContext) => unknown>;
}): void;

/** What `load` throws for an asset it cannot find (reported with its path). */
export declare class AssetError extends Error {
  constructor(path: string, message: string, options?: { cause?: unknown });
  readonly code: 'ERR_ASSET_MISSING';
  readonly path: string;
}
