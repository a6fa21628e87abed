// web/serve.js against hostile requests (issue 28): it serves what the pages load and nothing
// else of the repository (.git, Cargo.toml, crates/), refuses dot segments, NUL, backslashes and
// encoded separators, follows no symlink out of a served folder, answers only requests whose
// Host is the bound address (a page elsewhere rebinding its name to 127.0.0.1 reads nothing),
// only GET and HEAD, and says nosniff on every response; the demo's and the package's pages
// still get every module they import. Talks to 127.0.0.1 only; every request is bounded.
import { after, before, test } from '../bounded.js';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { REPO, serveStatic } from '../../../web/serve.js';
import { serve } from './serve.js';

const TIMEOUT = 5_000;
const JS = fileURLToPath(new URL('../../', import.meta.url));
const PSI_JS = fileURLToPath(new URL('../../../peers/node_modules/@openmined/psi.js/', import.meta.url));

/**
 * One request to 127.0.0.1:`port`, with `host` as its Host header (the bound address unless
 * given); resolves with { status, headers, body }.
 *
 * @param {string} url the server's url
 * @param {string} path the request target, sent as is
 * @param {{ method?: string, host?: string }} [options]
 * @returns {Promise<{ status: number, headers: import('node:http').IncomingHttpHeaders, body: Buffer }>}
 */
