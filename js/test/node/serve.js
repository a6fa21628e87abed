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

/** Serves `root` (a folder path); resolves with { url, close }. */
export async function serve(root = fileURLToPath(new URL('../../', import.meta.url))) {
  const server = createServer(async (request, response) => {
    const path = normalize(decodeURIComponent(new URL(request.url, 'http://x').pathname));
    const file = root + path;
    if (!file.startsWith(root) || path.split(sep).includes('..')) {
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
