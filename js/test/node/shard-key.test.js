// Where a party's key goes when a step is sharded (src/shard/coordinator.js, helper.js): to
// each helper in a fresh buffer of its own, transferred, never serialized into a message; and,
// once a sharded round is over (dispose, close), in no memory of this process a scan can read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { runSharded } from '../../src/shard/coordinator.js';
import { ELEMENT_LEN } from '../../src/shard/messages.js';
import { createPsiPool, createStarter } from '../../src/index.js';
import { psiRound } from './psi-round.js';

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

/**
 * Where `key` (given as two shares whose XOR it is, so that this test holds no copy of it)
 * occurs in what this process can read of its own memory (/proc/self/mem: every readable
 * private mapping not backed by a file): the addresses, those of them inside a structured
 * clone's serialization of a 32-byte ArrayBuffer (V8 writes one as 'B', its length 0x20, its
 * bytes), and the bytes scanned.
 */
function scanForKey(shareA, shareB) {
  const at = (i) => shareA[i] ^ shareB[i];
  // Candidates are found by one byte of the key (memchr), one that is neither 0x00 nor 0xff:
  // most memory is those, and each hit costs a comparison here.
  let anchor = 0;
  while (anchor < 31 && (at(anchor) === 0 || at(anchor) === 0xff)) anchor++;
  const needle = at(anchor);
  const found = [];
  const serialized = [];
  const chunk = Buffer.allocUnsafeSlow(1 << 20);
  const edge = Buffer.allocUnsafeSlow(34);
  const fd = openSync('/proc/self/mem', 'r');
  let scanned = 0;
  /** Whether the key starts at `address`, and whether 'B' 0x20 come before it (read on their own). */
  const keyAt = (address) => {
    try {
      if (readSync(fd, edge, 0, 34, address - 2n) < 34) return { hit: false };
      let j = 0;
      while (j < 32 && edge[j + 2] === at(j)) j++;
      return { hit: j === 32, inMessage: edge[0] === 0x42 && edge[1] === 0x20 };
    } catch {
      return { hit: false };
    } finally {
      edge.fill(0);
    }
  };
  try {
    for (const line of readFileSync('/proc/self/maps', 'utf8').split('\n')) {
      const [range, perms, , , , path = ''] = line.trim().split(/\s+/);
      if (!range || !perms.startsWith('r') || perms[3] !== 'p') continue;
      // Mapped files (code, data read from disk) hold nothing this process computed; special
      // mappings ([vvar], [vsyscall]) cannot be read.
      if (path && !path.startsWith('[heap') && !path.startsWith('[anon') && !path.startsWith('[stack')) continue;
      const [start, end] = range.split('-').map((h) => BigInt(`0x${h}`));
      for (let from = start; from < end; from += BigInt(chunk.length)) {
        const length = Number(end - from < BigInt(chunk.length) ? end - from : BigInt(chunk.length));
        let read = 0;
        try {
          read = readSync(fd, chunk, 0, length, from);
        } catch {
          break; // an unreadable range
        }
        scanned += read;
        for (let i = chunk.indexOf(needle); i !== -1 && i < read; i = chunk.indexOf(needle, i + 1)) {
          const s = i - anchor;
          let hit;
          if (s < 2 || s + 32 > read) {
            hit = keyAt(from + BigInt(s));
          } else {
            let j = 0;
            while (j < 32 && chunk[s + j] === at(j)) j++;
            hit = { hit: j === 32, inMessage: chunk[s - 2] === 0x42 && chunk[s - 1] === 0x20 };
          }
          if (hit.hit) {
            const address = `0x${(from + BigInt(s)).toString(16)}`;
            found.push(address);
            if (hit.inMessage) serialized.push(address);
          }
        }
        // This buffer holds what it read: zeroed, so that a later read of its own pages cannot
        // find a key it copied.
        chunk.fill(0);
      }
    }
  } finally {
    closeSync(fd);
  }
  return { found, serialized, scanned };
}

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
  const starter = await createStarter(p, { workers: 3 });
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
