// The bench's worker for lockstep's pool: one op that returns its input.
import { serve } from '../src/pool/worker.js';

serve({ ops: { noop: (input) => input } });
