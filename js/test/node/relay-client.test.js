// RelayClient's attempts (src/relay/client.js) against a scripted fetch: an attempt the relay
// never answers is abandoned after answerWithin and tried again; a relay that never answers is
// a RelayError `unreachable` naming the silence; the caller's abort ends a silent attempt at once.
import { test } from '../bounded.js';
import assert from 'node:assert/strict';
import { RelayClient, RelayError } from '../../src/index.js';

const INVITATION = `${'a'.repeat(32)}.${'b'.repeat(64)}`;
const VIEW = { round: 'a'.repeat(32), role: 'joiner', format: 'raw', size_only: false, messages: {} };

/** A fetch that never answers, as a lost connection looks in a browser: it settles only on abort. */
function silent(_url, init) {
  return new Promise((_resolve, reject) => {
    init.signal.addEventListener('abort', () => reject(init.signal.reason), { once: true });
  });
}

test('an attempt the relay never answers is abandoned after answerWithin and the call tried again', async () => {
  const calls = [];
  const fetch = (url, init) => {
    calls.push({ url, authorization: init.headers.authorization });
    return calls.length === 1 ? silent(url, init) : Promise.resolve(Response.json(VIEW));
  };
  const client = new RelayClient('http://127.0.0.1:9', INVITATION, { answerWithin: 200, retryFor: 10_000, fetch });
  const started = Date.now();
  assert.deepEqual(await client.view(), VIEW);
  assert.equal(calls.length, 2, 'one silent attempt, then one answered');
  assert.ok(Date.now() - started >= 200, 'the silent attempt was given answerWithin');
  assert.ok(calls.every((c) => c.authorization === `Bearer ${'b'.repeat(64)}`));
});

test('a relay that never answers is a RelayError `unreachable` naming the silence, after retryFor', async () => {
  const client = new RelayClient('http://127.0.0.1:9', INVITATION, { answerWithin: 100, retryFor: 500, fetch: silent });
  await assert.rejects(client.view(), (error) => {
    assert.ok(error instanceof RelayError);
    assert.equal(error.code, 'unreachable');
    assert.match(error.message, /no answer within 100 ms/);
    return true;
  });
});

test("the caller's abort ends a silent attempt at once, with the caller's reason", async () => {
  const client = new RelayClient('http://127.0.0.1:9', INVITATION, { answerWithin: 60_000, retryFor: 60_000, fetch: silent });
  const controller = new AbortController();
  const reason = new Error('the user left');
  setTimeout(() => controller.abort(reason), 50);
  const started = Date.now();
  await assert.rejects(client.view({ signal: controller.signal }), (error) => error === reason);
  assert.ok(Date.now() - started < 5_000);
});
