// Headless WebKit for tests: Debian's WebKitGTK (package webkit2gtk-driver: WebKitWebDriver, and
// the MiniBrowser libwebkit2gtk-4.1 ships) driven over classic WebDriver by selenium-webdriver.
// Neither playwright-core nor puppeteer-core drives a stock WebKit (playwright's WebKit is a
// patched build this machine kind cannot download), and WebKitGTK's MiniBrowser has no headless
// mode: each page gets its own virtual X display (Xvfb, package xvfb), picked by Xvfb itself
// (-displayfd), so pages in parallel runs never share one.
//
// The page object offers what the browser tests call on playwright's and puppeteer's pages:
// goto, waitForFunction, evaluate, $ (focus, click, press), screenshot and setViewportSize.
// Classic WebDriver has no event for an uncaught page error, so `problems` is filled from a
// collector the page gets after each navigation (errors and unhandled rejections from then on),
// drained after every evaluate: an error thrown while the page's own scripts first run is not
// seen there, but such a page never sets the `ready` flag the tests wait for.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Builder, By, Key } from 'selenium-webdriver';
import { contentProcesses } from './processes.js';

export const WEBKIT_DRIVER = process.env.LOCKSTEP_WEBKIT_DRIVER ?? '/usr/bin/WebKitWebDriver';
export const MINIBROWSER = process.env.LOCKSTEP_MINIBROWSER ?? '/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser';
const XVFB = process.env.LOCKSTEP_XVFB ?? '/usr/bin/Xvfb';

/** How long a page's script may run (a scenario's bound is the test's own, below this). */
const SCRIPT_TIMEOUT_MS = 30 * 60_000;

/**
 * A launched browser and a fresh page; `close()` ends both, the display and the driver.
 * `webProcesses()` lists the page's content processes (WebKitWebProcess, where its scripts and
 * workers run) with their peak resident bytes: WebKit has no performance.memory, so a test bounds
 * what the process held instead.
 */
export async function openPage() {
  const folder = mkdtempSync(join(tmpdir(), 'lockstep-webkit-'));
  const home = join(folder, 'home');
  mkdirSync(home);
  const children = [];
  let driver;
  let driverPid;
  const close = async () => {
    try {
      await driver?.quit();
    } finally {
      for (const child of children.reverse()) child.kill('SIGKILL');
      await Promise.all(children.map((child) => (child.exitCode === null && child.signalCode === null ? new Promise((r) => child.once('exit', r)) : undefined)));
      rmSync(folder, { recursive: true, force: true });
    }
  };
  try {
    const display = await startXvfb(children);
    const port = await freePort();
    // MiniBrowser keeps its caches and data under the XDG folders: fresh ones each page.
    // JSC_useSharedArrayBuffer: Safari gives a cross-origin isolated page SharedArrayBuffer (the
    // test pages are: test/node/serve.js), WebKitGTK keeps it behind this JavaScriptCore option
    // (crossOriginIsolated is true, yet the constructor is hidden and posting shared memory to a
    // worker throws DataCloneError); with it the page has what Safari's has.
    const env = {
      ...process.env,
      DISPLAY: `:${display}`,
      HOME: home,
      XDG_CACHE_HOME: join(home, 'cache'),
      XDG_DATA_HOME: join(home, 'data'),
      XDG_CONFIG_HOME: join(home, 'config'),
      JSC_useSharedArrayBuffer: '1',
    };
    const webDriver = spawn(WEBKIT_DRIVER, [`--port=${port}`, '--host=127.0.0.1'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    children.push(webDriver);
    driverPid = webDriver.pid;
    const stderr = [];
    webDriver.stderr.on('data', (chunk) => stderr.push(chunk));
    const url = `http://127.0.0.1:${port}`;
    await untilReady(url, webDriver, stderr);
    driver = await new Builder()
      .usingServer(url)
      .withCapabilities({
        browserName: 'MiniBrowser',
        'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation'] },
      })
      .build();
    await driver.manage().setTimeouts({ script: SCRIPT_TIMEOUT_MS, pageLoad: 60_000 });
  } catch (error) {
    await close();
    throw error;
  }
  const problems = [];
  const page = pageOf(driver, problems);
  // The driver starts MiniBrowser, which starts them (through bubblewrap where WebKit sandboxes).
  const webProcesses = () => contentProcesses(driverPid, ['WebKitWebProces']);
  return { page, problems, close, webProcesses };
}

