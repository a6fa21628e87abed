// The native side of the parties' comparison: a whole round run by `lockstep psi` (the CLI is
// LOCKSTEP_BIN, or the workspace's debug build) over two record files with repeated keys, a
// byte-order mark, CR/LF line ends, quoted fields, non-ASCII and blank keys; every message and
// output file, in every format and mode, as base64 (what a page can be sent as JSON).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCKSTEP_BIN } from './psi-vector.js';

/** The starter's records: CSV with a BOM and CR/LF, a quoted comma, blank and repeated keys. */
function starterFile(count) {
  const lines = ['\u{feff}id,email,note'];
  for (let i = 0; i < count; i++) {
    let email = `person-${i}@example.org`;
    if (i % 7 === 3) email = `PERSON-${i - 1}@Example.org`; // repeats row i-1 once normalized
    if (i % 13 === 5) email = `zoë-${i}@exämple.org`;
    if (i % 29 === 11) email = ''; // a blank key: left out
    lines.push(`s${i},${email},"note, ${i}"`);
  }
  return lines.join('\r\n') + '\r\n';
}

/** The joiner's records: LF, every third starter key (some only equal once normalized), and its own. */
function joinerFile(count) {
  const lines = ['email,city'];
  for (let i = 0; i < count; i++) {
    const email = i % 3 === 0 ? ` Person-${i}@example.org ` : i % 13 === 5 ? `ZOË-${i}@EXÄMPLE.org` : `joiner-${i}@example.org`;
    lines.push(`${email},city ${i % 5}`);
    if (i % 17 === 0) lines.push(`${email},again`); // a repeated key
  }
  return lines.join('\n') + '\n';
}

export function psiRound(count = 1_500) {
  if (!existsSync(LOCKSTEP_BIN)) {
    throw new Error(`${LOCKSTEP_BIN} is missing: build it (cargo build -p lockstep-cli) or set LOCKSTEP_BIN`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'lockstep-round-'));
  try {
    const starter = starterFile(count);
    const joiner = joinerFile(count);
    writeFileSync(join(dir, 'starter.csv'), starter);
    writeFileSync(join(dir, 'joiner.csv'), joiner);
    const run = (...args) => execFileSync(LOCKSTEP_BIN, ['--quiet', ...args], { cwd: dir, stdio: 'pipe' });
    const keyed = (file) => ['--input', file, '--column', 'email', '--normalize'];
    run('psi', 'key', 'new', '--out', 'starter.key');
    run('psi', 'key', 'new', '--out', 'joiner.key');
    // The CLI tells the joiner the count to give the starter (its distinct keys), on stderr.
    const told = spawnSync(LOCKSTEP_BIN, ['psi', 'request', '--key', 'joiner.key', ...keyed('joiner.csv'), '--out', 'request'], {
      cwd: dir,
      encoding: 'utf8',
    });
    const joinerCount = Number(/--joiner-count (\d+)/.exec(told.stderr)?.[1]);
    if (told.status !== 0 || !(joinerCount > 0)) throw new Error(`psi request failed: ${told.stderr}`);
    run('psi', 'request', '--key', 'joiner.key', ...keyed('joiner.csv'), '--size-only', '--out', 'request-size');
    run('psi', 'respond', '--key', 'starter.key', '--request', 'request', '--joiner-count', String(joinerCount), '--out', 'response');
    run('psi', 'respond', '--key', 'starter.key', '--request', 'request-size', '--joiner-count', String(joinerCount), '--size-only', '--out', 'response-size');
    const formats = {};
    for (const format of ['raw', 'gcs', 'bloom']) {
      const permutation = format === 'raw' ? ['--permutation-out', 'permutation'] : [];
      run('psi', 'setup', '--key', 'starter.key', ...keyed('starter.csv'), '--joiner-count', String(joinerCount), '--format', format, '--out', `setup-${format}`, ...permutation);
      const pairs = format === 'raw' ? ['--pairs-out', 'pairs'] : [];
      run('psi', 'intersect', '--key', 'joiner.key', '--setup', `setup-${format}`, '--response', 'response', '--request', 'request', ...keyed('joiner.csv'), '--out', `rows-${format}.csv`, ...pairs);
      const size = execFileSync(LOCKSTEP_BIN, ['--quiet', 'psi', 'intersect', '--key', 'joiner.key', '--setup', `setup-${format}`, '--response', 'response-size', '--request', 'request-size', ...keyed('joiner.csv'), '--size'], { cwd: dir, stdio: 'pipe' });
      formats[format] = {
        setup: b64(dir, `setup-${format}`),
        rows: b64(dir, `rows-${format}.csv`),
        size: Number(size.toString().trim()),
      };
    }
    run('psi', 'resolve', '--permutation', 'permutation', '--matches', 'pairs', ...keyed('starter.csv'), '--out', 'resolved.csv');
    return {
      starterKey: b64(dir, 'starter.key'),
      joinerKey: b64(dir, 'joiner.key'),
      starter,
      joiner,
      joinerCount,
      request: b64(dir, 'request'),
      requestSize: b64(dir, 'request-size'),
      response: b64(dir, 'response'),
      responseSize: b64(dir, 'response-size'),
      formats,
      permutation: b64(dir, 'permutation'),
      pairs: b64(dir, 'pairs'),
      resolved: b64(dir, 'resolved.csv'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const b64 = (dir, name) => readFileSync(join(dir, name)).toString('base64');
