// The native side of the wasm-vs-CLI comparison: a fresh key and values (with repeats), and the
// request bytes `lockstep psi request` writes for them (reveal, size-only, normalized). The CLI is LOCKSTEP_BIN, or
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
    // Crosses the wasm module's progress blocks (1,024 keys), with non-ASCII values, repeated
    // values, empty ones, and values equal only once normalized: psiRequest must group rows into
    // distinct keys exactly as the CLI does with a file of these lines.
    const values = Array.from({ length: count }, (_, i) => {
      if (i % 97 === 5) return `zoë-${i}@exämple.org`;
      if (i % 101 === 7) return `person-${i - 3}@example.org`; // a repeat of an earlier row
      if (i % 211 === 11) return '';
      if (i % 89 === 13) return ` PERSON-${i - 1}@Example.org `; // a repeat once normalized
      return `person-${i}@example.org`;
    });
    writeFileSync(join(dir, 'values.txt'), values.join('\n') + '\n');
    const run = (...args) => execFileSync(LOCKSTEP_BIN, ['--quiet', ...args], { cwd: dir, stdio: 'pipe' });
    run('psi', 'key', 'new', '--out', 'key');
    run('psi', 'request', '--key', 'key', '--input', 'values.txt', '--out', 'reveal.bin');
    run('psi', 'request', '--key', 'key', '--input', 'values.txt', '--size-only', '--out', 'size-only.bin');
    run('psi', 'request', '--key', 'key', '--input', 'values.txt', '--normalize', '--out', 'normalized.bin');
    const read = (name) => new Uint8Array(readFileSync(join(dir, name)));
    const distinct = new Set(values.filter((value) => value !== '')).size;
    if (distinct === values.length) throw new Error('the vector must repeat values');
    return {
      key: read('key'),
      values,
      distinct,
      request: read('reveal.bin'),
      sizeOnly: read('size-only.bin'),
      normalized: read('normalized.bin'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
