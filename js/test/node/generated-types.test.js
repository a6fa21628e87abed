// The package's JS is type-checked against the declarations the bindings' builds generate
// (wasm-bindgen's wasm/scalar/lockstep_wasm.d.ts, napi-rs's index.d.ts in the platform
// package): in a scratch copy of the sources, renaming one export the JS uses in either file
// makes `tsc --checkJs` (npm run check's project) fail, naming it; the copy as built passes.
import { test } from '../bounded.js';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { platformPackage } from '../../src/engines/native.js';

const js = fileURLToPath(new URL('../../', import.meta.url));
const tsc = join(js, 'node_modules/typescript/bin/tsc');

/** A scratch copy of what npm run check reads, the platform package's declarations copied. */
function scratch() {
  const dir = mkdtempSync(join(tmpdir(), 'lockstep-types-'));
  cpSync(join(js, 'src'), join(dir, 'src'), { recursive: true });
  for (const file of ['tsconfig.json', 'package.json']) cpSync(join(js, file), join(dir, file));
  mkdirSync(join(dir, 'wasm'));
  cpSync(join(js, 'wasm/scalar'), join(dir, 'wasm/scalar'), { recursive: true });
  mkdirSync(join(dir, 'node_modules'));
  for (const name of ['typescript', '@types']) symlinkSync(realpathSync(join(js, 'node_modules', name)), join(dir, 'node_modules', name));
  const name = /** @type {string} */ (platformPackage());
  const addon = realpathSync(join(js, 'node_modules', name));
  mkdirSync(join(dir, 'node_modules', name));
  for (const file of ['package.json', 'index.d.ts']) cpSync(join(addon, file), join(dir, 'node_modules', name, file));
  return { dir, wasmTypes: join(dir, 'wasm/scalar/lockstep_wasm.d.ts'), addonTypes: join(dir, 'node_modules', name, 'index.d.ts') };
}

/** tsc over the scratch copy: its exit status and output. */
function check(dir) {
  const run = spawnSync(process.execPath, [tsc, '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** `file` with the first declaration of `name` renamed. */
function rename(file, name, pattern) {
  const text = readFileSync(file, 'utf8');
  const renamed = text.replace(pattern, (found) => found.replace(name, `${name}Renamed`));
  assert.notEqual(renamed, text, `${file} declares ${name}`);
  writeFileSync(file, renamed);
}

test('a renamed export of either binding fails the type check of the JS that uses it', () => {
  const { dir, wasmTypes, addonTypes } = scratch();
  try {
    const built = check(dir);
    assert.equal(built.status, 0, `the copy as built must pass:\n${built.output}`);
    const wasm = readFileSync(wasmTypes, 'utf8');
    const addon = readFileSync(addonTypes, 'utf8');
    for (const [file, original, name, pattern, user] of [
      // PSI: the helper's part map (psi/worker.js hands PsiHelper to psi/shard/helper.js), on the wasm glue.
      [wasmTypes, wasm, 'maskPart', /maskPart\(values/, 'src/psi/worker.js'],
      // PSI: a party's step, on the addon.
      [addonTypes, addon, 'setupBegin', /setupBegin\(values/, 'src/psi/worker.js'],
      // Plans: the addon's refusal-returning layout (plan/backends.js).
      [addonTypes, addon, 'tryFromJson', /static tryFromJson\(/, 'src/plan/backends.js'],
      // Plans: the wasm glue's output copy.
      [wasmTypes, wasm, 'takeOutputInto', /takeOutputInto\(index/, 'src/plan/backends.js'],
    ]) {
      rename(file, name, pattern);
      const renamed = check(dir);
      assert.notEqual(renamed.status, 0, `tsc passed with ${name} renamed in ${file}`);
      assert.match(renamed.output, new RegExp(`${user.replaceAll('/', '\\/')}[^\n]*error TS[\\s\\S]*${name}`), renamed.output);
      writeFileSync(file, original);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
