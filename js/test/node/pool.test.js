// The scenarios (test/scenarios/) on Node's worker_threads.
import { test } from '../bounded.js';
import { scenarios } from '../scenarios/index.js';
import { psiRound } from './psi-round.js';
import { psiVector } from './psi-vector.js';

const env = { browser: false, psi: { ...psiVector(), round: psiRound() } };
// A scenario's figures (`env.figure(name, ms)`: how soon a helper's worker was free) go to the
// test's diagnostics, so each run's log has them (js/README.md quotes them).
const figured = (t) => ({ figure: (/** @type {string} */ name, /** @type {number} */ ms) => t.diagnostic(`${name}: ${Math.round(ms)} ms`) });

for (const [name, scenario] of scenarios) {
  test(name, { timeout: 60_000 }, (t) => scenario({ ...env, ...figured(t) }));
}

// The PSI scenarios again on the native addon (the platform package scripts/build-node links
// into node_modules; 'native' refuses to start without it, so its absence fails here).
for (const [name, scenario, tags] of scenarios) {
  if (tags?.engines) test(`native addon: ${name}`, { timeout: 60_000 }, (t) => scenario({ ...env, ...figured(t), psiAsset: 'native' }));
}
