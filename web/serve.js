#!/usr/bin/env node
// A static file server on 127.0.0.1 for lockstep's pages: the demo (web/index.html) and its
// bench (web/bench.html) with the npm package they import (js/src, js/wasm), and
// @openmined/psi.js under /peers/psi.js/ for the bench. Nothing to build beyond the project's
// setup (the wasm builds in js/wasm/, the peers in peers/).
//
//   node web/serve.js [--port 8765]     then open http://127.0.0.1:8765/web/
//
// It serves what the pages load and nothing else of the repository (PAGES: /web/, /js/src/,
// /js/wasm/, /js/bench/psi-steps.js, /peers/psi.js/; no .git, no sources, no dotfiles). Each
// file is opened by its real path and served only inside the real path of its folder, so a
// symlink out of a served folder is not followed out of it. Only GET and HEAD, only with the
// bound address as Host (127.0.0.1:PORT, or localhost:PORT), so a page elsewhere that rebinds
// its own name to 127.0.0.1 cannot read it; every response says nosniff.
//
// The pages need no cross-origin isolation (no SharedArrayBuffer: the PSI workers talk over
// MessageChannels); the package's test pages ask for it (`isolated`), as their scenarios hold
// workers with Atomics.
import { createServer } from 'node:http';
import { constants } from 'node:fs';
import { open, realpath } from 'node:fs/promises';
import { extname, join, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ISOLATED = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
};

/** On every response: no sniffing, and no reads of ours by pages of other origins. */
const ALWAYS = {
  'x-content-type-options': 'nosniff',
  'cross-origin-resource-policy': 'same-origin',
};

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.wasm': 'application/wasm',
  '.csv': 'text/csv; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** The longest request target served (path and query); longer ones are answered 414. */
const MAX_TARGET = 2_048;

/** The repository's root. */
export const REPO = fileURLToPath(new URL('../', import.meta.url));

/** Where `/peers/psi.js/` is served from: the peer package scripts/install-peers installs. */
export const PSI_JS = fileURLToPath(new URL('../peers/node_modules/@openmined/psi.js/', import.meta.url));

/**
 * What the demo and bench pages load, and nothing else: request path prefix (ending in `/`: a
 * folder) or exact path (a file) to where it is on disk.
 * - /web/: the pages themselves (index.html, bench.html, their scripts and style.css).
 * - /js/src/: the npm package's sources the pages import (demo.js, bench.js), with its workers
 *   (psi/worker.js, plan/worker.js) that load by URL relative to the sources.
 * - /js/wasm/: the wasm builds src/engines/wasm.js fetches from the package's `wasm/{scalar,simd}/`.
 * - /js/bench/psi-steps.js: the one bench module web/bench.js imports (the measures it shares
 *   with the package's own bench), not the rest of js/bench/.
 * - /peers/psi.js/: @openmined/psi.js's web build, the bench page's peer (psi_wasm_web.js).
 * The built-in sample data is made by the engine in a worker: no data file is served.
 */
export const PAGES = Object.freeze({
  '/web/': fileURLToPath(new URL('./', import.meta.url)),
  '/js/src/': fileURLToPath(new URL('../js/src/', import.meta.url)),
  '/js/wasm/': fileURLToPath(new URL('../js/wasm/', import.meta.url)),
  '/js/bench/psi-steps.js': fileURLToPath(new URL('../js/bench/psi-steps.js', import.meta.url)),
  '/peers/psi.js/': PSI_JS,
});

/**
 * The route of `path` (decoded, checked) in `routes` (longest prefix first): the folder or file
 * serving it and, for a folder, the path's segments inside it (a last empty one: its
 * index.html); undefined when nothing serves it.
 *
 * @param {[string, string][]} routes
 * @param {string} path
 * @returns {{ target: string, rest?: string[] } | undefined}
 */
function route(routes, path) {
  for (const [prefix, target] of routes) {
    if (!prefix.endsWith('/')) {
      if (path === prefix) return { target };
    } else if (path.startsWith(prefix)) {
      return { target, rest: path.slice(prefix.length).split('/') };
    }
  }
  return undefined;
}

