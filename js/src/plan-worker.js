// @ts-check
// The plan worker: one backend per worker (the native addon, or an instance of the wasm module),
// serving runPlan's 'plan.run' op (plan/run.js, plan/worker-ops.js). Loaded by createPlanPool;
// not imported directly.

import { serve } from './worker.js';
import { loadPlanWorker, runPlanOp } from './plan/worker-ops.js';

serve({ load: loadPlanWorker, ops: { 'plan.run': runPlanOp } });
