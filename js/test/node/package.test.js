// The package as users get it: `npm pack`, installed into a fresh folder (no network: it has no
// dependencies), then a wasm PSI request through the pool in Node, in Chromium and in Firefox
// (a page that imports node_modules/lockstep/src/index.js without a bundler). The bytes must
// equal the native CLI's for the same key and values.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openPage as openChromium } from './chromium.js';
import { openPage as openFirefox } from './firefox.js';
import { psiVector } from './psi-vector.js';
import { serve } from './serve.js';

const packageDir = fileURLToPath(new URL('../../', import.meta.url));
const npm = (args, cwd) =>
  execFileSync('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, encoding: 'utf8' });

let dir;
let vector;

before(() => {
  vector = psiVector(1_500);
  dir = mkdtempSync(join(tmpdir(), 'lockstep-pack-'));
  const tarball = npm(['pack', '--pack-destination', dir], packageDir).trim().split('\n').at(-1);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'fresh', private: true, type: 'module' }));
  npm(['install', '--offline', join(dir, tarball)], dir);
  writeFileSync(join(dir, 'input.json'), JSON.stringify({ key: [...vector.key], values: vector.values }));
});

after(() => rmSync(dir, { recursive: true, force: true }));

test('the installed tarball runs a wasm PSI request in Node with the CLI bytes', () => {
  writeFileSync(
    join(dir, 'request.js'),
    `import { createPsiPool, psiRequest } from 'lockstep';
     import { readFileSync, writeFileSync } from 'node:fs';
     const { key, values } = JSON.parse(readFileSync('input.json', 'utf8'));
     const pool = createPsiPool({ workers: 2 });
     const bytes = await psiRequest(pool, { key: new Uint8Array(key), values });
     await pool.close();
     writeFileSync('request.bin', bytes);`,
  );
  execFileSync(process.execPath, ['request.js'], { cwd: dir });
  assert.deepEqual(new Uint8Array(readFileSync(join(dir, 'request.bin'))), vector.request);
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

for (const [name, openPage] of [['Chromium', openChromium], ['Firefox', openFirefox]]) {
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
