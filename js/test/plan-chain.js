// @ts-check
// The plan the plan benches and failure tests run: a chain of `nodes` f32 additions,
// x + 1 + 1 ... (every node fuses into one run; `nodes` additions an element).

/** @param {number} nodes */
export const chain = (nodes) => ({
  version: 1,
  inputs: [{ id: 'x', dtype: 'f32' }],
  constants: [{ id: 'one', dtype: 'f32', value: 1 }],
  nodes: Array.from({ length: nodes }, (_, i) => ({ id: `n${i}`, op: 'add', args: [i === 0 ? 'x' : `n${i - 1}`, 'one'] })),
  outputs: [{ id: 'y', from: `n${nodes - 1}` }],
});
