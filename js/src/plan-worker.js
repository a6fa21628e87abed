// @ts-check
// The plan worker: one backend per worker (the native addon, or an instance of the wasm module),
// serving runPlan's 'plan.describe' and 'plan.run' ops (plan/run.js, plan/worker-ops.js).
// Loaded by createPlanPool; not imported directly.

import { serve } from './worker.js';
import { PLAN_OPS, loadPlanWorker } from './plan/worker-ops.js';

serve({ load: loadPlanWorker, ops: PLAN_OPS });
