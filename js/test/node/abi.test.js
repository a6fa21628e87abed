// The one ABI number (src/engines/abi.js, which crates/face/src/lib.rs's ABI_VERSION names) decides for
// both engines: the addon and the wasm builds report it, and a copy of the package whose abi.js
// names another number refuses the real addon and the real wasm module by that number, on every
// path that loads one (PSI's 'auto' and 'native', a PSI worker, a plan on the calling thread and
// on a worker), naming both numbers; 'auto' falls back past the addon, saying why.
import { test } from '../bounded.js';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ABI_VERSION } from '../../src/engines/abi.js';
import { loadAddon, platformPackage } from '../../src/engines/native.js';
import { loadWasm } from '../../src/engines/wasm.js';

const js = fileURLToPath(new URL('../../', import.meta.url));

test('the face, the addon and both wasm builds name the number src/engines/abi.js names', async () => {
  const face = readFileSync(join(js, '../crates/face/src/lib.rs'), 'utf8');
  assert.match(face, new RegExp(`pub const ABI_VERSION: u32 = ${ABI_VERSION};`));
  const { addon, reason } = await loadAddon();
  assert.ok(addon, reason);
  assert.equal(addon.abiVersion(), ABI_VERSION);
  for (const flavour of /** @type {const} */ (['scalar', 'simd'])) {
    const { glue } = await loadWasm(flavour);
    assert.equal(glue.abiVersion(), ABI_VERSION, flavour);
  }
});

test('a package expecting another number refuses the addon and the wasm module by it', () => {
  const other = ABI_VERSION + 1;
  const dir = mkdtempSync(join(tmpdir(), 'lockstep-abi-'));
  try {
    cpSync(join(js, 'src'), join(dir, 'src'), { recursive: true });
    const abi = readFileSync(join(dir, 'src/engines/abi.js'), 'utf8');
    const changed = abi.replace(/ABI_VERSION = \d+;/, `ABI_VERSION = ${other};`);
    assert.notEqual(changed, abi, 'abi.js holds the number once');
    writeFileSync(join(dir, 'src/engines/abi.js'), changed);
    symlinkSync(join(js, 'wasm'), join(dir, 'wasm'));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }));
    mkdirSync(join(dir, 'node_modules'));
    const name = /** @type {string} */ (platformPackage());
    symlinkSync(realpathSync(join(js, 'node_modules', name)), join(dir, 'node_modules', name));
    writeFileSync(
      join(dir, 'probe.js'),
      `import { createPsiPool, psiInfo, psiRequest, planInfo, runPlan } from './src/index.js';
       const out = {};
       const said = async (name, run) => {
         try { out[name] = { value: await run() }; } catch (error) { out[name] = { error: String(error.message) }; }
       };
       const plan = { version: 1, inputs: [{ id: 'x', dtype: 'f32' }], nodes: [{ id: 'y', op: 'sqrt', args: ['x'] }], outputs: [{ id: 'out', from: 'y' }] };
       await said('psiAuto', () => psiInfo({ asset: 'auto' }));
       await said('psiNative', () => psiInfo({ asset: 'native' }));
       const pool = createPsiPool({ asset: 'scalar', workers: 1, startupTimeout: 20000 });
       await said('psiWorker', () => psiRequest(pool, { key: new Uint8Array(32).fill(1), values: ['a'] }));
       await pool.close({ force: true });
       await said('planAuto', () => planInfo({ backend: 'auto' }));
       await said('planNative', () => runPlan(plan, [new Float32Array(4)], { backend: 'native', placement: 'sync' }));
       await said('planSync', () => runPlan(plan, [new Float32Array(4)], { backend: 'wasm', placement: 'sync' }));
       await said('planWorker', () => runPlan(plan, [new Float32Array(4)], { backend: 'wasm', placement: 'worker' }));
       const { closePlanPools } = await import('./src/index.js');
       await closePlanPools();
       console.log(JSON.stringify(out));`,
    );
    const out = JSON.parse(execFileSync(process.execPath, ['probe.js'], { cwd: dir, encoding: 'utf8', timeout: 120_000 }));
    const addonSays = `${name} has ABI version ${ABI_VERSION}; this package needs ABI version ${other}`;
    const wasmSays = new RegExp(`lockstep_wasm_bg\\.wasm has ABI version ${ABI_VERSION}; this package needs ABI version ${other}`);
    assert.equal(out.psiAuto.value.reason, addonSays);
    assert.match(out.psiAuto.value.asset, /^wasm-/);
    assert.equal(out.psiNative.error, `asset 'native': ${addonSays}`);
    assert.match(out.psiWorker.error, wasmSays);
    // 'auto' passes the addon by, then finds the wasm module of the same number.
    assert.match(out.planAuto.error, wasmSays);
    assert.equal(out.planNative.error, `backend 'native': ${addonSays}`);
    assert.match(out.planSync.error, wasmSays);
    assert.match(out.planWorker.error, wasmSays);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
