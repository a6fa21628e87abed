// @ts-nocheck
// A scan of this process's own memory for a key, for the tests that look for copies of one
// (shard-key.test.js: in serialized messages; key-copies.test.js: anywhere).
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';

/** Whether this system lets a process read its own memory (/proc/self/maps and /proc/self/mem). */
export function canScan() {
  try {
    readFileSync('/proc/self/maps');
    closeSync(openSync('/proc/self/mem', 'r'));
    return true;
  } catch {
    return false;
  }
}

/**
 * Two shares whose XOR is a fresh random 32-byte key, and the key itself in a buffer apart from
 * the JS heap (`new ArrayBuffer`: the garbage collector never moves it, so `fill(0)` wipes the
 * only copy), for a test that must hold no copy of a key but what it wipes.
 */
export function keyShares() {
  const shareA = crypto.getRandomValues(new Uint8Array(32));
  const shareB = crypto.getRandomValues(new Uint8Array(32));
  const key = new Uint8Array(new ArrayBuffer(32));
  for (let i = 0; i < 32; i++) key[i] = shareA[i] ^ shareB[i];
  return { shareA, shareB, key };
}

/**
 * Where `key` (given as two shares whose XOR it is, so that this test holds no copy of it)
 * occurs in what this process can read of its own memory (/proc/self/mem: every readable
 * private mapping not backed by a file): the addresses, those of them inside a structured
 * clone's serialization of a 32-byte ArrayBuffer (V8 writes one as 'B', its length 0x20, its
 * bytes), and the bytes scanned.
 *
 * @param {Uint8Array} shareA @param {Uint8Array} shareB
 * @returns {{ found: string[], serialized: string[], scanned: number }}
 */
export function scanForKey(shareA, shareB) {
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
