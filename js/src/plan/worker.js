// @ts-check
// The plan worker: one backend per worker (the native addon, or an instance of the wasm module),
// serving runPlan's 'plan.describe' and 'plan.run' ops (run.js, worker-ops.js).
// Loaded by createPlanPool; not imported directly.

import { serve } from '../pool/worker.js';
import { PLAN_OPS, loadPlanWorker } from './worker-ops.js';

serve({ load: loadPlanWorker, ops: PLAN_OPS });
