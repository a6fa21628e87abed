// Headless Chromium for tests and benches: Debian's /usr/bin/chromium driven by playwright-core
// (a test tool's own browser download does not work on this machine kind).
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CHROMIUM = process.env.LOCKSTEP_CHROMIUM ?? '/usr/bin/chromium';

/**
 * A launched browser and a fresh page; `close()` ends both and removes the profile. `args`:
 * more command-line flags (the memory bench's).
 */
export async function openPage({ args = [] } = {}) {
  const profile = mkdtempSync(join(tmpdir(), 'lockstep-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...args,
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const problems = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return {
    page,
    problems,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
