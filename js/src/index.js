// @ts-check
// lockstep: a supervised worker pool for Node and browsers, and lockstep's engines on it.
export { Pool, SILENCE_DEFAULTS, defaultReservation } from './pool.js';
export { PROTOCOL_VERSION } from './protocol.js';
export { availableParallelism, isNode, spawnWorker } from './platform.js';
export { PSI_WORKER_URL, WASM_ABI, createPsiPool, packValues, psiInfo, psiRequest } from './psi.js';
export { PsiJoiner, PsiStarter, createJoiner, createStarter, psiSample } from './party.js';
export * from './errors.js';
export { MAX_AUTO_WORKERS, shardChoice } from './shard/policy.js';
export { closePlanPools, createPlanPool, planInfo, runPlan } from './plan/run.js';
