// What `lockstep psi demo --rows N` writes (LOCKSTEP_BIN, as psi-vector.js): the starter's
// resolved rows, the joiner's matches and the starter's sample file, for the demo page's tests.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LOCKSTEP_BIN } from './psi-vector.js';

/** @param {number} rows */
export function cliDemoFiles(rows) {
  const dir = mkdtempSync(join(tmpdir(), 'lockstep-demo-'));
  try {
    execFileSync(LOCKSTEP_BIN, ['--quiet', 'psi', 'demo', '--rows', String(rows), '--dir', dir], { stdio: 'pipe' });
    return {
      resolved: readFileSync(join(dir, 'matched-rows.csv'), 'utf8'),
      matches: readFileSync(join(dir, 'matches.csv'), 'utf8'),
      starter: readFileSync(join(dir, 'starter.csv')),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A CSV's column `name`, as text (the demo's files hold no quoted commas). @param {string} csv @param {string} name */
export const column = (csv, name) => {
  const [head, ...rows] = csv.trim().split('\n');
  const at = head.split(',').indexOf(name);
  return rows.map((row) => row.split(',')[at]);
};
