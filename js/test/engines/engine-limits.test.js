// The engines' exports called directly as a careless or hostile caller would (issue 28, items 2,
// 7 and 9): every size argument at its stated limit and past it, JS memory resized or freed
// from a progress callback, a run or a free from inside a step. The native addon
// (bindings/node) and the wasm module (bindings/wasm) must refuse with the same codes, and the
// process must stay up (an abort or a segfault ends this file's process, failing it).
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

// The limits the engine states (crates/psi/src/party.rs MAX_PARTS, crates/psi/src/sample.rs
// MAX_PEOPLE).
const MAX_PARTS = 4096;
const MAX_PEOPLE = 2_000_000;
const U32_MAX = 2 ** 32 - 1;

const KEY = Uint8Array.from({ length: 32 }, (_, i) => (i === 0 ? 0x3c : i + 1));

/** The error `call` throws (it must throw). */
function thrownBy(call) {
  try {
    call();
  } catch (error) {
    return error;
  }
  assert.fail('expected a throw');
}

test('psiRanges and psiSample take every size up to their limits and refuse past them, alike on both engines', async () => {
  const { native, wasm } = await engines();
  for (const [name, engine] of Object.entries({ native, wasm })) {
    // At the limits: the most items, the most parts.
    const most = engine.psiRanges(U32_MAX, MAX_PARTS);
    assert.equal(most.length, 2 * MAX_PARTS, name);
    assert.equal(most[0], 0, name);
    assert.equal(most[most.length - 1], U32_MAX, name);
    assert.deepEqual([...engine.psiRanges(5, 0)], [0, 5], `${name}: 0 parts count as 1`);
    // Past them, and numbers that are not counts.
    for (const [items, count, code] of [
      [U32_MAX + 1, 1, 'PSI_LIMIT'],
      [10, MAX_PARTS + 1, 'PSI_LIMIT'],
      [10, U32_MAX, 'PSI_LIMIT'],
      [10, 2 ** 53, 'PSI_LIMIT'],
      [-1, 2, 'PSI_USAGE'],
      [10, 1.5, 'PSI_USAGE'],
      [NaN, 2, 'PSI_USAGE'],
      [10, Infinity, 'PSI_USAGE'],
    ]) {
      const error = thrownBy(() => engine.psiRanges(items, count));
      assert.equal(error.code, code, `${name}: psiRanges(${items}, ${count}): ${error.message}`);
    }
    // psiSample: past the most people (the size that used to abort Node: 489,600,000,000 bytes).
    for (const [rows, code] of [
      [MAX_PEOPLE + 1, 'PSI_LIMIT'],
      [2 ** 32 + 10, 'PSI_LIMIT'],
      [1e15, 'PSI_LIMIT'],
      [-5, 'PSI_USAGE'],
      [2.5, 'PSI_USAGE'],
      [NaN, 'PSI_USAGE'],
    ]) {
      const error = thrownBy(() => engine.psiSample(rows));
      assert.equal(error.code, code, `${name}: psiSample(${rows}): ${error.message}`);
      if (code === 'PSI_LIMIT') assert.match(error.message, /at most 2000000 people/, name);
    }
  }
  // At the limit, on the addon (the wasm module makes the same bytes, more slowly: the smaller
  // samples of the other tests compare them).
  const sample = native.psiSample(MAX_PEOPLE);
  assert.equal(sample.starterRows > MAX_PEOPLE, true, 'duplicate rows are added');
  assert.equal(sample.starter.length > 100e6, true);
  const small = [native.psiSample(1000), wasm.psiSample(1000)];
  assert.deepEqual(Buffer.from(small[0].starter), Buffer.from(small[1].starter));
  assert.deepEqual(Buffer.from(small[0].joiner), Buffer.from(small[1].joiner));
});

/** A fresh typed array of `bytes` in a resizable buffer (it can be shrunk under a call). */
function resizable(bytes, Kind = Uint8Array) {
  const buffer = new ArrayBuffer(bytes.byteLength, { maxByteLength: bytes.byteLength });
  const view = new Kind(buffer);
  view.set(bytes);
  return view;
}

