// @ts-check
// The two parties of a PSI round on the supervised pool, each living in one worker of a PSI
// pool (createPsiPool): its key is made there (or imported there) and leaves only through
// exportKey(). Every step runs lockstep_psi::linkage in the wasm module (bindings/wasm,
// PsiParty), so every message and file is byte for byte what the CLI writes for the same key
// and rows:
//
//   starter.setup(rows, { joinerCount, format, fpr })   lockstep psi setup [--permutation-out]
//   starter.permutationFile()                           (the --permutation-out file)
//   starter.respond(request, { joinerCount, sizeOnly }) lockstep psi respond
//   starter.resolve(pairsFile)                          lockstep psi resolve
//   joiner.request(rows, { sizeOnly })                  lockstep psi request
//   joiner.intersect(setup, response)                   lockstep psi intersect --request --out --pairs-out
//
// A party is bound to its worker (a pool affinity): its steps wait for that worker, and once
// the worker is gone (a crash, a hang, a timeout, an abort of one of its steps, the pool's
// close) every later step rejects with WorkerLostError: the key went with the worker unless it
// was exported. A party is never silently re-created with a new key.
//
// The rules (record formats, key columns, normalization, limits, error codes) are the engine's;
// this file only moves bytes and turns the engine's errors into PsiErrors with its codes.

import { PsiError, TaskError } from '../pool/errors.js';
import { fieldOf } from '../pool/fields.js';
import { ownCopy, packValues } from './psi.js';
import { inputBytes } from '../pool/snapshot.js';
import { SHARD_WAIT_MS } from '../limits.js';
import { runShardedStep } from './shard/page.js';
import { shardChoice, shardsOf } from './shard/policy.js';

/** @typedef {import('../index.js').Pool} Pool */
/** @typedef {import('../index.js').WorkerAffinity} WorkerAffinity */
/** @typedef {import('../index.js').PsiRows} PsiRows */
/** @typedef {import('../index.js').PsiStepOptions} PsiStepOptions */

/**
 * A party's rows as the worker takes them: packed values (one per row), or a record file's
 * bytes read as the CLI reads `--input` (CSV with a header when `columns` are named, else one
 * value per line). Always fresh buffers, so they may be sent owned.
 *
 * @param {PsiRows} rows
 * @param {{ columns?: string | string[], normalize?: boolean }} keys
 */
function rowsInput(rows, { columns = [], normalize = false } = {}) {
  const named = typeof columns === 'string' ? [columns] : columns;
  if (!Array.isArray(named) || !named.every((c) => typeof c === 'string')) {
    throw new TypeError('columns must be a column name or an array of them');
  }
  if (Array.isArray(rows)) {
    const { bytes, ends } = packValues(rows);
    return { values: bytes, ends, packed: true, columns: named, normalize: Boolean(normalize) };
  }
  const file = typeof rows === 'string' ? new TextEncoder().encode(rows) : bytesOf(rows, 'rows');
  return { values: file, ends: new Uint32Array(0), packed: false, columns: named, normalize: Boolean(normalize) };
}

/**
 * An own copy of a message's bytes (what another party sent), to send owned.
 *
 * @param {unknown} bytes
 * @param {string} what
 */
function bytesOf(bytes, what) {
  if (!(bytes instanceof Uint8Array)) throw new TypeError(`${what} must be a Uint8Array`);
  return ownCopy(bytes);
}

/**
 * A whole count (joinerCount, maxSetupBytes), or undefined for the engine's default.
 *
 * @param {unknown} value
 * @param {string} name
 * @param {{ optional?: boolean }} [how]
 */
function countOf(value, name, { optional = false } = {}) {
  if (value === undefined && optional) return undefined;
  if (!(Number.isSafeInteger(value) && /** @type {number} */ (value) >= 0)) {
    throw new TypeError(`${name} must be a whole number >= 0, not ${String(value)}`);
  }
  return /** @type {number} */ (value);
}

/**
 * The engine's refusal as a PsiError with its code; anything else as it came.
 *
 * @param {unknown} error
 */
