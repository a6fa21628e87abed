// A relay for the package's relay tests: `lockstep serve` (LOCKSTEP_BIN, as psi-round.js) on
// 127.0.0.1, plain HTTP (loopback only), SQLite in a temporary folder, pages of `origins` allowed;
// `invite()` makes a raw round and returns its two invitations' text; `close()` stops the relay
// (SIGTERM) and removes the folder.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { LOCKSTEP_BIN } from './psi-vector.js';

/** @param {{ origins?: string[] }} [options] */
export async function startRelay({ origins = [] } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'lockstep-relay-'));
  const args = ['serve', '--plain-http', '--listen', '127.0.0.1:0', '--db', `sqlite:${join(dir, 'relay.db')}`, '--store', join(dir, 'store'), '--operator-token', join(dir, 'operator.token')];
  for (const origin of origins) args.push('--allow-origin', origin);
  const child = spawn(LOCKSTEP_BIN, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stderr.on('data', (chunk) => (log += chunk));
  let out = '';
  const url = await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /^listening on (\S+)/m.exec(out);
      if (match) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`lockstep serve exited (${code}): ${log}`)));
  });
  let rounds = 0;
  return {
    url,
    get log() {
      return log;
    },
    invite() {
      const name = join(dir, `round-${++rounds}`);
      execFileSync(LOCKSTEP_BIN, ['--quiet', 'psi', 'invite', '--server', url, '--operator-token', join(dir, 'operator.token'), '--max-rows', '100000', '--starter-out', `${name}.starter`, '--joiner-out', `${name}.joiner`], { stdio: 'pipe' });
      return { starter: readFileSync(`${name}.starter`, 'utf8').trim(), joiner: readFileSync(`${name}.joiner`, 'utf8').trim() };
    },
    async close() {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = await exited;
      rmSync(dir, { recursive: true, force: true });
      if (code !== 0) throw new Error(`lockstep serve exited with ${code}: ${log}`);
    },
  };
}
