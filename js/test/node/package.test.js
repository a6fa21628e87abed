// The packages as users get them (scripts/pack-npm: the main package, whose manifest lists the
// platform package lockstep-linux-x64-gnu as an optional dependency, and that platform
// package), installed offline into fresh folders: a wasm PSI request through the pool in Node,
// in Chromium, Firefox and WebKit (a page that imports node_modules/lockstep/src/index.js without a
// bundler), with the native CLI's bytes; and a plan and a PSI request on the addon where both
// packages are installed, on wasm (saying why) where the platform package is absent or its
// binary is refused, with the CLI's bytes each time.
import { after, before, test } from '../bounded.js';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openPage as openChromium } from './chromium.js';
import { openPage as openFirefox } from './firefox.js';
import { openPage as openWebkit } from './webkit.js';
import { LOCKSTEP_BIN, psiVector } from './psi-vector.js';
import { serve } from './serve.js';

const npm = (args, cwd) =>
  execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, encoding: 'utf8' });

let dir;
let vector;

let tarballs;
const folders = [];

/** A fresh folder with `packages` installed offline. */
function install(...packages) {
  const folder = mkdtempSync(join(tmpdir(), 'lockstep-install-'));
  folders.push(folder);
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name: 'fresh', private: true, type: 'module' }));
  npm(['install', '--offline', ...packages], folder);
  return folder;
}

before(() => {
  vector = psiVector(1_500);
  dir = mkdtempSync(join(tmpdir(), 'lockstep-pack-'));
  const packScript = fileURLToPath(new URL('../../../scripts/pack-npm', import.meta.url));
  tarballs = execFileSync(packScript, [dir], { encoding: 'utf8' }).trim().split('\n');
  assert.equal(tarballs.length, 2);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'fresh', private: true, type: 'module' }));
  npm(['install', '--offline', tarballs[0]], dir);
  writeFileSync(join(dir, 'input.json'), JSON.stringify({ key: [...vector.key], values: vector.values }));
});

