// The PSI scenarios on the pool (src/psi/): psiRequest on every engine and with the key's own
// bytes; the two parties of a round against the CLI's files, their keys, their refusals, a party
// lost with its worker, and psi.js's parties against ours. Their steps are sharded as 'auto' (or
// `shards`) gives; shard.js holds the scenarios about the split itself.

import {
  AbortError,
  TaskError,
  PsiError,
  WorkerLostError,
  createJoiner,
  createPsiPool,
  createStarter,
  psiRequest,
  spawnWorker,
} from '../../src/index.js';
import { equal, ok, rejects, sameBytes } from '../assert.js';
import { closed, fromB64, KEYED, psiPool } from './harness.js';

// A spawner that records, for each task it posts, the byte length of the buffer behind its
// input's `key` and of each buffer transferred with it.
function postRecorder() {
  const posts = [];
  const spawn = (url, options) => {
    const handle = spawnWorker(url, options);
    return {
      ...handle,
      post(message, transfer) {
        if (message?.type === 'task') {
          posts.push({
            keyBuffer: message.input?.key?.buffer.byteLength,
            transferred: (transfer ?? []).map((buffer) => buffer.byteLength),
          });
        }
        handle.post(message, transfer);
      },
    };
  };
  return { posts, spawn };
}

// @openmined/psi.js 2.0.6 in this environment: its web build (a classic script, served by
// test/node/serve.js under /peers/psi.js/) in a page, its Node build from peers/ in Node.
async function loadPsiJs(env) {
  if (env.browser) {
    if (!globalThis.PSI) {
      await new Promise((resolve, reject) => {
        const script = document.createElement('script');
        script.src = '/peers/psi.js/psi_wasm_web.js';
        script.onload = resolve;
        script.onerror = () => reject(new Error('cannot load psi.js from /peers/psi.js/'));
        document.head.append(script);
      });
    }
    return globalThis.PSI();
  }
  const { createRequire } = await import('node:module');
  const { pathToFileURL } = await import('node:url');
  const peers = createRequire(new URL('../../../peers/package.json', import.meta.url));
  return (await import(pathToFileURL(peers.resolve('@openmined/psi.js')).href)).default();
}

/** The number of bits set in a byte. @param {number} byte */
const bitCount = (byte) => {
  let n = 0;
  for (let b = byte; b; b &= b - 1) n++;
  return n;
};

// Whether two byte arrays are equal (sameBytes asserts it).
const equalBytes = (a, b) => a.length === b.length && a.every((byte, i) => byte === b[i]);

export const requestScenarios = [
  [
    'PSI request through the pool equals the native CLI on every engine: wasm scalar and simd128, and the addon in Node',
    async (env) => {
      for (const asset of env.browser ? ['scalar', 'simd'] : ['scalar', 'simd', 'native']) {
        const p = createPsiPool({ workers: 2, asset, startupTimeout: 20_000 });
        const reports = [];
        const [reveal, sizeOnly, normalized] = await Promise.all([
          psiRequest(p, { key: env.psi.key, values: env.psi.values }, { onProgress: (r) => reports.push(r.done) }),
          psiRequest(p, { key: env.psi.key, values: env.psi.values, reveal: false }),
          psiRequest(p, { key: env.psi.key, values: env.psi.values, normalize: true }),
        ]);
        sameBytes(reveal, env.psi.request, `${asset}: reveal request`);
        sameBytes(sizeOnly, env.psi.sizeOnly, `${asset}: size-only request`);
        sameBytes(normalized, env.psi.normalized, `${asset}: normalized request`);
        equal(reports.at(-1), env.psi.distinct, 'progress counts distinct keys, to the end');
        ok(env.psi.key.some((byte) => byte !== 0), "the caller's key is untouched");
        await rejects(psiRequest(p, { key: new Uint8Array(32), values: ['a'] }), TaskError, /key/);
        await closed(p);
      }
    },
  ],
  [
    "psiRequest sends the key's own 32 bytes: a Buffer or a view into a larger buffer is neither sent whole nor detached",
    async (env) => {
      const recorder = postRecorder();
      const p = createPsiPool({ workers: 1, asset: 'scalar', startupTimeout: 20_000, spawn: recorder.spawn });
      const values = ['ada@example.org', 'alan@example.org'];
      const expected = await psiRequest(p, { key: env.psi.key.slice(), values });
      // A view whose slice() shares its memory, as Node's Buffer#slice does, inside 8 KiB of other data.
      class SharedSlice extends Uint8Array {
        slice(start, end) {
          return this.subarray(start, end);
        }
      }
      const slab = new SharedSlice(8192).fill(0xa5);
      slab.set(env.psi.key, 100);
      const keys = [];
      if (globalThis.Buffer) {
        keys.push(['a pooled Buffer (as readFileSync of a key gives)', globalThis.Buffer.from(env.psi.key)]);
        const unpooled = globalThis.Buffer.alloc(32);
        unpooled.set(env.psi.key);
        keys.push(['an unpooled Buffer', unpooled]);
      }
      keys.push(['a view into 8 KiB whose slice() shares it', slab.subarray(100, 132)]);
      for (const [what, key] of keys) {
        const buffer = key.buffer.byteLength;
        sameBytes(await psiRequest(p, { key, values }), expected, `${what}: the request`);
        const post = recorder.posts.at(-1);
        equal(post.keyBuffer, 32, `${what}: the bytes sent as the key`);
        equal(post.transferred[0], 32, `${what}: the buffer moved with the key`);
        equal(key.length, 32, `${what}: the caller's key is not detached`);
        equal(key.buffer.byteLength, buffer, `${what}: nor the buffer it is in`);
        sameBytes(key, env.psi.key, `${what}: the caller's key is untouched`);
      }
      ok(slab.every((byte, i) => (i >= 100 && i < 132) || byte === 0xa5), 'the bytes around the view are untouched');
      await closed(p);
    },
  ],
];

