// The native side of the plan comparison: for each of the eight dtypes, one plan holding every
// op over it (arithmetic, unary, sqrt for floats, fma, casts to every dtype, comparisons,
// select, a fused chain), read through offset and stride views and written through some, over
// an odd number of elements with the edge values of the dtype (NaN, infinities, -0, subnormals,
// integer extremes); and the bytes `lockstep plan run` (LOCKSTEP_BIN, or the workspace's debug
// build) writes for it. Written under test/artifacts/plan-cases-<length>/ (served to browsers
// by serve.js) with a manifest.json the checker (test/plan-check.js) reads.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { LOCKSTEP_BIN } from './psi-vector.js';

const DTYPES = ['i8', 'u8', 'i16', 'u16', 'i32', 'u32', 'f32', 'f64'];
const ARRAYS = {
  i8: Int8Array, u8: Uint8Array, i16: Int16Array, u16: Uint16Array,
  i32: Int32Array, u32: Uint32Array, f32: Float32Array, f64: Float64Array,
};
const EDGES = {
  i8: [-128, 127, -1, 0, 1], u8: [0, 255, 1, 128],
  i16: [-32768, 32767, -1, 0], u16: [0, 65535, 1, 32768],
  i32: [-2147483648, 2147483647, -1, 0, 7], u32: [0, 4294967295, 1, 2147483648],
  f32: [NaN, Infinity, -Infinity, -0, 0, 1e-45, 1.1754942e-38, 3.4028235e38, -1.5, 0.1],
  f64: [NaN, Infinity, -Infinity, -0, 0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, -1.5, 0.1],
};

/** A deterministic generator (xorshift32). */
function random(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
}

/** `length` values of `dtype`: edge values mixed with random ones; `nonzero` avoids 0. */
function values(dtype, length, seed, nonzero = false) {
  const next = random(seed);
  const out = new ARRAYS[dtype](length);
  const float = dtype.startsWith('f');
  for (let i = 0; i < length; i++) {
    const edges = EDGES[dtype];
    let v = next() < 0.2 ? edges[Math.floor(next() * edges.length)] : float ? (next() - 0.5) * 2 ** Math.floor(next() * 40 - 20) : Math.floor(next() * 2 ** 32);
    out[i] = v;
    if (nonzero && out[i] === 0) out[i] = 3;
  }
  return out;
}

/** The plan over `dtype`: every op, with the ids of its outputs. */
function planOf(dtype) {
  const float = dtype.startsWith('f');
  const nodes = [
    ...['add', 'sub', 'mul', 'div', 'min', 'max'].map((op) => ({ id: op, op, args: ['a', 'b'] })),
    { id: 'neg', op: 'neg', args: ['a'] },
    { id: 'abs', op: 'abs', args: ['c'] },
    ...(float ? [{ id: 'sqrt', op: 'sqrt', args: ['c'] }] : []),
    { id: 'fma', op: 'fma', args: ['a', 'b', 'c'] },
    ...DTYPES.map((to) => ({ id: `cast_${to}`, op: 'cast', args: ['a'], to })),
    ...['eq', 'ne', 'lt', 'le', 'gt', 'ge'].map((op) => ({ id: op, op, args: ['a', 'c'] })),
    { id: 'select', op: 'select', args: ['m', 'a', 'b'] },
    // A fused chain: one-dtype arithmetic, each step reading the one before.
    { id: 'f1', op: 'add', args: ['a', 'k'] },
    { id: 'f2', op: 'mul', args: ['f1', 'c'] },
    { id: 'f3', op: 'sub', args: ['f2', 'b'] },
    { id: 'f4', op: 'max', args: ['f3', 'a'] },
    { id: 'f5', op: float ? 'sqrt' : 'neg', args: ['f4'] },
    { id: 'chain', op: 'min', args: ['f5', 'b'] },
  ];
  const finals = nodes.filter((n) => !/^f[1-5]$/.test(n.id));
  return {
    version: 1,
    inputs: [
      { id: 'a', dtype, view: { offset: 3, stride: 2 } },
      { id: 'b', dtype },
      { id: 'c', dtype, view: { offset: 1 } },
      { id: 'm', dtype: 'u8' },
    ],
    constants: [{ id: 'k', dtype, value: float ? 0.75 : 3 }],
    nodes,
    outputs: finals.map((n, i) => ({
      id: `o_${n.id}`,
      from: n.id,
      ...(i % 3 === 1 ? { view: { offset: 2, stride: 3 } } : {}),
    })),
  };
}

/**
 * The cases at `length` elements, written with the CLI's outputs; returns the manifest
 * (`{ length, cases: [{ name, plan, inputs: [{ file, dtype }], outputs: [{ id, file, dtype, view }] }] }`)
 * and the folder.
 */
export function planCases(length) {
  if (!existsSync(LOCKSTEP_BIN)) {
    throw new Error(`${LOCKSTEP_BIN} is missing: build it (cargo build -p lockstep-cli) or set LOCKSTEP_BIN`);
  }
  const dir = fileURLToPath(new URL(`../artifacts/plan-cases-${length}/`, import.meta.url));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const cases = DTYPES.map((dtype, d) => {
    const plan = planOf(dtype);
    const lengths = { a: 3 + 2 * (length - 1) + 1, b: length, c: length + 1, m: length };
    const inputs = plan.inputs.map((input, i) => {
      const data = input.id === 'm'
        ? Uint8Array.from(values('u8', length, 91 + d), (v) => (v % 3 === 0 ? 0 : v))
        : values(input.dtype, lengths[input.id], 17 * (d + 1) + i, input.id === 'b');
      const file = `${dtype}-${input.id}.raw`;
      writeFileSync(join(dir, file), new Uint8Array(data.buffer));
      return { id: input.id, file, dtype: input.dtype };
    });
    const outputs = plan.outputs.map((output) => {
      const node = plan.nodes.find((n) => n.id === output.from);
      const outDtype = node.to ?? (['eq', 'ne', 'lt', 'le', 'gt', 'ge'].includes(node.op) ? 'u8' : dtype);
      return { id: output.id, file: `${dtype}-${output.id}.raw`, dtype: outDtype, view: output.view ?? { offset: 0, stride: 1 } };
    });
    writeFileSync(join(dir, `${dtype}.json`), JSON.stringify(plan));
    execFileSync(
      LOCKSTEP_BIN,
      [
        '--quiet', '--workers', '2', 'plan', 'run', `${dtype}.json`,
        ...inputs.flatMap((i) => ['--input', `${i.id}=${i.file}`]),
        ...outputs.flatMap((o) => ['--output', `${o.id}=${o.file}`]),
      ],
      { cwd: dir, stdio: 'pipe' },
    );
    return { name: dtype, plan, inputs, outputs };
  });
  const manifest = { length, cases };
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  return { manifest, dir };
}
