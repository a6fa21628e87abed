// @ts-nocheck
// The scenario of key-copies.test.js, run in a process of its own that the test starts with a
// young generation large enough that no scavenge runs during it (--min-semi-space-size=64): a
// copy of a key left on a JS heap then stays where it was left until the scan, so what the scan
// finds does not depend on when the garbage collector happened to run. Prints one JSON line:
// for each key, the copies a scan of this process's memory finds at each point.
//
//   node --min-semi-space-size=64 test/node/key-copies-run.js native|scalar
import { keyShares, scanForKey } from './key-scan.js';
import { createPsiPool, createStarter, psiRequest } from '../../src/index.js';

const asset = process.argv[2];
if (asset !== 'native' && asset !== 'scalar' && asset !== 'simd') throw new Error(`usage: key-copies-run.js native|scalar|simd, not ${asset}`);

const keys = { alone: keyShares(), sharded: keyShares(), request: keyShares() };
/** The copies a scan finds of each key in `names`. */
const scan = (names = Object.keys(keys)) =>
  Object.fromEntries(names.map((name) => [name, scanForKey(keys[name].shareA, keys[name].shareB).found.length]));

// The control: a key in a small Uint8Array (on V8's heap) whose `.buffer` is read, as a transfer
// list does, and which is then wiped: the bytes V8 left on its heap are found.
const probe = keyShares();
const onHeap = new Uint8Array(32);
onHeap.set(probe.key);
probe.key.fill(0);
void onHeap.buffer;
onHeap.fill(0);
const control = scanForKey(probe.shareA, probe.shareB).found.length;

const p = createPsiPool({ workers: 2, asset, startupTimeout: 20_000 });
const values = Array.from({ length: 3_000 }, (_, i) => `person-${i}@example.org`);
/**
 * A starter with `name`'s key given by the page (createStarter copies it at once; the caller's
 * array, a buffer apart from the heap, is then wiped here), a setup on `workers` workers (on 2,
 * the key crosses to the helper), the key exported (and wiped on arrival), and dispose().
 */
async function starterRound(name, workers) {
  const made = createStarter(p, { key: keys[name].key, shards: workers, shardWait: 10_000 });
  keys[name].key.fill(0);
  const starter = await made;
  await starter.setup(values, { joinerCount: 100 });
  const ran = starter.lastSharding.workers;
  const exported = await starter.exportKey();
  const same = exported.length === 32 && exported.every((b, i) => b === (keys[name].shareA[i] ^ keys[name].shareB[i]));
  exported.fill(0);
  const alive = scan([name])[name];
  await starter.dispose();
  return { workers: ran, exported: same, alive };
}

const alone = await starterRound('alone', 1);
const sharded = await starterRound('sharded', 2);
// A request with a key the page gives (psiRequest copies it at once; the caller's is wiped).
const request = psiRequest(p, { key: keys.request.key, values: values.slice(0, 50) });
keys.request.key.fill(0);
const requested = (await request).length > 0;
const disposed = scan();
await p.close();
const closed = scan();
console.log(JSON.stringify({ asset, control, alone, sharded, requested, disposed, closed }));