export const partyScenarios = [
  [
    "the two parties of a round, in two workers, give the CLI's bytes in every format and mode",
    async (env) => {
      const r = env.psi.round;
      const p = createPsiPool(psiPool(env));
      const starter = await createStarter(p, { key: fromB64(r.starterKey) });
      const joiner = await createJoiner(p, { key: fromB64(r.joinerKey) });
      const request = await joiner.request(r.joiner, KEYED);
      sameBytes(request, fromB64(r.request), 'the request');
      sameBytes(await joiner.request(new TextEncoder().encode(r.joiner), KEYED), request, 'the rows as bytes');
      const response = await starter.respond(request, { joinerCount: r.joinerCount });
      sameBytes(response, fromB64(r.response), 'the response');
      const setups = {};
      for (const format of ['raw', 'gcs', 'bloom']) {
        const expected = r.formats[format];
        const seen = [];
        setups[format] = await starter.setup(
          r.starter,
          { ...KEYED, joinerCount: r.joinerCount, format },
          { onProgress: ({ done, total }) => seen.push(done <= total) },
        );
        sameBytes(setups[format], fromB64(expected.setup), `the ${format} setup`);
        ok(seen.length > 0 && seen.every(Boolean), `the ${format} setup reported progress`);
        const found = await joiner.intersect(setups[format], response);
        equal(found.size, expected.size, `the ${format} intersection's size`);
        sameBytes(found.rowsFile, fromB64(expected.rows), `the ${format} matched rows`);
        if (format === 'raw') {
          sameBytes(await starter.permutationFile(), fromB64(r.permutation), 'the permutation file');
          sameBytes(found.pairsFile, fromB64(r.pairs), 'the pairs file');
          equal(found.setupPositions.length, found.rows.length, 'a position per matched row');
          const resolved = await starter.resolve(found.pairsFile);
          sameBytes(resolved.file, fromB64(r.resolved), 'the resolved pairs');
          equal(resolved.joinerRows.length, resolved.starterRows.length, 'pairs');
        } else {
          equal(found.pairsFile, undefined, `no pairs after a ${format} setup`);
        }
      }
      const sizeRequest = await joiner.request(r.joiner, { ...KEYED, sizeOnly: true });
      sameBytes(sizeRequest, fromB64(r.requestSize), 'the size-only request');
      const sizeResponse = await starter.respond(sizeRequest, { joinerCount: r.joinerCount, sizeOnly: true });
      sameBytes(sizeResponse, fromB64(r.responseSize), 'the size-only response');
      for (const format of ['raw', 'gcs', 'bloom']) {
        const found = await joiner.intersect(setups[format], sizeResponse);
        equal(found.size, r.formats[format].size, `the size-only ${format} size`);
        equal(found.rows.length, 0, 'no rows');
        equal(found.rowsFile, undefined, 'no rows file');
      }
      await closed(p);
    },
    { engines: true },
  ],
  [
    'a key made in a worker leaves it only through exportKey, and re-imported it masks the same',
    async (env) => {
      const r = env.psi.round;
      const p = createPsiPool(psiPool(env));
      const fresh = await createJoiner(p);
      const other = await createJoiner(p);
      const key = await fresh.exportKey();
      equal(key.length, 32, 'a 32-byte key');
      ok(!equalBytes(key, await other.exportKey()), 'two fresh keys differ');
      const again = await createJoiner(p, { key });
      const values = ['ada@example.org', 'alan@example.org', 'ada@example.org', ''];
      const first = await fresh.request(values);
      sameBytes(await again.request(values), first, 'the re-imported key masks the same');
      ok(!equalBytes(first, await other.request(values)), 'another key masks otherwise');
      // A round of fresh parties finds what the CLI's found.
      const starter = await createStarter(p);
      const setup = await starter.setup(r.starter, { ...KEYED, joinerCount: r.joinerCount });
      const request = await fresh.request(r.joiner, KEYED);
      const found = await fresh.intersect(setup, await starter.respond(request, { joinerCount: r.joinerCount }));
      equal(found.size, r.formats.raw.size, 'the same intersection');
      await fresh.dispose();
      const gone = await rejects(fresh.request(values), PsiError, /no party/);
      equal(gone.code, 'PSI_USAGE');
      await closed(p);
    },
    { engines: true },
  ],
  [
    'bad input to a party is a PsiError with a code, and the party and its worker are kept',
    async (env) => {
      const r = env.psi.round;
      const p = createPsiPool({ ...psiPool(env), workers: 1 });
      const starter = await createStarter(p, { key: fromB64(r.starterKey) });
      const joiner = await createJoiner(p, { key: fromB64(r.joinerKey) });
      const code = async (promise, expected, pattern) => {
        const error = await rejects(promise, PsiError, pattern);
        equal(error.code, expected, error.message);
      };
      for (const key of [new Uint8Array(31).fill(1), new Uint8Array(33).fill(1), new Uint8Array(32)]) {
        await code(createJoiner(p, { key }), 'PSI_KEY');
      }
      await code(joiner.intersect(fromB64(r.formats.raw.setup), fromB64(r.response)), 'PSI_ORDER', /needs a request first/);
      const request = await joiner.request(r.joiner, KEYED);
      const setup = await starter.setup(r.starter, { ...KEYED, joinerCount: r.joinerCount });
      // Messages of the wrong role, and malformed ones, from the page or a peer.
      await code(joiner.intersect(setup, setup), 'PSI_MESSAGE');
      await code(starter.respond(setup, { joinerCount: r.joinerCount }), 'PSI_MESSAGE');
      await code(starter.respond(new Uint8Array([0xff, 0xff, 0xff]), { joinerCount: 5 }), 'PSI_MESSAGE');
      await code(starter.resolve(new TextEncoder().encode('not a pairs file\n')), 'PSI_MESSAGE');
      // An element that is no point: the first element's SEC1 prefix (after its field tag 0x0a
      // and length 33) made 0x05.
      const broken = fromB64(r.response);
      const element = broken.findIndex((byte, i) => byte === 0x0a && broken[i + 1] === 33);
      broken[element + 2] = 0x05;
      await code(joiner.intersect(setup, broken), 'PSI_MESSAGE');
      // Steps of the other role, out of order, over the stated limits.
      const { PsiStarter } = await import('../../src/psi/party.js');
      await code(PsiStarter.prototype.respond.call(joiner, request, { joinerCount: 9 }), 'PSI_WRONG_ROLE', /a joiner cannot respond/);
      await code(starter.respond(request, { joinerCount: r.joinerCount - 1 }), 'PSI_LIMIT');
      await code(joiner.intersect(setup, await starter.respond(request, { joinerCount: r.joinerCount }), { maxSetupBytes: 100 }), 'PSI_LIMIT');
      await code(starter.setup(r.starter, { ...KEYED, joinerCount: r.joinerCount, format: 'gcs', fpr: 1e-300 }), 'PSI_LIMIT');
      await code(starter.setup(r.starter, { ...KEYED, joinerCount: r.joinerCount, format: 'bloom', fpr: 2 }), 'PSI_PARAMS');
      await code(starter.setup(r.starter, { ...KEYED, joinerCount: 0 }), 'PSI_PARAMS');
      await code(starter.setup(r.starter, { columns: 'no such column', joinerCount: 5 }), 'PSI_INPUT', /no column named/);
      await code(starter.setup(['a'], { columns: 'email', joinerCount: 5 }), 'PSI_USAGE');
      await code(starter.setup(r.starter, { ...KEYED, joinerCount: 5, format: 'zip' }), 'PSI_USAGE');
      await rejects(starter.setup(r.starter, { ...KEYED, joinerCount: -1 }), TypeError, /joinerCount/);
      equal(p.stats.terminating, 0, 'no worker was replaced');
      // Both parties still work, on the same worker.
      const response = await starter.respond(request, { joinerCount: r.joinerCount });
      equal((await joiner.intersect(setup, response)).size, r.formats.raw.size, 'a round after the refusals');
      ok(!starter.lost && !joiner.lost, 'nothing lost');
      await closed(p);
    },
    { engines: true },
  ],
  [
    "a party whose worker ends (an aborted step) is lost: its next step rejects with WorkerLostError, never with a new key",
    async (env) => {
      const p = createPsiPool(psiPool(env));
      const joiner = await createJoiner(p);
      const values = Array.from({ length: 20_000 }, (_, i) => `person-${i}@example.org`);
      const controller = new AbortController();
      const running = joiner.request(values, {}, {
        signal: controller.signal,
        onProgress: () => controller.abort(new Error('enough')),
      });
      await rejects(running, AbortError);
      ok(joiner.lost, 'the party is lost');
      const lost = await rejects(joiner.request(['a']), WorkerLostError, /the PSI joiner lived in .*which is gone/);
      equal(lost.code, 'ERR_WORKER_LOST');
      await rejects(joiner.exportKey(), WorkerLostError);
      const other = await createJoiner(p);
      equal((await other.request(['a'])).length > 0, true, 'the pool still makes parties');
      await closed(p);
    },
    { engines: true },
  ],
  [
    "a psi.js party completes a round with our pooled starter, and with our pooled joiner, in the same page",
    async (env) => {
      const psi = await loadPsiJs(env);
      const starterValues = Array.from({ length: 400 }, (_, i) => `person-${i}@example.org`);
      const joinerValues = Array.from({ length: 150 }, (_, i) => `person-${3 * i}@example.org`);
      const expected = joinerValues.map((v, i) => [v, i]).filter(([v]) => starterValues.includes(v)).map(([, i]) => i);
      const p = createPsiPool(psiPool(env));
      // psi.js's client against our starter, every format.
      const starter = await createStarter(p, { shards: 2 });
      const client = psi.client.createWithNewKey(true);
      const request = client.createRequest(joinerValues).serializeBinary();
      const response = await starter.respond(request, { joinerCount: joinerValues.length });
      for (const format of ['raw', 'gcs', 'bloom']) {
        const setup = await starter.setup(starterValues, { joinerCount: joinerValues.length, format });
        const message = psi.serverSetup.deserializeBinary(setup);
        const found = client.getIntersection(message, psi.response.deserializeBinary(response)).sort((a, b) => a - b);
        // A Bloom filter's false positives are one in a billion for this query at the default
        // rate: a mismatch says how full the filter was (one was seen once in CI, 2026-12-01).
        const bloom = format === 'bloom' ? message.getBloomFilter() : undefined;
        const filled = bloom && [...bloom.getBits_asU8()].reduce((n, byte) => n + bitCount(byte), 0);
        equal(
          found.join(','),
          expected.join(','),
          `psi.js's client and our ${format} setup${bloom ? ` (${bloom.getNumHashFunctions()} hash functions, ${filled} of ${8 * bloom.getBits_asU8().length} bits set)` : ''}`,
        );
      }
      // psi.js's server against our joiner.
      const server = psi.server.createWithNewKey(true);
      const joiner = await createJoiner(p, { shards: 2 });
      for (const [name, structure] of [['raw', psi.dataStructure.Raw], ['gcs', psi.dataStructure.GCS]]) {
        const setup = server.createSetupMessage(1e-9, joinerValues.length, starterValues, structure).serializeBinary();
        const ours = await joiner.request(joinerValues);
        const theirs = server.processRequest(psi.request.deserializeBinary(ours)).serializeBinary();
        const found = await joiner.intersect(setup, theirs);
        equal([...found.rows].join(','), expected.join(','), `our joiner and psi.js's ${name} setup`);
      }
      client.delete?.();
      server.delete?.();
      await closed(p);
    },
    { engines: true },
  ],
];
