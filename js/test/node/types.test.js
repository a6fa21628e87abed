// The TypeScript declarations (src/*.d.ts) compile against real use and refuse misuse
// (test/types/usage.ts, with @ts-expect-error lines that fail the build if they stop failing).
import { test } from '../bounded.js';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

test('the type declarations compile with tsc --strict', () => {
  const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
  const project = fileURLToPath(new URL('../types/tsconfig.json', import.meta.url));
  const run = spawnSync(process.execPath, [tsc, '-p', project], { encoding: 'utf8' });
  assert.equal(run.status, 0, `tsc failed:\n${run.stdout}${run.stderr}`);
});
