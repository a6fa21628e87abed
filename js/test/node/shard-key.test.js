// Where a party's key goes when a step is sharded (src/psi/shard/coordinator.js, helper.js): to
// each helper in a fresh buffer of its own, transferred, never serialized into a message; and,
// once a sharded round is over (dispose, close), in no memory of this process a scan can read.
import { test } from '../bounded.js';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { runSharded } from '../../src/psi/shard/coordinator.js';
import { ELEMENT_LEN } from '../../src/psi/shard/messages.js';
import { createPsiPool, createStarter } from '../../src/index.js';
import { psiRound } from './psi-round.js';
import { scanForKey } from './key-scan.js';

const fromB64 = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

test("the key crosses to each helper in a fresh 32-byte buffer of its own, moved (not serialized); the party's copies are wiped", async () => {
  const posted = [];
  const post = MessagePort.prototype.postMessage;
  MessagePort.prototype.postMessage = function (message, transfer) {
    if (message?.type === 'key') posted.push({ message, transfer: [...(transfer ?? [])] });
    return post.call(this, message, transfer);
  };
  try {
    const key = Uint8Array.from({ length: 32 }, (_, i) => 200 - i);
    const exported = [];
    const received = [];
    const control = new MessageChannel();
    const channels = [new MessageChannel(), new MessageChannel()];
    for (const { port2: port } of channels) {
      port.addEventListener('message', ({ data }) => {
        if (data?.type === 'key') {
          received.push({ bytes: [...data.key], buffer: data.key.buffer.byteLength });
          port.postMessage({ type: 'ready' });
        } else if (data?.type === 'part') {
          port.postMessage({ type: 'result', output: data.elements.slice() });
        }
      });
      port.start();
      port.postMessage({ type: 'hello' });
    }
    const count = 30;
    const { result } = await runSharded({
      shard: { control: control.port2, helpers: channels.map((c) => c.port1), wait: 2_000 },
      role: 'joiner',
      party: {
        remaskPart: (elements) => elements.slice(),
        exportKey: () => {
          const copy = key.slice();
          exported.push(copy);
          return copy;
        },
      },
      begin: () => ({ kind: 'remask', elements: new Uint8Array(count * ELEMENT_LEN).fill(5) }),
      finish: (mapped) => mapped,
      psiRanges: (n, w) => Uint32Array.from({ length: 2 * w }, (_, i) => Math.round((Math.floor(i / 2) + (i % 2)) * n / w)),
      progress: () => {},
      memory: () => ({ wasmBytes: 0 }),
    });
    assert.equal(result.length, count * ELEMENT_LEN, 'the step ran');
    assert.equal(posted.length, 2, 'one key message a helper');
    for (const { message, transfer } of posted) {
      assert.ok(transfer.includes(message.key.buffer), "the key's buffer is in the message's transfer list");
      assert.equal(message.key.byteLength, 0, 'and so moved out of the party worker (detached there)');
    }
    assert.notEqual(posted[0].message.key.buffer, posted[1].message.key.buffer, 'each helper gets a buffer of its own');
    assert.deepEqual(received.map((r) => r.buffer), [32, 32], 'a buffer of exactly the key');
    for (const r of received) assert.deepEqual(r.bytes, [...key], 'the key arrives');
    assert.equal(exported.length, 1, 'exported once a step');
    assert.ok(exported[0].every((b) => b === 0), "the engine's export is wiped");
  } finally {
    MessagePort.prototype.postMessage = post;
  }
});

// The scan looks for copies of the key in serialized messages only: that is what the shard
// protocol decides (a key posted by structured clone left one per helper and step in freed
// memory, found in every run before it was transferred). Other copies a scan can find after
// close are not the protocol's (js/README.md, "Sharded steps"): wasm's key generation leaves
// its random bytes in getrandom's 256-byte buffer for the worker's life, and V8 may leave
// moved or collected objects unwiped.
test("after sharded rounds, dispose() and close(), no serialized message in this process's memory holds the key", { timeout: 120_000 }, async (t) => {
  try {
    readFileSync('/proc/self/maps');
  } catch {
    t.skip('no /proc/self/maps here');
    return;
  }
  const r = psiRound();
  // The key is made in its worker, and crosses to this thread once, by exportKey (a buffer
  // moved, not serialized), to be split into shares here at once: this thread holds no copy.
  const p = createPsiPool({ workers: 3, asset: 'scalar', startupTimeout: 20_000 });
  const starter = await createStarter(p, { shards: 3 });
  const exported = await starter.exportKey();
  const shareA = crypto.getRandomValues(new Uint8Array(32));
  const shareB = exported.map((b, i) => b ^ shareA[i]);
  exported.fill(0);
  const values = Array.from({ length: 12_000 }, (_, i) => `person-${i}@example.org`);
  for (let round = 0; round < 3; round++) {
    const setup = await starter.setup(values, { joinerCount: 1_000 });
    assert.ok(setup.length > 0 && starter.lastSharding.workers === 3, `a setup on 3 workers: ${starter.lastSharding.reason}`);
    const response = await starter.respond(fromB64(r.request), { joinerCount: r.joinerCount });
    assert.ok(response.length > 0 && starter.lastSharding.workers === 3, `a response on 3 workers: ${starter.lastSharding.reason}`);
  }
  await starter.dispose();
  const disposed = scanForKey(shareA, shareB);
  await p.close();
  const { serialized, scanned } = scanForKey(shareA, shareB);
  assert.ok(scanned > 16 << 20, `scanned ${scanned} bytes`);
  // The scan finds what it looks for: the key serialized into a message still queued on a port
  // (scanned before this thread can deliver it, then received and wiped).
  const probe = new Uint8Array(new ArrayBuffer(32));
  for (let i = 0; i < 32; i++) probe[i] = shareA[i] ^ shareB[i];
  const { port1, port2 } = new MessageChannel();
  port1.postMessage({ type: 'key', role: 'starter', key: probe });
  probe.fill(0);
  const control = scanForKey(shareA, shareB);
  const arrived = new Promise((resolve) => port2.once('message', resolve));
  (await arrived).key.fill(0);
  port1.close();
  assert.ok(control.serialized.length >= 1, 'a key serialized on purpose is found');
  assert.deepEqual(disposed.serialized, [], `serialized copies of the key after dispose(), at ${disposed.serialized.join(', ')}`);
  assert.deepEqual(serialized, [], `serialized copies of the key after close(), at ${serialized.join(', ')}`);
});