after(() => {
  rmSync(dir, { recursive: true, force: true });
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/**
 * A PSI request through the package installed in `folder` (asset 'auto'): which engine its
 * workers loaded (psiInfo, and the engine a sharded party's step reports) and the bytes.
 */
function packagePsi(folder) {
  writeFileSync(join(folder, 'input.json'), JSON.stringify({ key: [...vector.key], values: vector.values }));
  writeFileSync(
    join(folder, 'request.js'),
    `import { createPsiPool, psiInfo, psiRequest } from 'lockstep';
     import { readFileSync, writeFileSync } from 'node:fs';
     const { key, values } = JSON.parse(readFileSync('input.json', 'utf8'));
     const pool = createPsiPool({ workers: 2 });
     const bytes = await psiRequest(pool, { key: new Uint8Array(key), values });
     await pool.close();
     writeFileSync('request.bin', bytes);
     writeFileSync('psi-info.json', JSON.stringify(await psiInfo()));`,
  );
  execFileSync(process.execPath, ['request.js'], { cwd: folder });
  return {
    info: JSON.parse(readFileSync(join(folder, 'psi-info.json'), 'utf8')),
    request: new Uint8Array(readFileSync(join(folder, 'request.bin'))),
  };
}

test('the installed main package alone runs a PSI request on wasm in Node, says why, with the CLI bytes', () => {
  const { info, request } = packagePsi(dir);
  assert.equal(info.asset, 'wasm-scalar');
  assert.match(info.reason, /^lockstep-linux-x64-gnu is not installed \(MODULE_NOT_FOUND/);
  assert.deepEqual(request, vector.request);
});

const page = `<!doctype html><script type="module">
       import { createPsiPool, psiRequest } from './node_modules/lockstep/src/index.js';
       window.request = async () => {
         const { key, values } = await (await fetch('input.json')).json();
         const pool = createPsiPool({ workers: 2 });
         const bytes = await psiRequest(pool, { key: new Uint8Array(key), values });
         await pool.close();
         return [...bytes];
       };
     </script>`;

for (const [name, openPage] of [['Chromium', openChromium], ['Firefox', openFirefox], ['WebKit', openWebkit]]) {
  test(`the installed tarball runs a wasm PSI request in ${name} with the CLI bytes`, async () => {
    writeFileSync(join(dir, 'index.html'), page);
    const server = await serve(dir);
    const browser = await openPage();
    try {
      await browser.page.goto(`${server.url}index.html`);
      await browser.page.waitForFunction(() => typeof window.request === 'function');
      const bytes = await browser.page.evaluate(() => window.request());
      assert.deepEqual(new Uint8Array(bytes), vector.request);
      assert.deepEqual(browser.problems, []);
    } finally {
      await browser.close();
      await server.close();
    }
  });
}

const PLAN = {
  version: 1,
  inputs: [{ id: 'x', dtype: 'f32', view: { offset: 1, stride: 2 } }],
  constants: [{ id: 'c', dtype: 'f32', value: 0.1 }],
  nodes: [{ id: 's', op: 'sqrt', args: ['x'] }, { id: 'y', op: 'fma', args: ['s', 'c', 'x'] }],
  outputs: [{ id: 'out', from: 'y' }],
};

/** The CLI's bytes for PLAN over `x` (raw f32). */
function cliPlan(folder, x) {
  writeFileSync(join(folder, 'plan.json'), JSON.stringify(PLAN));
  writeFileSync(join(folder, 'x.raw'), new Uint8Array(x.buffer));
  execFileSync(LOCKSTEP_BIN, ['--quiet', 'plan', 'run', 'plan.json', '--input', 'x=x.raw', '--output', 'out=cli.raw'], { cwd: folder });
  return new Uint8Array(readFileSync(join(folder, 'cli.raw')));
}

/** Runs PLAN in `folder` through the installed package: its info and the output's bytes. */
function packagePlan(folder, x) {
  writeFileSync(
    join(folder, 'plan.js'),
    `import { closePlanPools, planInfo, runPlan } from 'lockstep';
     import { readFileSync, writeFileSync } from 'node:fs';
     const plan = JSON.parse(readFileSync('plan.json', 'utf8'));
     const x = new Float32Array(readFileSync('x.raw').buffer.slice(0));
     const [sync] = await runPlan(plan, [x], { placement: 'sync' });
     const [worker] = await runPlan(plan, [x], { placement: 'worker' });
     await closePlanPools();
     writeFileSync('sync.raw', sync);
     writeFileSync('worker.raw', worker);
     writeFileSync('info.json', JSON.stringify(await planInfo()));`,
  );
  execFileSync(process.execPath, ['plan.js'], { cwd: folder });
  const read = (file) => new Uint8Array(readFileSync(join(folder, file)));
  return { info: JSON.parse(readFileSync(join(folder, 'info.json'), 'utf8')), sync: read('sync.raw'), worker: read('worker.raw') };
}

const planInput = () => Float32Array.from({ length: 40_001 }, (_, i) => (i % 7 === 3 ? -i : i * 0.37));

test('with both packages installed, a plan runs on the addon with the CLI bytes', () => {
  const folder = install(...tarballs);
  const x = planInput();
  const expected = cliPlan(folder, x);
  const { info, sync, worker } = packagePlan(folder, x);
  assert.equal(info.backend, 'native');
  assert.equal(info.reason, undefined);
  assert.deepEqual(sync, expected);
  assert.deepEqual(worker, expected);
  const psi = packagePsi(folder);
  assert.deepEqual(psi.info, { asset: 'native', asked: 'auto', nativePackage: 'lockstep-linux-x64-gnu' });
  assert.deepEqual(psi.request, vector.request, 'a PSI request on the addon');
});

test('without the platform package, a plan falls back to wasm, says why, and gives the CLI bytes', () => {
  const folder = install(tarballs[0]);
  const x = planInput();
  const expected = cliPlan(folder, x);
  const { info, sync, worker } = packagePlan(folder, x);
  assert.equal(info.backend, 'wasm-simd');
  assert.match(info.reason, /^lockstep-linux-x64-gnu is not installed \(MODULE_NOT_FOUND/);
  assert.deepEqual(sync, expected);
  assert.deepEqual(worker, expected);
});

test('with a platform package whose binary cannot load, a plan falls back to wasm and says why', () => {
  const folder = install(tarballs[0]);
  const broken = join(folder, 'node_modules', 'lockstep-linux-x64-gnu');
  mkdirSync(broken);
  writeFileSync(join(broken, 'package.json'), JSON.stringify({ name: 'lockstep-linux-x64-gnu', version: '0.1.0', main: 'lockstep.linux-x64-gnu.node' }));
  writeFileSync(join(broken, 'lockstep.linux-x64-gnu.node'), 'not a shared object');
  const x = planInput();
  const expected = cliPlan(folder, x);
  const { info, sync } = packagePlan(folder, x);
  assert.equal(info.backend, 'wasm-simd');
  assert.match(info.reason, /^lockstep-linux-x64-gnu cannot be loaded \(ERR_DLOPEN_FAILED/);
  assert.deepEqual(sync, expected);
  const psi = packagePsi(folder);
  assert.equal(psi.info.asset, 'wasm-scalar');
  assert.match(psi.info.reason, /^lockstep-linux-x64-gnu cannot be loaded \(ERR_DLOPEN_FAILED/);
  assert.deepEqual(psi.request, vector.request, 'a PSI request on wasm');
});