test('JS memory shrunk or freed from a progress callback does not reach the engine, on both engines', async () => {
  const { native, wasm } = await engines();
  const many = packValues(Array.from({ length: 3000 }, (_, i) => `person-${i}@example.org`));
  for (const [name, engine] of Object.entries({ native, wasm })) {
    const party = engine.PsiParty.import('joiner', Uint8Array.from(KEY));
    const expected = party.maskPart(many.bytes, many.ends, undefined);
    // maskPart: both arrays shrunk to nothing (and the buffers' old pages returned) inside the
    // first callback; the step goes on over what it was given.
    const values = resizable(many.bytes);
    const ends = resizable(many.ends, Uint32Array);
    let calls = 0;
    const masked = party.maskPart(values, ends, () => {
      calls += 1;
      values.buffer.resize(0);
      ends.buffer.resize(0);
    });
    assert.ok(calls > 0, `${name}: the callback ran`);
    assert.deepEqual(Buffer.from(masked), Buffer.from(expected), `${name}: maskPart`);
    // remaskPart and unmaskPart over elements, shrunk the same way.
    const starter = engine.PsiParty.import('starter', Uint8Array.from(KEY));
    for (const [step, by] of [['remaskPart', starter], ['unmaskPart', party]]) {
      const wanted = by[step](expected, 0, undefined);
      const elements = resizable(expected);
      const got = by[step](elements, 0, () => elements.buffer.resize(1));
      assert.deepEqual(Buffer.from(got), Buffer.from(wanted), `${name}: ${step}`);
    }
    starter.free();
    // A helper's parts too.
    const helper = engine.PsiHelper.fromKey('joiner', Uint8Array.from(KEY));
    const shrunk = resizable(many.bytes);
    const part = helper.maskPart(shrunk, many.ends, () => shrunk.buffer.resize(0));
    assert.deepEqual(Buffer.from(part), Buffer.from(expected), `${name}: a helper's maskPart`);
    // psiRequest, with its own key.
    const request = () => engine.psiRequest(Uint8Array.from(KEY), many.bytes, many.ends, false, false, undefined);
    const wantedRequest = request();
    const requestValues = resizable(many.bytes);
    const gotRequest = engine.psiRequest(Uint8Array.from(KEY), requestValues, many.ends, false, false, () => requestValues.buffer.resize(0));
    assert.deepEqual(Buffer.from(gotRequest), Buffer.from(wantedRequest), `${name}: psiRequest`);

    // Freeing the party or the helper from inside its own step is refused (by each binding's
    // borrow check: napi-rs's and wasm-bindgen's); the step finishes.
    let refused;
    const done = party.maskPart(many.bytes, many.ends, () => {
      try {
        party.free();
      } catch (error) {
        refused ??= error;
      }
    });
    assert.ok(refused, `${name}: free() from the step's callback throws`);
    assert.deepEqual(Buffer.from(done), Buffer.from(expected), `${name}: the step is undisturbed`);
    let helperRefused;
    helper.maskPart(many.bytes, many.ends, () => {
      try {
        helper.free();
      } catch (error) {
        helperRefused ??= error;
      }
    });
    assert.ok(helperRefused, `${name}: a helper's free() from its step's callback throws`);
    if (name === 'native') {
      // napi-rs refused before anything changed: both are usable, then freed, afterwards.
      assert.equal(party.maskPart(many.bytes, many.ends, undefined).length, 3000 * 33, name);
      party.free();
      helper.free();
    } else {
      // wasm-bindgen's glue let go of its handle before the engine refused: later calls are
      // refused (the object, and its zeroized-on-drop key, stay in the instance until its
      // worker ends). Nothing traps.
      assert.throws(() => party.maskPart(many.bytes, many.ends, undefined), /null pointer passed to rust/);
    }
  }
});

test('a wasm plan run started from another run\'s progress callback is refused, and the module runs on', async () => {
  const { wasm } = await engines();
  const json = JSON.stringify({
    version: 1,
    inputs: [{ id: 'x', dtype: 'f32' }],
    nodes: [{ id: 'y', op: 'add', args: ['x', 'x'] }],
    outputs: [{ id: 'y', from: 'y' }],
  });
  const outer = wasm.PlanProgram.fromJson(json);
  const inner = wasm.PlanProgram.fromJson(json);
  const x = new Float32Array(1 << 20).map((_, i) => i);
  let nested;
  let calls = 0;
  outer.setInput(0, x);
  outer.run(() => {
    calls += 1;
    if (nested) return;
    try {
      inner.setInput(0, x);
      inner.run(undefined);
      nested = 'ran';
    } catch (error) {
      nested = error;
    }
  });
  assert.ok(calls > 1, 'the outer run reports progress more than once');
  assert.equal(nested?.code, 'PLAN_BINDING', String(nested));
  assert.match(nested.message, /cannot start from another run's progress callback/);
  const y = outer.takeOutput(0);
  assert.equal(y[12345], 2 * 12345, 'the outer run finished');
  // Both programs run again afterwards (nothing left borrowed or poisoned).
  inner.setInput(0, x);
  inner.run(() => {});
  assert.equal(inner.takeOutput(0)[7], 14);
  outer.setInput(0, x);
  outer.run(undefined);
  assert.equal(outer.takeOutput(0)[9], 18);
  outer.free();
  inner.free();
});

test('a plan\'s view numbers are read and bound alike by the addon and the wasm module', async () => {
  const { runPlan } = await import('../../src/index.js');
  const planWith = (view) => ({
    version: 1,
    inputs: [{ id: 'x', dtype: 'f32', view }],
    nodes: [{ id: 'y', op: 'neg', args: ['x'] }],
    outputs: [{ id: 'o', from: 'y' }],
  });
  const x = new Float32Array([1, 2, 3]);
  const outcome = async (backend, view) => {
    try {
      const [o] = await runPlan(planWith(view), [x], { backend, placement: 'sync' });
      return { elements: [...o] };
    } catch (error) {
      return { code: error.code, message: error.message };
    }
  };
  for (const view of [
    { offset: 2 ** 60 }, // the case: the addon ran it with 0 elements, wasm refused it
    { offset: 2 ** 53 },
    { offset: 2 ** 53 - 1 },
    { offset: 2 ** 40 },
    { stride: 2 ** 40, length: 1 },
    { stride: 2 ** 40, length: 2 },
    { length: 2 ** 40 },
  ]) {
    const [native, wasm] = [await outcome('native', view), await outcome('wasm', view)];
    assert.deepEqual(wasm, native, JSON.stringify(view));
  }
  assert.equal((await outcome('native', { offset: 2 ** 60 })).code, 'PLAN_INVALID');
  assert.deepEqual(await outcome('wasm', { offset: 2 ** 40 }), { elements: [] });
  await (await import('../../src/index.js')).closePlanPools?.();
});