/**
 * The decoded path of a request target, or a status to refuse it with: absolute or
 * authority-form targets, encoded separators (%2F, %5C), backslashes, NUL and other controls,
 * empty, `.` or `..` segments and dotfiles are refused (400; browsers send none of them).
 *
 * @param {string} target
 * @returns {{ path: string, raw: string } | { status: number }}
 */
function decodeTarget(target) {
  if (target.length > MAX_TARGET) return { status: 414 };
  if (!target.startsWith('/')) return { status: 400 };
  const raw = target.split(/[?#]/, 1)[0];
  if (/%2f|%5c|\\/i.test(raw)) return { status: 400 };
  let path;
  try {
    path = decodeURIComponent(raw);
  } catch {
    return { status: 400 };
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(path)) return { status: 400 };
  const segments = path.slice(1).split('/');
  // The last segment may be empty (a folder's index.html), no other.
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    if (segment === '' ? i < segments.length - 1 : segment.startsWith('.')) return { status: 400 };
  }
  return { path, raw };
}

/**
 * Serves `roots` (request path prefix ending in `/` to a folder, or exact path to a file; PAGES
 * by default; `root`, when given instead, is served whole at `/`) on 127.0.0.1:`port` (0: any
 * free port), with COOP and COEP headers when `isolated`; resolves with { url, close }.
 * Only GET and HEAD (405), only with Host the bound address (421), only files whose real path is
 * inside the real path of their root (else 404, as for what no root serves).
 *
 * @param {{ roots?: Record<string, string>, root?: string, isolated?: boolean, port?: number }} [options]
 */
export async function serveStatic({ roots, root, isolated = false, port = 0 } = {}) {
  const table = roots ?? (root !== undefined ? { '/': root } : PAGES);
  for (const prefix of Object.keys(table)) {
    if (!prefix.startsWith('/')) throw new TypeError(`a served prefix starts with /, not ${JSON.stringify(prefix)}`);
  }
  /** @type {[string, string][]} longest prefix first */
  const routes = Object.entries(table).sort(([a], [b]) => b.length - a.length);
  const extra = isolated ? ISOLATED : {};
  /** @type {Set<string> | undefined} the Host values accepted, once bound */
  let hosts;

  /**
   * @param {import('node:http').ServerResponse} response
   * @param {number} status
   * @param {Record<string, string | number>} [headers]
   * @param {string} [text]
   */
  const refuse = (response, status, headers = {}, text = '') => {
    const body = text || `${status}\n`;
    response.writeHead(status, {
      ...ALWAYS,
      ...extra,
      ...headers,
      'content-type': 'text/plain; charset=utf-8',
      'content-length': Buffer.byteLength(body),
    });
    response.end(response.req.method === 'HEAD' ? undefined : body);
  };

  // requireHostHeader off: a request without Host is answered here (421), with our headers.
  const server = createServer({ requireHostHeader: false }, (request, response) => {
    answer(request, response).catch(() => {
      try {
        if (!response.headersSent) refuse(response, 500, { connection: 'close' });
        else response.destroy();
      } catch {
        response.destroy();
      }
    });
  });

  /**
   * @param {import('node:http').IncomingMessage} request
   * @param {import('node:http').ServerResponse} response
   */
  async function answer(request, response) {
    const method = request.method ?? '';
    if (method !== 'GET' && method !== 'HEAD') {
      refuse(response, 405, { allow: 'GET, HEAD', connection: 'close' });
      return;
    }
    // One Host, exactly the bound address: a name rebound to 127.0.0.1 by a page elsewhere
    // arrives with its own name, and without Host (HTTP/1.0) nothing says where it was sent.
    const host = request.headersDistinct.host;
    if (hosts === undefined || host?.length !== 1 || !hosts.has(host[0].toLowerCase())) {
      refuse(response, 421, { connection: 'close' }, 'misdirected: the Host is not this server\'s address\n');
      return;
    }
    if (request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) !== 0) {
      refuse(response, 400, { connection: 'close' });
      return;
    }
    const decoded = decodeTarget(request.url ?? '');
    if ('status' in decoded) {
      refuse(response, decoded.status, { connection: 'close' });
      return;
    }
    const { path, raw } = decoded;
    const found = route(routes, path);
    if (found === undefined) {
      // A served folder asked without its slash: to the folder.
      if (routes.some(([prefix]) => prefix === `${path}/`)) refuse(response, 301, { location: `${raw}/` });
      else refuse(response, 404, {}, `not found: ${path}\n`);
      return;
    }
    let handle;
    try {
      // The real path of the root, then of the file: served only inside the root's.
      const base = await realpath(found.target);
      const { rest } = found;
      const asked = rest === undefined ? base : join(base, ...rest.slice(0, -1), rest[rest.length - 1] || 'index.html');
      const real = await realpath(asked);
      if (real !== base && !real.startsWith(base.endsWith(sep) ? base : base + sep)) throw new Error('outside its root');
      handle = await open(real, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      const stat = await handle.stat();
      if (stat.isDirectory() && !path.endsWith('/')) {
        refuse(response, 301, { location: `${raw}/` });
        return;
      }
      if (!stat.isFile()) throw new Error('not a file');
      response.writeHead(200, {
        ...ALWAYS,
        ...extra,
        'content-type': TYPES[/** @type {keyof TYPES} */ (extname(real))] ?? 'application/octet-stream',
        'content-length': stat.size,
        'cache-control': 'no-cache',
      });
      if (method === 'HEAD' || stat.size === 0) {
        response.end();
        return;
      }
      const stream = handle.createReadStream({ start: 0, end: stat.size - 1, autoClose: true });
      handle = undefined; // the stream closes it
      await pipeline(stream, response).catch(() => response.destroy());
    } catch {
      if (!response.headersSent) refuse(response, 404, {}, `not found: ${path}\n`);
      else response.destroy();
    } finally {
      await handle?.close().catch(() => {});
    }
  }
  // What the parser refuses (a malformed request, a head too large, a timeout), answered with
  // our headers too.
  server.on('clientError', (error, socket) => {
    const code = /** @type {{ code?: string }} */ (error).code;
    const status = code === 'HPE_HEADER_OVERFLOW' ? 431 : code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    if (code !== 'ECONNRESET' && socket.writable && !(/** @type {any} */ (socket))._httpMessage?.headersSent) {
      const head = Object.entries(ALWAYS).map(([name, value]) => `${name}: ${value}\r\n`).join('');
      socket.end(`HTTP/1.1 ${status} ${status === 400 ? 'Bad Request' : status === 431 ? 'Request Header Fields Too Large' : 'Request Timeout'}\r\n${head}connection: close\r\ncontent-length: 0\r\n\r\n`);
    } else {
      socket.destroy();
    }
  });
  // Bounds: a request's head in 10 s and whole in 20 s, few headers, few connections.
  server.headersTimeout = 10_000;
  server.requestTimeout = 20_000;
  server.maxHeadersCount = 100;
  server.maxConnections = 256;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = typeof address === 'object' && address ? address.port : port;
      // localhost too: a name no page can rebind (the resolver's own, RFC 6761), and what one
      // may type for the demo; the browser then connects to 127.0.0.1, all this server binds.
      hosts = new Set([`127.0.0.1:${bound}`, `localhost:${bound}`]);
      if (bound === 80) hosts.add('127.0.0.1').add('localhost');
      resolve(undefined);
    });
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  return {
    url: `http://127.0.0.1:${bound}/`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve(undefined));
        server.closeIdleConnections();
      }),
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { port: { type: 'string', default: '8765' } } });
  const port = Number(values.port);
  if (!(Number.isInteger(port) && port >= 0 && port < 65536)) {
    console.error(`--port must be a port number, not ${values.port}`);
    process.exit(2);
  }
  try {
    const { url } = await serveStatic({ port });
    console.log(`lockstep's demo: ${url}web/  (its bench: ${url}web/bench.html); Ctrl-C stops`);
  } catch (error) {
    console.error(`cannot serve on 127.0.0.1:${port}: ${error instanceof Error ? error.message : error}`);
    process.exit(1);
  }
}
