// A static file server on 127.0.0.1 for the package folder (js/), for tests and benches in a
// browser: module scripts and .wasm need http(s), not file:. Pages are cross-origin isolated
// (COOP and COEP headers on every file), so they and their workers have SharedArrayBuffer, which
// the scenarios use to hold a worker at a chosen point. The server is web/serve.js's.
import { fileURLToPath } from 'node:url';
import { PSI_JS, serveStatic } from '../../../web/serve.js';

const at = (path) => fileURLToPath(new URL(`../../${path}`, import.meta.url));

/**
 * What the package's test and bench pages load (test/browser/, bench/*.html): the sources, the
 * wasm builds, the tests (scenarios, fixtures, the plan cases in test/artifacts/), the benches,
 * and @openmined/psi.js under `/peers/psi.js/`; not js/node_modules/ nor the package's files.
 */
export const PACKAGE_PAGES = Object.freeze({
  '/src/': at('src/'),
  '/wasm/': at('wasm/'),
  '/test/': at('test/'),
  '/bench/': at('bench/'),
  '/peers/psi.js/': PSI_JS,
});

/**
 * Serves the package's pages (PACKAGE_PAGES), or `root` (a folder path) whole, cross-origin
 * isolated; resolves with { url, close }.
 *
 * @param {string} [root]
 */
export function serve(root) {
  return serveStatic(root === undefined ? { roots: PACKAGE_PAGES, isolated: true } : { root, isolated: true });
}