function get(url, path, { method = 'GET', host } = {}) {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      { host: '127.0.0.1', port, method, path, agent: false, timeout: TIMEOUT, headers: { host: host ?? `127.0.0.1:${port}` } },
      (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer to ${method} ${path} in ${TIMEOUT} ms`)));
    request.on('error', reject);
    request.end();
  });
}

/** `text` written as is to 127.0.0.1:`port`; resolves with what came back, as text. */
function raw(url, text) {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let answer = '';
    socket.setTimeout(TIMEOUT, () => socket.destroy(new Error(`no end of the answer in ${TIMEOUT} ms`)));
    socket.on('data', (chunk) => (answer += chunk));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.end(text);
  });
}

/** The status of a raw answer, and whether it says nosniff. */
const rawStatus = (answer) => ({
  status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1]),
  nosniff: /^x-content-type-options: nosniff\r$/im.test(answer),
});

/**
 * Every module and script the pages `starts` load, as the browser would ask for them: HTML
 * script srcs, stylesheets, inline and file modules' static imports, and worker URLs made with
 * `new URL('./…', import.meta.url)`; fetched from the server, each must be 200. Resolves with
 * the paths fetched.
 *
 * @param {string} url
 * @param {string[]} starts
 */
async function crawl(url, starts) {
  const seen = new Set();
  const queue = [...starts];
  const failures = [];
  while (queue.length > 0 && seen.size < 1_000) {
    const path = /** @type {string} */ (queue.shift());
    if (seen.has(path)) continue;
    seen.add(path);
    const { status, headers, body } = await get(url, path);
    if (status !== 200) {
      failures.push(`${path}: ${status}`);
      continue;
    }
    assert.equal(headers['x-content-type-options'], 'nosniff', path);
    const text = body.toString('utf8');
    const found = [];
    if (path.endsWith('.html') || path.endsWith('/')) {
      for (const m of text.matchAll(/<(?:script|link)\b[^>]*?\b(?:src|href)="([^"#?]+)"/g)) {
        if (!/^[a-z]+:/.test(m[1])) found.push(m[1].startsWith('/') ? m[1] : `./${m[1]}`); // a URL, not a specifier
      }
    }
    if (path.endsWith('.html') || path.endsWith('/') || path.endsWith('.js')) {
      for (const m of text.matchAll(/(?:^|[\s;}])(?:import|export)\s+(?:[\w*{}\s,$]+?\s+from\s+)?['"]([^'"]+)['"]/g)) found.push(m[1]);
      for (const m of text.matchAll(/new URL\(\s*['"](\.{1,2}\/[^'"]+\.js)['"],\s*import\.meta\.url\s*\)/g)) found.push(m[1]);
    }
    for (const specifier of found) {
      if (!/^(\.{1,2}\/|\/)/.test(specifier)) continue; // bare (node:…) or absolute URLs
      const next = new URL(specifier, new URL(path, url)).pathname;
      if (!seen.has(next)) queue.push(next);
    }
  }
  assert.deepEqual(failures, [], 'every module the pages load is served');
  return seen;
}

let demo; // the README's server: PAGES
let pkg; // the package's test pages: test/node/serve.js
let folder; // a temporary folder with symlinks in and out of it
let served; // the folder's "served" subfolder, served whole (`root`)

before(async () => {
  folder = mkdtempSync(join(tmpdir(), 'lockstep-serve-'));
  const inside = join(folder, 'served');
  const outside = join(folder, 'outside');
  mkdirSync(join(inside, 'sub'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(inside, 'ok.txt'), 'inside\n');
  writeFileSync(join(inside, 'index.html'), '<!doctype html><title>inside</title>\n');
  writeFileSync(join(outside, 'secret.txt'), 'SECRET\n');
  symlinkSync('ok.txt', join(inside, 'same.txt')); // inside to inside: served
  symlinkSync('../ok.txt', join(inside, 'sub', 'up.txt')); // inside to inside: served
  symlinkSync('../outside/secret.txt', join(inside, 'out.txt')); // relative, out
  symlinkSync(join(outside, 'secret.txt'), join(inside, 'abs.txt')); // absolute, out
  symlinkSync('../outside', join(inside, 'outdir')); // a folder out
  symlinkSync(REPO, join(inside, 'repo')); // the repository
  symlinkSync('/etc/passwd', join(inside, 'passwd'));
  symlinkSync('served', join(folder, 'link')); // the served folder itself through a symlink
  served = inside;
  demo = await serveStatic();
  pkg = await serve();
});

after(async () => {
  await demo?.close();
  await pkg?.close();
  if (folder) rmSync(folder, { recursive: true, force: true });
});

test('the repository beyond what the pages load is not served: .git, Cargo.toml, crates/, scripts/, js/ beyond src and wasm', { timeout: 30_000 }, async () => {
  const refused = [
    '/.git/config',
    '/.git/HEAD',
    '/.git/',
    '/Cargo.toml',
    '/Cargo.lock',
    '/README.md',
    '/crates/psi/Cargo.toml',
    '/crates/psi/src/lib.rs',
    '/crates/',
    '/scripts/test',
    '/peers/package.json',
    '/peers/make-vectors.py',
    '/js/package.json',
    '/js/test/node/serve.js',
    '/js/bench/psi.js',
    '/js/node_modules/.package-lock.json',
    '/target/debug/lockstep',
    '/',
    '/index.html',
  ];
  for (const path of refused) {
    const { status, headers, body } = await get(demo.url, path);
    assert.ok(status === 404 || status === 400, `${path}: ${status}`);
    assert.equal(headers['x-content-type-options'], 'nosniff', path);
    assert.doesNotMatch(body.toString(), /\[core\]|\[workspace\]|\[package\]|ref: refs/, path);
  }
  // Nor through the package's test server: its folder's own files and node_modules/.
  for (const path of ['/package.json', '/package-lock.json', '/README.md', '/node_modules/.package-lock.json', '/tsconfig.json', '/../Cargo.toml']) {
    const { status } = await get(pkg.url, path);
    assert.ok(status === 404 || status === 400, `package server ${path}: ${status}`);
  }
});

test('dot segments, NUL, backslashes, encoded separators and absolute targets are refused (400)', { timeout: 30_000 }, async () => {
  const hostile = [
    '/web/../Cargo.toml',
    '/web/../.git/config',
    '/js/src/../../Cargo.toml',
    '/web/%2e%2e/Cargo.toml',
    '/web/%2E%2E/.git/config',
    '/web%2f..%2fCargo.toml',
    '/web/..%2fCargo.toml',
    '/web/..%2FCargo.toml',
    '/web/..%5cCargo.toml',
    '/web/..\\Cargo.toml',
    '/web/index.html%00.js',
    '/web/%00',
    '/web/./index.html',
    '//web/index.html',
    '/web//index.html',
    '/web/%',
    '/web/%zz',
    '/peers/psi.js/../../package.json',
    '/peers/psi.js/.npmignore',
    'http://evil.example/web/index.html',
    `${demo.url}web/index.html`,
  ];
  for (const path of hostile) {
    const { status, headers, body } = await get(demo.url, path);
    assert.equal(status, 400, path);
    assert.equal(headers['x-content-type-options'], 'nosniff', path);
    assert.doesNotMatch(body.toString(), /\[workspace\]|\[core\]/, path);
  }
  const long = await get(demo.url, `/web/${'a'.repeat(5_000)}`);
  assert.equal(long.status, 414);
  assert.equal(long.headers['x-content-type-options'], 'nosniff');
});

test('a symlink out of a served folder is refused, one inside it is followed', { timeout: 30_000 }, async () => {
  for (const root of [served, join(folder, 'link')]) {
    const server = await serveStatic({ root });
    try {
      for (const [path, body] of [['/ok.txt', 'inside\n'], ['/same.txt', 'inside\n'], ['/sub/up.txt', 'inside\n']]) {
        const answer = await get(server.url, path);
        assert.equal(answer.status, 200, path);
        assert.equal(answer.body.toString(), body, path);
      }
      assert.equal((await get(server.url, '/')).status, 200, 'the folder\'s index.html');
      for (const path of ['/out.txt', '/abs.txt', '/outdir/secret.txt', '/outdir/', '/repo/Cargo.toml', '/repo/web/index.html', '/passwd']) {
        const { status, headers, body } = await get(server.url, path);
        assert.equal(status, 404, `${path}: ${status}`);
        assert.equal(headers['x-content-type-options'], 'nosniff', path);
        assert.doesNotMatch(body.toString(), /SECRET|root:|\[workspace\]/, path);
      }
    } finally {
      await server.close();
    }
  }
});

test('only the bound address is accepted as Host (DNS rebinding), and a request without one is refused (421)', { timeout: 30_000 }, async () => {
  const { port } = new URL(demo.url);
  for (const host of ['127.0.0.1', 'localhost']) {
    const { status } = await get(demo.url, '/web/index.html', { host: `${host}:${port}` });
    assert.equal(status, 200, host);
  }
  const wrong = [
    `evil.example:${port}`,
    'evil.example',
    `127.0.0.1.evil.example:${port}`,
    `rebind.127.0.0.1.nip.io:${port}`,
    '127.0.0.1',
    `127.0.0.1:${Number(port) === 65535 ? 1 : Number(port) + 1}`,
    `0.0.0.0:${port}`,
    `[::1]:${port}`,
    `127.0.0.2:${port}`,
  ];
  for (const host of wrong) {
    for (const path of ['/web/index.html', '/.git/config']) {
      const { status, headers, body } = await get(demo.url, path, { host });
      assert.equal(status, 421, `${host} ${path}`);
      assert.equal(headers['x-content-type-options'], 'nosniff', host);
      assert.doesNotMatch(body.toString(), /<!doctype|\[core\]/i, host);
    }
  }
  // HTTP/1.0 without Host, HTTP/1.1 without Host, and two Hosts (the bound one first).
  for (const text of [
    'GET /web/index.html HTTP/1.0\r\n\r\n',
    'GET /web/index.html HTTP/1.1\r\nconnection: close\r\n\r\n',
    `GET /web/index.html HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nhost: evil.example:${port}\r\nconnection: close\r\n\r\n`,
  ]) {
    const answer = await raw(demo.url, text);
    const { status, nosniff } = rawStatus(answer);
    assert.ok(status === 421 || status === 400, `${JSON.stringify(text)}: ${answer.slice(0, 80)}`);
    assert.ok(nosniff, JSON.stringify(text));
    assert.doesNotMatch(answer, /<!doctype/i);
  }
});

test('only GET and HEAD (405); HEAD says the length and sends no body', { timeout: 30_000 }, async () => {
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE']) {
    const { status, headers } = await get(demo.url, '/web/index.html', { method });
    assert.equal(status, 405, method);
    assert.equal(headers.allow, 'GET, HEAD', method);
    assert.equal(headers['x-content-type-options'], 'nosniff', method);
  }
  const head = await get(demo.url, '/web/index.html', { method: 'HEAD' });
  assert.equal(head.status, 200);
  assert.equal(head.body.length, 0);
  assert.equal(Number(head.headers['content-length']), readFileSync(join(REPO, 'web/index.html')).length);
  // A request with a body is not a page's.
  const answer = rawStatus(await raw(demo.url, `GET /web/index.html HTTP/1.1\r\nhost: 127.0.0.1:${new URL(demo.url).port}\r\ncontent-length: 3\r\nconnection: close\r\n\r\nabc`));
  assert.equal(answer.status, 400);
  assert.ok(answer.nosniff);
  // What the parser refuses is answered with nosniff too.
  const garbage = rawStatus(await raw(demo.url, 'NOT HTTP AT ALL\r\n\r\n'));
  assert.equal(garbage.status, 400);
  assert.ok(garbage.nosniff);
});

test('every response says nosniff: 200, 301, 400, 404, 405, 421, on both servers', { timeout: 30_000 }, async () => {
  const { port } = new URL(demo.url);
  const cases = [
    [demo, '/web/', {}, 200],
    [demo, '/web', {}, 301],
    [demo, '/js/src/index.js', {}, 200],
    [demo, '/web/../x', {}, 400],
    [demo, '/web/missing.html', {}, 404],
    [demo, '/web/index.html', { method: 'POST' }, 405],
    [demo, '/web/index.html', { host: `evil.example:${port}` }, 421],
    [pkg, '/test/browser/index.html', {}, 200],
    [pkg, '/missing', {}, 404],
  ];
  for (const [server, path, options, expected] of cases) {
    const { status, headers } = await get(server.url, path, options);
    assert.equal(status, expected, path);
    assert.equal(headers['x-content-type-options'], 'nosniff', `${path} ${status}`);
    if (server === pkg) {
      assert.equal(headers['cross-origin-opener-policy'], 'same-origin', path);
      assert.equal(headers['cross-origin-embedder-policy'], 'require-corp', path);
    }
  }
  assert.equal((await get(demo.url, '/web')).headers.location, '/web/');
});

test('the demo and bench pages still get everything they load, with its type', { timeout: 60_000 }, async () => {
  const seen = await crawl(demo.url, ['/web/', '/web/index.html', '/web/bench.html']);
  for (const path of ['/web/style.css', '/web/demo.js', '/web/bench.js', '/js/src/index.js', '/js/src/psi/worker.js', '/js/src/plan/worker.js', '/js/bench/psi-steps.js']) {
    assert.ok(seen.has(path), `${path} is among what the pages load`);
  }
  const index = await get(demo.url, '/web/');
  assert.equal(index.headers['content-type'], 'text/html; charset=utf-8');
  assert.deepEqual(index.body, readFileSync(join(REPO, 'web/index.html')));
  const module = await get(demo.url, '/js/src/index.js');
  assert.equal(module.headers['content-type'], 'text/javascript; charset=utf-8');
  assert.deepEqual(module.body, readFileSync(join(JS, 'src/index.js')));
  if (existsSync(join(PSI_JS, 'psi_wasm_web.js'))) {
    const psi = await get(demo.url, '/peers/psi.js/psi_wasm_web.js');
    assert.equal(psi.status, 200);
    assert.equal(psi.headers['content-type'], 'text/javascript; charset=utf-8');
  }
  for (const flavour of ['scalar', 'simd']) {
    if (!existsSync(join(JS, 'wasm', flavour, 'lockstep_wasm_bg.wasm'))) continue;
    for (const [file, type] of [['lockstep_wasm.js', 'text/javascript; charset=utf-8'], ['lockstep_wasm_bg.wasm', 'application/wasm']]) {
      const { status, headers, body } = await get(demo.url, `/js/wasm/${flavour}/${file}`);
      assert.equal(status, 200, file);
      assert.equal(headers['content-type'], type, file);
      assert.deepEqual(body, readFileSync(join(JS, 'wasm', flavour, file)), file);
    }
  }
});

test("the package's test and bench pages still get everything they load", { timeout: 60_000 }, async () => {
  const pages = ['/test/browser/index.html', '/test/browser/plan.html', '/bench/browser.html', '/bench/plan.html', '/bench/psi.html', '/bench/psi-memory.html'];
  const seen = await crawl(pkg.url, pages);
  for (const path of ['/test/scenarios/index.js', '/src/index.js', '/test/plan-check.js', '/bench/noop-worker.js']) {
    assert.ok(seen.has(path), `${path} is among what the pages load`);
  }
  // The scenarios' fixtures load by a URL made at run time.
  assert.equal((await get(pkg.url, '/test/fixtures/ops.js')).status, 200);
  if (existsSync(join(PSI_JS, 'psi_wasm_web.js'))) assert.equal((await get(pkg.url, '/peers/psi.js/psi_wasm_web.js')).status, 200);
  if (existsSync(join(JS, 'wasm/simd/lockstep_wasm_bg.wasm'))) {
    const wasm = await get(pkg.url, '/wasm/simd/lockstep_wasm_bg.wasm');
    assert.equal(wasm.status, 200);
    assert.equal(wasm.headers['content-type'], 'application/wasm');
  }
});
