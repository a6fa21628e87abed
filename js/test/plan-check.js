// The plan comparison, in Node and in browsers alike: each case of a manifest (test/node/plan-
// cases.js) run through runPlan on each backend and placement asked, with its inputs as
// subviews of larger buffers, into new outputs and into the caller's outputs (subviews filled
// with a sentinel byte), against the bytes `lockstep plan run` wrote. Throws on the first
// difference, naming the case, the combination, the output and the element.

const ARRAYS = {
  i8: Int8Array, u8: Uint8Array, i16: Int16Array, u16: Uint16Array,
  i32: Int32Array, u32: Uint32Array, f32: Float32Array, f64: Float64Array,
};
const SENTINEL = 0xa5;

/** `bytes` as a `dtype` array that is a subview (2 elements in) of a larger buffer. */
function subview(dtype, bytes, fill = 0) {
  const Cls = ARRAYS[dtype];
  const size = Cls.BYTES_PER_ELEMENT;
  const length = bytes.length / size;
  const buffer = new ArrayBuffer((length + 3) * size);
  new Uint8Array(buffer).fill(fill);
  const view = new Cls(buffer, 2 * size, length);
  new Uint8Array(buffer, 2 * size, bytes.length).set(bytes);
  return view;
}

const bytesOf = (array) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);

function compare(got, expected, where, size) {
  if (got.length !== expected.length) throw new Error(`${where}: ${got.length} bytes, the CLI wrote ${expected.length}`);
  for (let i = 0; i < got.length; i++) {
    if (got[i] !== expected[i]) {
      throw new Error(`${where}: element ${Math.floor(i / size)} differs from the CLI's (byte ${got[i]} != ${expected[i]})`);
    }
  }
}

/**
 * Checks every case of `manifest` on every combination: `read(file)` gives a file's bytes,
 * `combos` are runPlan options ({ backend, wasm, placement }) with a `label`. Resolves with the
 * number of runs compared.
 */
export async function checkPlanCases(manifest, { read, runPlan, combos }) {
  let runs = 0;
  for (const c of manifest.cases) {
    const inputBytes = await Promise.all(c.inputs.map((i) => read(i.file)));
    const expected = await Promise.all(c.outputs.map((o) => read(o.file)));
    for (const combo of combos) {
      const { label, ...options } = combo;
      const inputs = c.inputs.map((input, i) => subview(input.dtype, inputBytes[i]));
      const fresh = await runPlan(c.plan, inputs, options);
      c.outputs.forEach((o, i) => compare(bytesOf(fresh[i]), expected[i], `${c.name} ${label} ${o.id}`, ARRAYS[o.dtype].BYTES_PER_ELEMENT));
      // Into the caller's arrays: what the views cover is the CLI's, the rest keeps the sentinel.
      const outputs = c.outputs.map((o, i) => subview(o.dtype, new Uint8Array(expected[i].length).fill(SENTINEL), SENTINEL));
      const returned = await runPlan(c.plan, inputs, { ...options, outputs });
      if (returned.some((array, i) => array !== outputs[i])) throw new Error(`${c.name} ${label}: runPlan did not return the caller's outputs`);
      c.outputs.forEach((o, i) => {
        const size = ARRAYS[o.dtype].BYTES_PER_ELEMENT;
        const want = new Uint8Array(expected[i].length).fill(SENTINEL);
        for (let k = 0; k < manifest.length; k++) {
          const at = (o.view.offset + k * o.view.stride) * size;
          want.set(expected[i].subarray(at, at + size), at);
        }
        compare(bytesOf(outputs[i]), want, `${c.name} ${label} ${o.id} (into the caller's array)`, size);
        const whole = new Uint8Array(outputs[i].buffer);
        if (whole.subarray(0, 2 * size).some((b) => b !== SENTINEL) || whole.subarray(whole.length - size).some((b) => b !== SENTINEL)) {
          throw new Error(`${c.name} ${label} ${o.id}: a run wrote outside the caller's subview`);
        }
      });
      // The inputs are the caller's: untouched.
      c.inputs.forEach((input, i) => compare(bytesOf(inputs[i]), inputBytes[i], `${c.name} ${label} input ${input.id}`, 1));
      runs += 2;
    }
  }
  return runs;
}
