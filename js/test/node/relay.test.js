// A round through a relay (`lockstep serve`, started here on 127.0.0.1) with the package's
// client (src/relay/client.js): in Node, and in pages of headless Chromium and Firefox, the
// scenario test/scenarios/relay.js gives the CLI's bytes; and the demo page (web/) in its relay
// mode, each pane a party, finds the CLI demo's matches in both browsers. The relay allows the
// test pages' and the demo page's origins (CORS) and nothing else; its log holds no invitation.
import { after, before, test } from '../bounded.js';
import assert from 'node:assert/strict';
import { openPage as openChromium } from './chromium.js';
import { openPage as openFirefox } from './firefox.js';
import { psiRound } from './psi-round.js';
import { startRelay } from './relay.js';
import { serve } from './serve.js';
import { serveStatic } from '../../../web/serve.js';
import { cliDemoFiles, column } from './cli-demo.js';
import { relayScenario } from '../scenarios/relay.js';

const round = psiRound();
const DEMO_ROWS = 1_200;
let pages;
let demoPage;
let relay;
const invitations = [];

before(async () => {
  pages = await serve();
  demoPage = await serveStatic();
  relay = await startRelay({ origins: [new URL(pages.url).origin, new URL(demoPage.url).origin] });
});

after(async () => {
  await relay?.close();
  await pages?.close();
  await demoPage?.close();
  for (const { starter, joiner } of invitations) {
    for (const invitation of [starter, joiner]) {
      assert.ok(!relay.log.includes(invitation.split('.')[1]), 'no token in the relay log');
    }
  }
});

/** A fresh round's env. */
function env() {
  const rounds = relay.invite();
  invitations.push(rounds);
  return { browser: false, psi: { round }, relay: { url: relay.url, ...rounds } };
}

test('node: a round through the relay gives the CLI bytes', { timeout: 120_000 }, () => relayScenario(env()));

for (const [label, openPage] of [
  ['chromium', openChromium],
  ['firefox', openFirefox],
]) {
  test(`${label}: a round through the relay gives the CLI bytes`, { timeout: 180_000 }, async () => {
    const browser = await openPage();
    try {
      await browser.page.goto(`${pages.url}test/browser/index.html`);
      await browser.page.waitForFunction(() => window.ready === true);
      const outcome = await browser.page.evaluate(async (e) => {
        try {
          const { relayScenario: run } = await import('/test/scenarios/relay.js');
          await run({ ...e, browser: true });
          return { ok: true };
        } catch (error) {
          return { ok: false, error: `${error?.name}: ${error?.message}` };
        }
      }, env());
      assert.ok(outcome.ok, outcome.error);
      assert.deepEqual(browser.problems, [], 'no uncaught errors in the page');
    } finally {
      await browser.close();
    }
  });
}

const demo = cliDemoFiles(DEMO_ROWS);

for (const [label, openPage] of [
  ['chromium', openChromium],
  ['firefox', openFirefox],
]) {
  test(`${label}: the demo page's relay mode, each pane a party, finds the CLI demo's matches`, { timeout: 180_000 }, async () => {
    const browser = await openPage();
    try {
      const { page } = browser;
      await page.goto(`${demoPage.url}web/`);
      await page.waitForFunction(() => window.demo?.ready === true);
      const rounds = relay.invite();
      invitations.push(rounds);
      await page.evaluate(
        ({ rows, url, starter, joiner }) => {
          document.querySelector('#rows').value = String(rows);
          document.querySelector('#relay').open = true;
          const fill = (id, value) => {
            const input = document.querySelector(id);
            input.value = value;
            input.dispatchEvent(new Event('input'));
          };
          fill('#relay-url', url);
          fill('#relay-starter', starter);
          fill('#relay-joiner', joiner);
          for (const side of ['#starter', '#joiner']) document.querySelector(`${side} [data-sample]`).click();
        },
        { rows: DEMO_ROWS, url: relay.url, ...rounds },
      );
      // Both panes' samples loaded before the run: in relay mode Run is enabled as soon as one
      // pane is ready, and a run started then runs that pane alone (the cause of this test's
      // hangs in Firefox, where the starter's sample could come in after the joiner's: the
      // joiner then waited for a setup no one would post).
      await page.waitForFunction(
        () =>
          !document.querySelector('#run').disabled &&
          ['#starter', '#joiner'].every((side) => document.querySelector(`${side} [data-source]`).textContent.includes('Sample')),
      );
      await page.evaluate(() => document.querySelector('#run').click());
      try {
        await page.waitForFunction(() => document.querySelector('#status').dataset.done === 'true' || document.querySelector('#status').classList.contains('error'), { timeout: 150_000 });
      } catch (error) {
        // A run that neither ends nor fails (seen twice in Firefox in full suites): say where
        // it stood, so the next occurrence names the step it hung on.
        const stood = await page
          .evaluate(() => ({
            status: document.querySelector('#status').textContent,
            steps: [...document.querySelectorAll('#steps li')].map((li) => li.textContent),
          }))
          .catch((e) => ({ status: `page unreadable: ${e?.message}`, steps: [] }));
        throw new Error(`${error.message}; status "${stood.status}"; steps: ${stood.steps.join(' | ')}; page problems: ${browser.problems.join(' | ')}`);
      }
      const seen = await page.evaluate(async () => {
        const link = document.querySelector('#joiner [data-result] a[download]');
        return {
          status: document.querySelector('#status').textContent,
          steps: [...document.querySelectorAll('#steps li')].map((li) => li.textContent),
          joinerFile: link ? await (await fetch(link.href)).text() : null,
        };
      });
      assert.match(seen.status, /^Done through the relay in/, seen.status);
      assert.ok(seen.steps.includes('joiner: done') && seen.steps.includes('starter: done'), seen.steps.join(' | '));
      assert.deepEqual(column(seen.joinerFile, 'joiner_row'), column(demo.matches, 'joiner_row'), "the joiner's matched rows are the CLI demo's");
      assert.deepEqual(browser.problems, [], 'no uncaught errors in the page');
    } finally {
      await browser.close();
    }
  });
}
