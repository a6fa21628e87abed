// The PSI exports of the two engines a PSI worker loads, called directly (no pool): the native
// addon (bindings/node/src/psi.rs) and the wasm module (bindings/wasm/src/js_party.rs) must be
// one face, the same results, shapes and codes for the same calls, and both refuse a step
// started from another step's progress callback (which would otherwise re-enter the engine
// mid-step).
//
// In test/engines/, not test/node/: these call the addon's PSI exports on Node's main thread,
// where an error the addon throws ends the process under --abort-on-uncaught-exception even
// inside try/catch (nodejs/node#28409), and npm test runs test/node/ under that flag. The
// package calls them only on its pool's workers, where the flag does not abort.
import { test } from '../bounded.js';
import assert from 'node:assert/strict';
import { loadAddon } from '../../src/engines/native.js';
import { loadWasm } from '../../src/engines/wasm.js';
import { packValues } from '../../src/psi/psi.js';

const engines = async () => {
  const { addon, reason } = await loadAddon();
  assert.ok(addon, `the addon loads here (scripts/build-node): ${reason}`);
  const { glue } = await loadWasm('scalar');
  return { native: addon, wasm: glue };
};

const KEY = Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 0x3c : i + 1));
/** A whole round on `engine` with fixed keys: every message and result. */
function round(engine) {
  const starter = engine.PsiParty.import('starter', Uint8Array.from(KEY));
  const joinerKey = Uint8Array.from(KEY);
  joinerKey[5] ^= 0x55;
  const joiner = engine.PsiParty.import('joiner', joinerKey);
  assert.ok(joinerKey.every((b) => b === 0), 'import wipes the key it was given');
  const mine = packValues(['ada@x', 'grace@x', 'alan@x', 'ada@x', '']);
  const theirs = packValues(['alan@x', 'bob@x', 'ada@x']);
  const items = starter.setupBegin(mine.bytes, mine.ends, { packed: true, format: 'raw', joinerCount: 10 });
  const setup = starter.setupFinish(starter.maskPart(items.values, items.ends, undefined), undefined);
  const asked = joiner.requestBegin(theirs.bytes, theirs.ends, { packed: true });
  const request = joiner.requestFinish(joiner.maskPart(asked.values, asked.ends, undefined));
  const elements = starter.respondBegin(request, 10, false);
  const response = starter.respondFinish(starter.remaskPart(elements, 0, undefined));
  const unmasked = joiner.unmaskPart(joiner.intersectBegin(setup, response, undefined), 0, undefined);
  const found = joiner.intersectFinish(unmasked);
  const resolved = starter.resolve(found.pairsFile);
  const out = { setup, request, response, found: { ...found }, resolved: { ...resolved }, permutation: starter.permutationFile() };
  starter.free();
  joiner.free();
  return out;
}

test('both engines give the same round, byte for byte, in the same shapes', async () => {
  const { native, wasm } = await engines();
  const a = round(native);
  const b = round(wasm);
  for (const name of ['setup', 'request', 'response', 'permutation']) assert.deepEqual(a[name], b[name], name);
  assert.deepEqual(Object.keys(a.found).sort(), ['pairsFile', 'rows', 'rowsFile', 'setupPositions', 'size']);
  assert.equal(a.found.size, 2);
  for (const name of ['size', 'rows', 'setupPositions', 'rowsFile', 'pairsFile']) assert.deepEqual(a.found[name], b.found[name], name);
  assert.deepEqual(a.resolved, b.resolved);
  assert.deepEqual(native.psiRanges(10, 3), wasm.psiRanges(10, 3));
  assert.ok(native.psiRanges(10, 3) instanceof Uint32Array);
});

test('both engines refuse the same bad calls with the same codes and words', async () => {
  const { native, wasm } = await engines();
  const outcome = (fn) => {
    try {
      fn();
      return 'no error';
    } catch (error) {
      return `${error.code}: ${error.message}`;
    }
  };
  const calls = [
    ['an unknown role', (e) => e.PsiParty.generate('nobody')],
    ['a short key', (e) => e.PsiParty.import('joiner', new Uint8Array(31))],
    ['a zero key', (e) => e.PsiHelper.fromKey('starter', new Uint8Array(32))],
    ['a step of the other role', (e) => e.PsiParty.generate('joiner').respondBegin(new Uint8Array(0), 1, false)],
    ['intersect before a request', (e) => e.PsiParty.generate('joiner').intersectBegin(new Uint8Array(0), new Uint8Array(0), undefined)],
    ['a bad format', (e) => e.PsiParty.generate('starter').setupBegin(new Uint8Array(1), new Uint32Array([1]), { packed: true, format: 'xml', joinerCount: 1.5 })],
    ['an option of another kind', (e) => e.PsiParty.generate('starter').setupBegin(new Uint8Array(1), new Uint32Array([1]), { packed: 1, format: 'raw', joinerCount: 1 })],
    ['an array option holding another kind', (e) => e.PsiParty.generate('joiner').requestBegin(new Uint8Array(1), new Uint32Array([1]), { columns: ['a', 2] })],
    ['a request with bad packing', (e) => e.psiRequest(Uint8Array.from(KEY), new Uint8Array(3), new Uint32Array([2, 1]), true, false, undefined)],
    ['a request with a zero key', (e) => e.psiRequest(new Uint8Array(32), new Uint8Array(1), new Uint32Array([1]), true, false, undefined)],
  ];
  for (const [label, call] of calls) {
    const got = outcome(() => call(native));
    assert.notEqual(got, 'no error', label);
    assert.equal(got, outcome(() => call(wasm)), label);
  }
});

test('a step started from another step\'s progress callback is refused, on both engines', async () => {
  const { native, wasm } = await engines();
  for (const [name, engine] of Object.entries({ native, wasm })) {
    const outer = engine.PsiParty.import('joiner', Uint8Array.from(KEY));
    const other = engine.PsiParty.import('joiner', Uint8Array.from(KEY));
    const many = packValues(Array.from({ length: 3000 }, (_, i) => `person-${i}@example.org`));
    let inner;
    const thrown = (() => {
      try {
        outer.maskPart(many.bytes, many.ends, () => {
          try {
            other.maskPart(many.bytes, many.ends, undefined);
          } catch (error) {
            inner = error;
          }
        });
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    assert.equal(thrown, undefined, `${name}: the outer step is not disturbed`);
    assert.equal(inner?.code, 'PSI_USAGE', `${name}: the inner step is refused`);
    assert.match(inner.message, /cannot start from another step's progress callback/);
    // A throw from the callback ends the step with that very exception.
    const mine = new RangeError('stop');
    assert.throws(() => outer.maskPart(many.bytes, many.ends, () => { throw mine; }), (e) => e === mine, name);
    // And the engine takes steps again afterwards.
    assert.equal(outer.maskPart(many.bytes, many.ends, undefined).length, 3000 * 33);
    outer.free();
    other.free();
  }
});