/** Starts Xvfb on a display it picks; resolves with the display's number. */
function startXvfb(children) {
  return new Promise((resolve, reject) => {
    const xvfb = spawn(XVFB, ['-displayfd', '3', '-screen', '0', '1280x1024x24', '-nolisten', 'tcp', '-nolisten', 'unix', '-noreset'], {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    });
    children.push(xvfb);
    let said = '';
    const stderr = [];
    xvfb.stderr.on('data', (chunk) => stderr.push(chunk));
    xvfb.stdio[3].on('data', (chunk) => {
      said += chunk;
      if (said.includes('\n')) resolve(Number(said.trim()));
    });
    xvfb.once('error', reject);
    xvfb.once('exit', (code, signal) => reject(new Error(`Xvfb ended (${code ?? signal}) before it named its display: ${Buffer.concat(stderr).toString().slice(-500)}`)));
  });
}

/** A TCP port free on 127.0.0.1 now (the driver binds it a moment later). */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/** Waits until the driver answers /status as ready (at most 20 s), or says why not. */
async function untilReady(url, child, stderr) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`WebKitWebDriver ended (${child.exitCode ?? child.signalCode}): ${Buffer.concat(stderr).toString().slice(-500)}`);
    }
    try {
      const status = await (await fetch(`${url}/status`)).json();
      if (status?.value?.ready) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`WebKitWebDriver did not answer on ${url} within 20 s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What the page gets after each navigation: a collector of uncaught errors. */
const COLLECTOR = `
  if (!window.__lockstepProblems) {
    window.__lockstepProblems = [];
    addEventListener('error', (e) => window.__lockstepProblems.push('page error: ' + (e.message || String(e.error))));
    addEventListener('unhandledrejection', (e) => window.__lockstepProblems.push('page error: ' + String(e.reason && e.reason.message || e.reason)));
  }`;

/** A script that calls `fn` with the first argument, awaits it and hands back its outcome. */
const called = (fn) => `
  const done = arguments[arguments.length - 1];
  Promise.resolve()
    .then(() => (${fn.toString()})(arguments[0]))
    .then((value) => done({ ok: true, value: value === undefined ? null : value }),
          (error) => done({ ok: false, error: String(error && error.stack ? error.name + ': ' + error.message + '\\n' + error.stack : error) }));`;

/** The page API the tests use, over a WebDriver session. */
function pageOf(driver, problems) {
  const drain = async () => {
    const seen = await driver.executeScript('const p = window.__lockstepProblems || []; window.__lockstepProblems = []; return p;');
    if (Array.isArray(seen)) problems.push(...seen);
  };
  const evaluate = async (fn, arg) => {
    const outcome = await driver.executeAsyncScript(called(fn), arg === undefined ? null : arg);
    await drain();
    if (!outcome.ok) throw new Error(`evaluate: ${outcome.error}`);
    return outcome.value;
  };
  return {
    async goto(url) {
      await driver.get(url);
      await driver.executeScript(COLLECTOR);
    },
    evaluate,
    async waitForFunction(fn, { timeout = 30_000 } = {}) {
      const deadline = Date.now() + timeout;
      for (;;) {
        if (await evaluate(fn)) return;
        if (Date.now() > deadline) throw new Error(`waitForFunction: not true within ${timeout} ms: ${fn}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    },
    async $(selector) {
      const element = await driver.findElement(By.css(selector));
      return {
        focus: () => driver.executeScript('arguments[0].focus()', element),
        click: () => element.click(),
        press: (key) => {
          if (key !== 'Enter') throw new Error(`press: only Enter is mapped, not ${key}`);
          return element.sendKeys(Key.ENTER);
        },
      };
    },
    /** The viewport's picture (WebDriver takes no full-page shot). */
    async screenshot({ path }) {
      writeFileSync(path, Buffer.from(await driver.takeScreenshot(), 'base64'));
    },
    /** Resizes the window: the viewport is the window less MiniBrowser's toolbar. */
    async setViewportSize({ width, height }) {
      await driver.manage().window().setRect({ width, height });
    },
  };
}