function engineError(error) {
  if (error instanceof TaskError) {
    const cause = error.cause;
    const code = fieldOf(cause, 'code');
    if (typeof code === 'string' && code.startsWith('PSI_')) {
      return new PsiError(String(fieldOf(cause, 'message')), code, { cause: error });
    }
  }
  return error;
}

/** @param {string} what @returns {(output: unknown) => void} */
const bytesOutput = (what) => (output) => {
  if (!(output instanceof Uint8Array)) throw new TypeError(`${what} must be a Uint8Array`);
};

/**
 * How a party shards its steps: `shards`, how many workers a step is split over ('auto' or a
 * whole number, shard/policy.js), and `shardWait`, the ms its worker waits for helpers to start
 * before it splits.
 *
 * @typedef {{ shards?: import('./shard/policy.js').Shards, shardWait?: number }} ShardOptions
 */

/**
 * Refuses the option's old name: `workers` said how many workers a step is split over before
 * it was `shards` (a pool's `workers` are its slots, runPlan's its native threads). Without this
 * a caller's `workers` would be dropped unseen, its steps run on 'auto'.
 *
 * @param {object} options
 * @param {string} where
 */
function refuseOldName(options, where) {
  if (Object.hasOwn(options, 'workers')) {
    throw new TypeError(`${where}: \`workers\` is now \`shards\` (how many workers a step is split over)`);
  }
}

/**
 * @param {ShardOptions} options
 * @param {{ shards: import('./shard/policy.js').Shards, wait: number }} [defaults]  the party's
 * @returns {{ shards: import('./shard/policy.js').Shards, wait: number }}
 */
function shardingOf({ shards, shardWait }, defaults = { shards: 'auto', wait: SHARD_WAIT_MS }) {
  const wait = shardWait === undefined ? defaults.wait : shardWait;
  if (!(Number.isFinite(wait) && wait >= 0)) throw new TypeError(`shardWait must be a number of ms >= 0, not ${String(wait)}`);
  return { shards: shards === undefined ? defaults.shards : shardsOf(shards), wait };
}

/**
 * How a step ran, from the coordinator's report and the choice it started from.
 *
 * @param {import('./shard/policy.js').ShardChoice} choice
 * @param {unknown} shards
 * @returns {import('../index.js').PsiSharding}
 */
function shardingReport(choice, shards) {
  const workers = Number(fieldOf(shards, 'workers'));
  /** @type {Array<{ index: number, why: string }>} */
  const left = /** @type {any} */ (fieldOf(shards, 'left')) ?? [];
  const ranOn = `ran on ${workers} worker${workers === 1 ? '' : 's'}`;
  const gone = left.length > 0 ? `; ${left.map((l) => `helper ${l.index} ${l.why}`).join('; ')}` : '';
  /** @type {import('../index.js').PsiWorkerMemory[]} */
  const memory = /** @type {any} */ (fieldOf(shards, 'memory')) ?? [];
  const items = Number(fieldOf(shards, 'items'));
  return { workers, items, asked: choice.asked, chosen: choice.workers, reason: `${choice.reason}: ${ranOn}${gone}`, left, memory: { page: pageMemory(), workers: memory } };
}

/**
 * The page's (or the Node main thread's) JS heap in use: Node's heapUsed, Chromium's
 * performance.memory.usedJSHeapSize (coarse unless the browser runs with precise memory info),
 * undefined elsewhere.
 */
function pageMemory() {
  if (typeof process === 'object' && typeof process?.memoryUsage === 'function') return process.memoryUsage().heapUsed;
  const heap = /** @type {any} */ (globalThis.performance)?.memory?.usedJSHeapSize;
  return typeof heap === 'number' ? heap : undefined;
}

/**
 * The least silence limit a step's party worker gets: a step reads its rows or messages before
 * it maps them and merges after, each one wasm call that cannot beat, taking up to 1.1 µs a
 * value here (`node bench/psi-phases.js`: 40-45 ns a byte of rows, up to 25 ns a byte of
 * messages; over 2 s at 2 million values, more than the pool's learnt limit). So 2 s plus 200 ns a byte of input, five times that and more.
 *
 * @param {object} input
 */
const silenceFloor = (input) => Math.ceil(2_000 + inputBytes(input) * 2e-4);

