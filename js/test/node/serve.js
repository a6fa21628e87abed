// A static file server on 127.0.0.1 for the package folder (js/), for tests and benches in a
// browser: module scripts and .wasm need http(s), not file:. Pages are cross-origin isolated
// (COOP and COEP headers on every file), so they and their workers have SharedArrayBuffer, which
// the scenarios use to hold a worker at a chosen point. The server is web/serve.js's.
import { fileURLToPath } from 'node:url';
import { serveStatic } from '../../../web/serve.js';

/**
 * Serves `root` (a folder path, js/ by default) cross-origin isolated, and @openmined/psi.js
 * under `/peers/psi.js/`; resolves with { url, close }.
 */
export function serve(root = fileURLToPath(new URL('../../', import.meta.url))) {
  return serveStatic({ root, isolated: true });
}
