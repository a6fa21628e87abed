// A static file server on 127.0.0.1 for the package folder (js/), for tests and benches in a
// browser: module scripts and .wasm need http(s), not file:. Pages are cross-origin isolated
// (COOP and COEP headers on every file), so they and their workers have SharedArrayBuffer, which
// the scenarios use to hold a worker at a chosen point.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ISOLATED = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-embedder-policy': 'require-corp',
};

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
};

/** Where `/peers/psi.js/` is served from: the peer package scripts/install-peers installs. */
const PSI_JS = fileURLToPath(new URL('../../../peers/node_modules/@openmined/psi.js', import.meta.url));

/**
 * Serves `root` (a folder path), and @openmined/psi.js under `/peers/psi.js/` (pages that run
 * a round against the peer); resolves with { url, close }.
 */
export async function serve(root = fileURLToPath(new URL('../../', import.meta.url))) {
  const server = createServer(async (request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url, 'http://x').pathname));
    const peer = path.startsWith('/peers/psi.js/');
    const base = peer ? PSI_JS : root;
    const file = peer ? PSI_JS + path.slice('/peers/psi.js'.length) : root + path;
    if (!file.startsWith(base) || path.split(sep).includes('..')) {
      response.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      response.writeHead(200, { ...ISOLATED, 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      response.end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
