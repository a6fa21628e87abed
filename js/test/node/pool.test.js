// The pool's scenarios (test/scenarios.js) on Node's worker_threads.
import { test } from '../bounded.js';
import { scenarios } from '../scenarios.js';
import { psiRound } from './psi-round.js';
import { psiVector } from './psi-vector.js';

const env = { browser: false, psi: { ...psiVector(), round: psiRound() } };

for (const [name, scenario] of scenarios) {
  test(name, { timeout: 60_000 }, () => scenario(env));
}

// The PSI scenarios again on the native addon (the platform package scripts/build-node links
// into node_modules; 'native' refuses to start without it, so its absence fails here).
for (const [name, scenario, tags] of scenarios) {
  if (tags?.engines) test(`native addon: ${name}`, { timeout: 60_000 }, () => scenario({ ...env, psiAsset: 'native' }));
}
