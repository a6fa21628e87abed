// What every subject's scenarios share: the check that a pool closed clean, and the PSI pools and
// inputs of the scenarios that run a party (psi.js, shard.js) on the CLI's round.

import { equal } from '../assert.js';

// Closes the pool and checks that it settled everything and holds no bytes.
export async function closed(p, force = false) {
  await p.close({ force });
  const s = p.stats;
  equal(s.reservedBytes, 0, 'bytes reserved after close');
  equal(s.starting + s.idle + s.busy + s.terminating, 0, 'workers left after close');
  equal(s.queued, 0, 'tasks queued after close');
}

// Base64 (how the CLI's round reaches a page) to bytes.
export const fromB64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

const PSI_POOL = { workers: 2, asset: 'scalar', startupTimeout: 20_000 };

/**
 * The PSI pool options of a scenario tagged `{ engines: true }`: PSI_POOL on the engine the run
 * asks for (`env.psiAsset`: Node runs those scenarios on the wasm scalar build and again on the
 * native addon).
 *
 * @param {{ psiAsset?: string }} env
 */
export const psiPool = (env) => ({ ...PSI_POOL, asset: env.psiAsset ?? PSI_POOL.asset });
export const KEYED = { columns: 'email', normalize: true };
