#!/usr/bin/env node
// A static file server on 127.0.0.1 for lockstep's pages: the demo (web/index.html) and its
// bench (web/bench.html) with the npm package they import (js/src, js/wasm), and
// @openmined/psi.js under /peers/psi.js/ for the bench. Nothing to build beyond the project's
// setup (the wasm builds in js/wasm/, the peers in peers/).
//
//   node web/serve.js [--port 8765]     then open http://127.0.0.1:8765/web/
//
// The pages need no cross-origin isolation (no SharedArrayBuffer: the PSI workers talk over
// MessageChannels); the package's test pages ask for it (`isolated`), as their scenarios hold
// workers with Atomics.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, normalize, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ISOLATED = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
};

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.csv': 'text/csv; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** The repository's root: what the demo's pages are served from. */
export const REPO = fileURLToPath(new URL('../', import.meta.url));

/** Where `/peers/psi.js/` is served from: the peer package scripts/install-peers installs. */
const PSI_JS = fileURLToPath(new URL('../peers/node_modules/@openmined/psi.js', import.meta.url));

/**
 * Serves `root` (a folder path) and @openmined/psi.js under `/peers/psi.js/` on 127.0.0.1:`port`
 * (0: any free port), with COOP and COEP headers when `isolated`; resolves with { url, close }.
 * Paths outside the root are refused.
 *
 * @param {{ root?: string, isolated?: boolean, port?: number }} [options]
 */
export async function serveStatic({ root = REPO, isolated = false, port = 0 } = {}) {
  const headers = isolated ? ISOLATED : {};
  const base = root.endsWith(sep) ? root.slice(0, -1) : root;
  const server = createServer(async (request, response) => {
    let path;
    try {
      path = normalize(decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname));
    } catch {
      response.writeHead(400).end();
      return;
    }
    if (path.endsWith('/')) path += 'index.html';
    const peer = path.startsWith('/peers/psi.js/');
    const from = peer ? PSI_JS : base;
    const file = peer ? PSI_JS + path.slice('/peers/psi.js'.length) : base + path;
    if (!file.startsWith(from) || path.split(sep).includes('..')) {
      response.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      response.writeHead(200, { ...headers, 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      response.end(body);
    } catch {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end(`not found: ${path}\n`);
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  return {
    url: `http://127.0.0.1:${bound}/`,
    close: () => new Promise((resolve) => server.close(resolve)),
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
