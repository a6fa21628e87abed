// A whole round through a relay (`lockstep serve`) with the package's client: both parties in
// workers of one pool, each through its own RelayClient, give the CLI's bytes. Run in Node and
// in headless Chromium and Firefox by test/node/relay.test.js, against a relay it started.
//
// `env`: { relay: { url, starter, joiner } } (a fresh raw round's invitations) and
// { psi: { round } } (the CLI's round, test/node/psi-round.js).

import { RelayClient, RelayError, createJoiner, createPsiPool, createStarter, relayRound } from '../../src/index.js';
import { equal, ok, rejects, sameBytes } from '../assert.js';
import { closed, fromB64, KEYED, psiPool } from './harness.js';

/** @param {any} env */
export async function relayScenario(env) {
  const r = env.psi.round;
  const { url, starter: starterInvitation, joiner: joinerInvitation } = env.relay;
  const p = createPsiPool(psiPool(env));
  const starter = await createStarter(p, { key: fromB64(r.starterKey) });
  const joiner = await createJoiner(p, { key: fromB64(r.joinerKey) });
  const starterClient = new RelayClient(url, starterInvitation);
  const joinerClient = new RelayClient(url, joinerInvitation);
  // An invitation is its own party's only.
  await rejects(relayRound(starterClient, joiner, r.joiner, KEYED), RelayError, /this invitation is the starter's/);
  // The joiner first; the starter waits for its request, then both go on: no file, no human.
  const steps = [];
  const [found, made] = await Promise.all([
    relayRound(joinerClient, joiner, r.joiner, { ...KEYED, pollMs: 50, onStep: (s) => steps.push(['joiner', s.step, s.kind]) }),
    relayRound(starterClient, starter, r.starter, { ...KEYED, pollMs: 50, onStep: (s) => steps.push(['starter', s.step, s.kind]) }),
  ]);
  sameBytes(made.setup, fromB64(r.formats.raw.setup), 'the setup through the relay');
  sameBytes(made.response, fromB64(r.response), 'the response through the relay');
  equal(found.size, r.formats.raw.size, "the intersection's size");
  sameBytes(found.rowsFile, fromB64(r.formats.raw.rows), 'the matched rows');
  ok(steps.some(([who, step, kind]) => who === 'joiner' && step === 'read' && kind === 'response'), 'the joiner read the response');
  // The joiner closed the round: its invitations open nothing now.
  await rejects(joinerClient.view(), RelayError, /no round with this id holds this token/);
  const refused = await joinerClient.view().catch((e) => e);
  equal(refused.code, 'unauthorized', 'the refusal code');
  await closed(p);
}
