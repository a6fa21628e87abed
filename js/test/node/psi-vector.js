// The native side of the wasm-vs-CLI comparison: a fresh key and values, and the request bytes
// `lockstep psi request` writes for them (reveal and size-only). The CLI is LOCKSTEP_BIN, or
// the workspace's debug build (scripts/test builds it before the JS tests).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const LOCKSTEP_BIN =
  process.env.LOCKSTEP_BIN ?? fileURLToPath(new URL('../../../target/debug/lockstep', import.meta.url));

export function psiVector(count = 2_500) {
  if (!existsSync(LOCKSTEP_BIN)) {
    throw new Error(`${LOCKSTEP_BIN} is missing: build it (cargo build -p lockstep-cli) or set LOCKSTEP_BIN`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'lockstep-js-'));
  try {
    // Crosses the wasm module's progress blocks (1,024), with non-ASCII values. Distinct: the
    // CLI masks each distinct key once, psiRequest each value given.
    const values = Array.from({ length: count }, (_, i) => (i % 97 === 5 ? `zoë-${i}@exämple.org` : `person-${i}@example.org`));
    writeFileSync(join(dir, 'values.txt'), values.join('\n') + '\n');
    const run = (...args) => execFileSync(LOCKSTEP_BIN, ['--quiet', ...args], { cwd: dir, stdio: 'pipe' });
    run('psi', 'key', 'new', '--out', 'key');
    run('psi', 'request', '--key', 'key', '--input', 'values.txt', '--out', 'reveal.bin');
    run('psi', 'request', '--key', 'key', '--input', 'values.txt', '--size-only', '--out', 'size-only.bin');
    const read = (name) => new Uint8Array(readFileSync(join(dir, name)));
    return { key: read('key'), values, request: read('reveal.bin'), sizeOnly: read('size-only.bin') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
