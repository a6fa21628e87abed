// npm test bounds each test's hang, not the sum of all tests (a bound a slow host trips with no
// test at fault): every test file takes `test` from test/bounded.js (a default bound a test, under
// the test's own name), every node --test run of package.json's test scripts bounds each file far
// above that and forces its exit, and on this Node a file that hangs both ways (a test that never
// settles, a timer left alive) ends within seconds of its bound, naming the test that timed out.
import { test } from '../bounded.js';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const js = fileURLToPath(new URL('../../', import.meta.url));
const { scripts } = JSON.parse(readFileSync(join(js, 'package.json'), 'utf8'));

test("every test file takes test from bounded.js; every node --test run bounds its files and forces their exit", () => {
  for (const folder of ['test/node', 'test/engines', 'test/large']) {
    for (const file of readdirSync(join(js, folder)).filter((f) => f.endsWith('.js'))) {
      const text = readFileSync(join(js, folder, file), 'utf8');
      assert.doesNotMatch(text, /^import [^\n]*\btest\b[^\n]* from 'node:test'/m, `${folder}/${file} takes test from node:test, unbounded`);
    }
  }
  const runs = [scripts.test, scripts['test:largest']].flatMap((script) => script.split('&&')).map((run) => run.trim());
  assert.equal(runs.length, 3, runs.join('\n'));
  for (const run of runs) {
    assert.match(run, /--test /, run);
    assert.match(run, /--test-force-exit/, run);
    const file = Number(/--test-timeout=(\d+)/.exec(run)?.[1]);
    assert.ok(file >= 10 * 180_000, `${run}: a file's bound must be far above a test's`);
  }
});

test('a test that hangs fails under its own name and its file still ends', () => {
  const flags = scripts.test.split('&&')[0].split(/\s+/).filter((flag) => flag.startsWith('--test-'));
  const started = Date.now();
  const run = spawnSync(process.execPath, ['--test', ...flags, 'test/fixtures/hangs.js'], {
    cwd: js,
    encoding: 'utf8',
    timeout: 60_000,
    // Not as a child of this runner (NODE_TEST_CONTEXT): a run of its own, as npm test's.
    env: { ...process.env, NODE_TEST_CONTEXT: undefined, LOCKSTEP_TEST_TIMEOUT: '1000' },
  });
  const took = Date.now() - started;
  assert.notEqual(run.signal, 'SIGTERM', `the file still ran after 60 s:\n${run.stdout}`);
  assert.equal(run.status, 1, run.stdout);
  assert.match(run.stdout, /not ok \d+ - a test that never settles\n[\s\S]*?test timed out after 1000ms/);
  assert.match(run.stdout, /\nok \d+ - a test that leaves a timer alive/);
  assert.ok(took < 30_000, `${took} ms`);
});
