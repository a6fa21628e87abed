// The phases of each PSI step that cannot beat (figures, not a test): begin (rows or messages
// read and checked) and finish (the merge: setup sorted, messages encoded, matches written),
// each one call into the wasm module (scalar build), timed on this thread over `--values`
// values a party; the maps between them are not timed. These bound how long a step's party
// worker stays silent, and so the silence floor src/psi/party.js gives it.
//
//   node bench/psi-phases.js [--values 200000]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({ options: { values: { type: 'string', default: '200000' } } });
const n = Number(args.values);
const glue = await import(new URL('../wasm/scalar/lockstep_wasm.js', import.meta.url).href);
glue.initSync({ module: readFileSync(new URL('../wasm/scalar/lockstep_wasm_bg.wasm', import.meta.url)) });

const encoder = new TextEncoder();
function pack(values) {
  const parts = values.map((v) => encoder.encode(v));
  const ends = new Uint32Array(parts.length);
  const bytes = new Uint8Array(parts.reduce((total, p, i) => (ends[i] = total + p.length), 0));
  parts.forEach((p, i) => bytes.set(p, i === 0 ? 0 : ends[i - 1]));
  return { bytes, ends };
}

const starter = glue.PsiParty.generate('starter');
const joiner = glue.PsiParty.generate('joiner');
const starterValues = pack(Array.from({ length: n }, (_, i) => `person-${i}@example.org`));
const joinerValues = pack(Array.from({ length: n }, (_, i) => `person-${i + n / 2}@example.org`));
const none = () => {};
const rows = [];
const timed = (phase, call) => {
  const start = performance.now();
  const out = call();
  const ms = performance.now() - start;
  rows.push(`| ${phase} | ${ms.toFixed(0)} | ${((ms * 1e6) / n).toFixed(0)} |`);
  return out;
};

let items = timed('setupBegin', () => starter.setupBegin(starterValues.bytes, starterValues.ends, true, [], false, 'raw', undefined, n));
let mapped = starter.maskPart(items.values, items.ends, none);
const setup = timed('setupFinish', () => starter.setupFinish(mapped));
items = timed('requestBegin', () => joiner.requestBegin(joinerValues.bytes, joinerValues.ends, true, [], false, false));
mapped = joiner.maskPart(items.values, items.ends, none);
const request = timed('requestFinish', () => joiner.requestFinish(mapped));
let elements = timed('respondBegin', () => starter.respondBegin(request, n, false));
mapped = starter.remaskPart(elements, 0, none);
const response = timed('respondFinish', () => starter.respondFinish(mapped));
elements = timed('intersectBegin', () => joiner.intersectBegin(setup, response, undefined));
mapped = joiner.unmaskPart(elements, 0, none);
const found = timed('intersectFinish', () => joiner.intersectFinish(mapped));
if (found.size !== n / 2) throw new Error(`the round found ${found.size}, not ${n / 2}`);

console.log(`node ${process.version}; ${n} values a party; one call each\n`);
console.log('| phase | ms | ns a value |\n|---|---|---|');
for (const row of rows) console.log(row);
