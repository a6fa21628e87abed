// The plan bench's floor for worker placement: an op that takes an array (the pool's snapshot of
// the caller's) and returns a new one of its length, written once, computing nothing: the
// round trip a worker run of any plan pays for moving n f32 in and n f32 out.
import { serve } from '../src/pool/worker.js';

serve({
  ops: {
    fresh: ({ x }) => {
      const y = new Float32Array(x.length);
      y.fill(1);
      return [y];
    },
  },
});
