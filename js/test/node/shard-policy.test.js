// The shard count a PSI step asks for (src/psi/shard/policy.js), over the platform reports Chrome,
// Safari and Firefox send on macOS and elsewhere (user agent, navigator.platform, Chromium's
// userAgentData.platform); the one check of the `shards` option, and its old name refused.
import { test } from '../bounded.js';
import assert from 'node:assert/strict';
import { MAX_AUTO_WORKERS } from '../../src/limits.js';
import { PsiJoiner, createJoiner, createStarter } from '../../src/psi/party.js';
import { hostOf, namesMac, shardChoice, shardsOf } from '../../src/psi/shard/policy.js';

const browsers = {
  'Chrome on macOS': {
    userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    platform: 'MacIntel',
    uaPlatform: 'macOS',
  },
  'Chrome on macOS, user agent reduced and platform frozen': { userAgent: 'Mozilla/5.0 (X11; Linux x86_64)', platform: '', uaPlatform: 'macOS' },
  'Safari on macOS': {
    userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
    platform: 'MacIntel',
  },
  'Firefox on macOS': { userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:133.0) Gecko/20100101 Firefox/133.0', platform: 'MacIntel' },
  'Firefox on macOS, resisting fingerprinting (platform only)': { userAgent: 'Mozilla/5.0 (Windows NT 10.0; rv:128.0) Gecko/20100101 Firefox/128.0', platform: 'MacIntel' },
  'Safari on an iPad asking for the desktop site': {
    userAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
    platform: 'MacIntel',
  },
};
const elsewhere = {
  'Chrome on Windows': {
    userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    platform: 'Win32',
    uaPlatform: 'Windows',
  },
  'Chrome on Linux': { userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', platform: 'Linux x86_64', uaPlatform: 'Linux' },
  'Firefox on Linux': { userAgent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', platform: 'Linux x86_64' },
  'Firefox on Windows': { userAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0', platform: 'Win32' },
  'Chrome on Android': { userAgent: 'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36', platform: 'Linux armv81', uaPlatform: 'Android' },
  'Safari on an iPhone': {
    userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
    platform: 'iPhone',
  },
  'Chrome on ChromeOS': { userAgent: 'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', platform: 'Linux x86_64', uaPlatform: 'Chrome OS' },
};

const host = (reports, concurrency = 8) => ({ concurrency, browser: true, ...reports });

test('any platform report naming a Mac gives one worker by default; an explicit count overrides it', () => {
  for (const [name, reports] of Object.entries(browsers)) {
    assert.ok(namesMac(host(reports)), name);
    const choice = shardChoice('auto', 8, host(reports));
    assert.equal(choice.workers, 1, name);
    assert.match(choice.reason, /macOS: one worker/, name);
    assert.equal(shardChoice(3, 8, host(reports)).workers, 3, `${name}: 3 asked`);
  }
});

test('elsewhere: the hardware concurrency, capped at 4 and at the pool', () => {
  for (const [name, reports] of Object.entries(elsewhere)) {
    assert.ok(!namesMac(host(reports)), name);
    assert.deepEqual(shardChoice('auto', 16, host(reports, 16)), {
      workers: MAX_AUTO_WORKERS,
      asked: 'auto',
      reason: 'hardware concurrency 16, capped at 4',
    }, name);
    assert.equal(shardChoice(undefined, 16, host(reports, 2)).workers, 2, name);
    assert.deepEqual(shardChoice('auto', 2, host(reports, 8)), { workers: 2, asked: 'auto', reason: 'hardware concurrency 8, capped at 4, the pool has 2' });
    assert.equal(shardChoice('auto', 8, host(reports, 0)).workers, 1, `${name}: no concurrency reported`);
  }
});

test('Node is never taken for a Mac; asked counts are bounded by the pool and checked', () => {
  assert.ok(!namesMac({ concurrency: 8, browser: false, userAgent: 'Node.js/20', platform: 'darwin' }));
  assert.equal(hostOf().browser, false);
  assert.deepEqual(shardChoice(6, 4, host({})), { workers: 4, asked: 6, reason: '6 asked, the pool has 4' });
  assert.deepEqual(shardChoice(1, 4, host({})), { workers: 1, asked: 1, reason: '1 asked' });
  for (const bad of [0, -1, 1.5, '2', Number.NaN]) {
    assert.throws(() => shardChoice(/** @type {any} */ (bad), 4, host({})), TypeError, String(bad));
  }
});

test('shards: one check wherever it is given; the old name `workers` is refused, naming the new one', async () => {
  assert.equal(shardsOf(undefined), 'auto');
  assert.equal(shardsOf('auto'), 'auto');
  assert.equal(shardsOf(3), 3);
  for (const bad of [0, -1, 1.5, '2', Number.NaN, null]) {
    assert.throws(() => shardsOf(bad), { name: 'TypeError', message: `shards must be 'auto' or a whole number >= 1, not ${String(bad)}` });
  }
  // Refused before the pool is asked for anything: a pool that throws on every use.
  const pool = /** @type {any} */ (new Proxy({}, { get: (_, key) => { throw new Error(`the pool was used (${String(key)})`); } }));
  const renamed = '`workers` is now `shards` (how many workers a step is split over)';
  await assert.rejects(createStarter(pool, { workers: 2 }), { name: 'TypeError', message: `createStarter: ${renamed}` });
  await assert.rejects(createJoiner(pool, { workers: 'auto' }), { name: 'TypeError', message: `createJoiner: ${renamed}` });
  await assert.rejects(createJoiner(pool, { shards: 0 }), { name: 'TypeError', message: "shards must be 'auto' or a whole number >= 1, not 0" });
  const joiner = new PsiJoiner(pool, /** @type {any} */ ({ lost: false }), 1, { shards: 'auto', wait: 5_000 });
  await assert.rejects(joiner.request(['a'], {}, /** @type {any} */ ({ workers: 2 })), { name: 'TypeError', message: `request: ${renamed}` });
  await assert.rejects(joiner.request(['a'], {}, { shards: 'two' }), { name: 'TypeError', message: "shards must be 'auto' or a whole number >= 1, not two" });
});
