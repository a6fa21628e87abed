// @ts-check
// lockstep: a supervised worker pool for Node and browsers, and lockstep's engines on it. This
// file only re-exports, by domain: pool/ (the pool and its worker side), psi/ (PSI parties and
// their sharded steps), plan/ (plans), relay/ (a party through `lockstep serve`), limits.js
// (caps and defaults); engines/ (the native addon and the wasm module) serve psi/ and plan/.
export { Pool, SILENCE_DEFAULTS, defaultReservation } from './pool/pool.js';
export { PROTOCOL_VERSION } from './pool/protocol.js';
export { availableParallelism, isNode, spawnWorker } from './pool/platform.js';
export { PSI_WORKER_URL, WASM_ABI, createPsiPool, packValues, psiInfo, psiRequest } from './psi/psi.js';
export { PsiJoiner, PsiStarter, createJoiner, createStarter, psiSample } from './psi/party.js';
export * from './pool/errors.js';
export { MAX_AUTO_WORKERS } from './limits.js';
export { shardChoice } from './psi/shard/policy.js';
export { closePlanPools, createPlanPool, planInfo, runPlan } from './plan/run.js';
export { RelayClient, RelayError, relayRound } from './relay/client.js';