/** What both parties do: run their steps on their worker, export the key, go away. */
class Party {
  #pool;
  #affinity;
  #id;
  #sharding;
  /** @type {import('../index.js').PsiSharding | null} */
  #last = null;

  /**
   * @param {Pool} pool @param {WorkerAffinity} affinity @param {number} id
   * @param {{ shards: import('./shard/policy.js').Shards, wait: number }} sharding
   */
  constructor(pool, affinity, id, sharding) {
    this.#pool = pool;
    this.#affinity = affinity;
    this.#id = id;
    this.#sharding = sharding;
  }

  /**
   * How the last setup, request, respond or intersect ran: the workers it ran on, what was
   * asked and chosen, and why (null before the first).
   */
  get lastSharding() {
    return this.#last;
  }

  /**
   * Runs a step that maps items (setup, request, respond, intersect) on this party's worker
   * and the helpers the shard choice asks for (shard/): the same bytes at every worker count.
   *
   * @template T
   * @param {string} op
   * @param {() => object} input
   * @param {(PsiStepOptions & ShardOptions) | undefined} options
   * @param {(output: unknown) => void} validate
   * @returns {Promise<T>}
   */
  async shardedStep(op, input, options, validate) {
    refuseOldName(options ?? {}, op.slice('psi.party.'.length));
    const { shards: asked, shardWait, ...rest } = options ?? {};
    const { shards, wait } = shardingOf({ shards: asked, shardWait }, this.#sharding);
    const choice = shardChoice(shards, this.#pool.workers);
    const built = { party: this.#id, ...input() };
    try {
      const output = await runShardedStep(
        this.#pool,
        op,
        built,
        {
          silence: { atLeast: silenceFloor(built) },
          ...rest,
          affinity: this.#affinity,
          owned: true,
          validate: (out) => {
            if (!Number.isSafeInteger(fieldOf(fieldOf(out, 'shards'), 'workers'))) throw new TypeError(`${op} returns { result, shards }`);
            validate(fieldOf(out, 'result'));
          },
        },
        { helpers: choice.workers - 1, wait },
      );
      this.#last = shardingReport(choice, fieldOf(output, 'shards'));
      return /** @type {T} */ (fieldOf(output, 'result'));
    } catch (error) {
      throw engineError(error);
    }
  }

  /** Whether this party's worker is gone (every step now rejects with WorkerLostError). */
  get lost() {
    return this.#affinity.lost;
  }

  /**
   * Runs `op` for this party on its worker.
   *
   * @template T
   * @param {string} op
   * @param {() => object} input   built here, so a bad argument rejects instead of throwing
   * @param {PsiStepOptions | undefined} options
   * @param {(output: unknown) => void} validate
   * @returns {Promise<T>}
   */
  async step(op, input, options, validate) {
    const built = { party: this.#id, ...input() };
    try {
      return await this.#pool.run(op, built, { ...options, affinity: this.#affinity, owned: true, validate });
    } catch (error) {
      throw engineError(error);
    }
  }

  /**
   * The key's 32 big-endian bytes, as `lockstep psi key new` writes them: the only way it
   * leaves the worker. Keep it secret; `createStarter(pool, { key })` (or createJoiner) makes
   * a party that masks the same.
   *
   * @param {PsiStepOptions} [options]
   * @returns {Promise<Uint8Array>}
   */
  exportKey(options) {
    return this.step('psi.party.exportKey', () => ({}), options, (output) => {
      if (!(output instanceof Uint8Array && output.length === 32)) throw new TypeError('a key must be 32 bytes');
    });
  }

  /**
   * Ends the party: its worker drops it (and wipes the key). Later steps reject with a PsiError
   * (PSI_USAGE).
   *
   * @param {PsiStepOptions} [options]
   * @returns {Promise<void>}
   */
  async dispose(options) {
    if (this.lost) return;
    await this.step('psi.party.dispose', () => ({}), options, () => {});
  }
}

/** The starter: sets up its masked set, answers requests, resolves the joiner's pairs. */
export class PsiStarter extends Party {
  get role() {
    return 'starter';
  }

  /**
   * The setup message over `rows`' distinct keys (`lockstep psi setup`). The party keeps the
   * rows and, for a raw setup, the permutation resolve() needs.
   *
   * @param {PsiRows} rows
   * @param {import('../index.js').PsiSetupOptions} setup
   * @param {PsiStepOptions} [options]
   * @returns {Promise<Uint8Array>}
   */
  setup(rows, setup, options) {
    const { joinerCount, format = 'raw', fpr, columns, normalize } = setup ?? {};
    return this.shardedStep(
      'psi.party.setup',
      () => ({
        ...rowsInput(rows, { columns, normalize }),
        format: String(format),
        fpr: fpr === undefined ? undefined : Number(fpr),
        joinerCount: countOf(joinerCount, 'joinerCount'),
      }),
      options,
      bytesOutput('a setup'),
    );
  }

  /**
   * The last raw setup's permutation file (`--permutation-out`): with the exported key, what a
   * later session needs to resolve. It is the starter's alone.
   *
   * @param {PsiStepOptions} [options]
   * @returns {Promise<Uint8Array>}
   */
  permutationFile(options) {
    return this.step('psi.party.permutation', () => ({}), options, bytesOutput('a permutation file'));
  }

  /**
   * The response to a joiner's request (`lockstep psi respond`): `joinerCount` is the most
   * elements accepted (the count the joiner stated); `sizeOnly` the mode this starter answers.
   *
   * @param {Uint8Array} request
   * @param {{ joinerCount: number, sizeOnly?: boolean }} respond
   * @param {PsiStepOptions} [options]
   * @returns {Promise<Uint8Array>}
   */
  respond(request, respond, options) {
    const { joinerCount, sizeOnly = false } = respond ?? {};
    return this.shardedStep(
      'psi.party.respond',
      () => ({ request: bytesOf(request, 'request'), joinerCount: countOf(joinerCount, 'joinerCount'), sizeOnly: Boolean(sizeOnly) }),
      options,
      bytesOutput('a response'),
    );
  }

  /**
   * The joiner's pairs file resolved to this starter's rows (`lockstep psi resolve`), after a
   * raw setup: 0-based `joinerRows[i]` matched `starterRows[i]`; `file` is the CSV the CLI writes.
   *
   * @param {Uint8Array} pairs
   * @param {PsiStepOptions} [options]
   * @returns {Promise<import('../index.js').PsiResolved>}
   */
  resolve(pairs, options) {
    return this.step('psi.party.resolve', () => ({ pairs: bytesOf(pairs, 'pairs') }), options, (output) => {
      const o = /** @type {Record<string, unknown>} */ (output);
      if (!(o?.joinerRows instanceof Uint32Array && o.starterRows instanceof Uint32Array && o.file instanceof Uint8Array)) {
        throw new TypeError('resolve returns { joinerRows, starterRows, file }');
      }
    });
  }
}

/** The joiner: requests, and intersects the answer with the setup. */
export class PsiJoiner extends Party {
  get role() {
    return 'joiner';
  }

  /**
   * The request over `rows`' distinct keys (`lockstep psi request`); tell the starter how many
   * keys it holds (the request's element count) as its joinerCount. The party keeps the rows
   * and the request for intersect().
   *
   * @param {PsiRows} rows
   * @param {import('../index.js').PsiRequestOptions} [request]
   * @param {PsiStepOptions} [options]
   * @returns {Promise<Uint8Array>}
   */
  request(rows, request, options) {
    const { sizeOnly = false, columns, normalize } = request ?? {};
    return this.shardedStep(
      'psi.party.request',
      () => ({ ...rowsInput(rows, { columns, normalize }), sizeOnly: Boolean(sizeOnly) }),
      options,
      bytesOutput('a request'),
    );
  }

  /**
   * The intersection of the starter's `setup` and its `response` to this party's last request
   * (`lockstep psi intersect --request`): `{ size, rows, setupPositions, rowsFile, pairsFile }`
   * (0-based rows; positions and pairsFile after a raw setup; only `size` after a size-only
   * request). `maxSetupBytes` bounds the setup accepted (default: the engine's).
   *
   * @param {Uint8Array} setup
   * @param {Uint8Array} response
   * @param {{ maxSetupBytes?: number }} [intersect]
   * @param {PsiStepOptions} [options]
   * @returns {Promise<import('../index.js').PsiIntersection>}
   */
  async intersect(setup, response, intersect, options) {
    const { maxSetupBytes } = intersect ?? {};
    /** @type {import('../index.js').PsiIntersection} */
    const found = await this.shardedStep(
      'psi.party.intersect',
      () => ({
        setup: bytesOf(setup, 'setup'),
        response: bytesOf(response, 'response'),
        maxSetupBytes: countOf(maxSetupBytes, 'maxSetupBytes', { optional: true }),
      }),
      options,
      (output) => {
        const o = /** @type {Record<string, unknown>} */ (output);
        if (!(Number.isSafeInteger(o?.size) && o.rows instanceof Uint32Array)) {
          throw new TypeError('intersect returns { size, rows, ... }');
        }
      },
    );
    return { ...found, sharding: /** @type {import('../index.js').PsiSharding} */ (this.lastSharding) };
  }
}

// Parties are made in a worker of a PSI pool (createPsiPool): with a fresh random key made
// there, or with `key` (32 bytes, as exportKey() or `lockstep psi key new` give; copied once
// for the worker, which wipes its copy).

/**
 * A starter in one worker of `pool`.
 *
 * @param {Pool} pool
 * @param {{ key?: Uint8Array } & ShardOptions & PsiStepOptions} [options]
 * @returns {Promise<PsiStarter>}
 */
export async function createStarter(pool, options = {}) {
  refuseOldName(options, 'createStarter');
  const { shards, shardWait, ...rest } = options;
  const sharding = shardingOf({ shards, shardWait });
  const affinity = pool.affinity('the PSI starter');
  const id = await createIn(pool, 'starter', affinity, rest);
  return new PsiStarter(pool, affinity, id, sharding);
}

/**
 * A joiner in one worker of `pool`.
 *
 * @param {Pool} pool
 * @param {{ key?: Uint8Array } & ShardOptions & PsiStepOptions} [options]
 * @returns {Promise<PsiJoiner>}
 */
export async function createJoiner(pool, options = {}) {
  refuseOldName(options, 'createJoiner');
  const { shards, shardWait, ...rest } = options;
  const sharding = shardingOf({ shards, shardWait });
  const affinity = pool.affinity('the PSI joiner');
  const id = await createIn(pool, 'joiner', affinity, rest);
  return new PsiJoiner(pool, affinity, id, sharding);
}

/**
 * Creates the party in the worker `affinity` binds to; resolves with its id there.
 *
 * @param {Pool} pool
 * @param {'starter' | 'joiner'} role
 * @param {WorkerAffinity} affinity
 * @param {{ key?: Uint8Array } & PsiStepOptions} options
 * @returns {Promise<number>}
 */
async function createIn(pool, role, affinity, { key, ...options }) {
  const input = key === undefined ? { role } : { role, key: bytesOf(key, 'key') };
  try {
    /** @type {{ party: number }} */
    const created = await pool.run('psi.party.create', input, {
      ...options,
      affinity,
      owned: true,
      validate: (output) => {
        if (!Number.isSafeInteger(fieldOf(output, 'party'))) throw new TypeError('create returns { party }');
      },
    });
    return created.party;
  } catch (error) {
    throw engineError(error);
  }
}

/**
 * The built-in sample data of lockstep_psi::sample for a starter of `rows` people (at least 10,
 * at most 2,000,000: more is PsiError PSI_LIMIT;
 * the joiner gets four fifths as many, three fifths of them shared), made in a worker of `pool`:
 * the files `lockstep psi demo --rows N --dir D` writes, byte for byte.
 *
 * @param {Pool} pool
 * @param {{ rows?: number } & PsiStepOptions} [options]
 */
export async function psiSample(pool, { rows = 5_000, ...options } = {}) {
  return pool.run('psi.sample', { rows: countOf(rows, 'rows') }, {
    ...options,
    validate: (output) => {
      if (!(fieldOf(output, 'starter') instanceof Uint8Array && fieldOf(output, 'joiner') instanceof Uint8Array)) {
        throw new TypeError('psi.sample returns { starter, joiner, ... }');
      }
    },
  });
}
