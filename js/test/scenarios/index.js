// The scenarios, with real worker fixtures (test/fixtures/), run the same way in Node
// (test/node/pool.test.js), in headless Chromium (test/node/browser.test.js) and in headless
// Firefox (test/node/firefox.test.js). Each scenario closes its pool and checks that every
// reservation came back (harness.js). Pages are cross-origin isolated (test/node/serve.js), so
// every environment has SharedArrayBuffer: some scenarios hold a worker at a gate with it.
//
// By subject, as src/ is split: pool.js (the pool's rules and worker affinities), psi.js (PSI
// requests and parties), shard.js (sharded steps). This list keeps the order every runner has
// always run them in, which is why the subjects interleave.
//
// `env`: { browser, psi: { key, values, distinct, request, sizeOnly, normalized, round } } where
// request, sizeOnly and normalized are the bytes `lockstep psi request` (native) wrote for `key`
// and `values`, and `round` a whole round of the CLI's files; `psiAsset` (Node's second run of
// the scenarios tagged `{ engines: true }`) names the PSI engine.

import { affinityScenarios, poolScenarios } from './pool.js';
import { partyScenarios, requestScenarios } from './psi.js';
import { shardScenarios } from './shard.js';

/** Every scenario: [name, run(env), tags?]. */
export const scenarios = [...poolScenarios, ...requestScenarios, ...affinityScenarios, ...partyScenarios, ...shardScenarios];
