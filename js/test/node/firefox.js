// Headless Firefox for tests: Debian's /usr/bin/firefox-esr driven over WebDriver BiDi by
// puppeteer-core. Not playwright-core: its Firefox is a patched build that speaks Juggler
// (`-juggler-pipe`), which a stock Firefox ignores and exits at once, and the patched build is a
// download this machine kind cannot make.
//
// Each page gets a fresh folder (removed on close) holding its profile and the $HOME Firefox
// sees, so no earlier run's profile lock, session or first-run state can reach it, and Firefox's
// refusal to run as root under a $HOME another user owns cannot either. puppeteer writes the
// prefs that turn off first-run pages, updates, telemetry and other background traffic into the
// profile. Headless needs no display.
import puppeteer from 'puppeteer-core';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { contentProcesses } from './processes.js';

export const FIREFOX = process.env.LOCKSTEP_FIREFOX ?? '/usr/bin/firefox-esr';

/**
 * A launched browser and its page; `close()` ends both and removes the profile. `webProcesses()`
 * lists Firefox's content processes (where the page and its workers run) with their peak resident
 * bytes: Firefox has no performance.memory, so a test bounds what they held instead.
 */
export async function openPage() {
  const folder = mkdtempSync(join(tmpdir(), 'lockstep-firefox-'));
  const profile = join(folder, 'profile');
  const home = join(folder, 'home');
  mkdirSync(profile);
  mkdirSync(home);
  let browser;
  try {
    browser = await puppeteer.launch({
      browser: 'firefox',
      executablePath: FIREFOX,
      headless: true,
      // Each test bounds its own hang (test/bounded.js); puppeteer's protocol default of 180 s
      // would cut one long evaluate short (the largest set's round is one call of many minutes).
      protocolTimeout: 1_800_000,
      userDataDir: profile,
      env: { ...process.env, HOME: home, MOZ_CRASHREPORTER_DISABLE: '1' },
      extraPrefsFirefox: {
        'browser.shell.checkDefaultBrowser': false,
        'datareporting.policy.dataSubmissionEnabled': false,
        'toolkit.telemetry.reportingpolicy.firstRun': false,
      },
    });
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
  // The tab Firefox opened (about:blank): one tab, in the foreground, so no background-tab
  // timer throttling applies to it.
  const page = (await browser.pages())[0] ?? (await browser.newPage());
  const problems = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  const root = browser.process()?.pid;
  return {
    page,
    problems,
    webProcesses: () => (root === undefined ? [] : contentProcesses(root, ['Isolated Web Co', 'Web Content'])),
    close: async () => {
      await browser.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}
