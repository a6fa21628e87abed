// The demo page (web/index.html) in headless Chromium, Firefox and WebKit, and its bench page in
// Chromium, served as the README serves them (web/serve.js, no cross-origin isolation): on the
// built-in sample data, operated from the keyboard, the round finds the matches `lockstep psi
// demo` finds (the starter's resolved file byte for byte, the joiner's matched rows), checked in
// the DOM and in the downloads; a screenshot of each, wide and narrow, goes to test/artifacts/
// (demo-*.png; WebKit's are of the viewport: WebDriver takes no full-page shot).
import { after, before, test } from '../bounded.js';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serveStatic } from '../../../web/serve.js';
import { cliDemoFiles, column } from './cli-demo.js';
import { openPage as chromium } from './chromium.js';
import { openPage as firefox } from './firefox.js';
import { openPage as webkit } from './webkit.js';

const ROWS = 1_200;
const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));

const cliDemo = () => cliDemoFiles(ROWS);

let server;
let expected;
before(async () => {
  expected = cliDemo();
  server = await serveStatic();
  mkdirSync(ARTIFACTS, { recursive: true });
});
after(() => server?.close());

for (const [label, openPage] of [['chromium', chromium], ['firefox', firefox], ['webkit', webkit]]) {
  test(`${label}: the demo page finds the CLI's matches on the sample data${label === 'firefox' ? '' : ', from the keyboard'}`, { timeout: 120_000 }, async () => {
    const browser = await openPage();
    try {
      const { page } = browser;
      await page.goto(`${server.url}web/`);
      await page.waitForFunction(() => window.demo?.ready === true);
      // The sample rows, both sides' sample data (the engine's, made in a worker), 2 workers.
      await page.evaluate((rows) => {
        const input = document.querySelector('#rows');
        input.value = String(rows);
        document.querySelector('#workers').value = '2';
        for (const side of ['#starter', '#joiner']) document.querySelector(`${side} [data-sample]`).click();
      }, ROWS);
      await page.waitForFunction(() => !document.querySelector('#run').disabled);
      const sample = await page.evaluate(() => document.querySelector('#starter [data-source]').textContent);
      // The sample's starter holds ROWS people, with a few repeated rows and rows without an email.
      const shown = Number(/: ([\d,]+) rows, 5 columns/.exec(sample)?.[1].replace(/,/g, ''));
      assert.ok(shown >= ROWS && shown < ROWS * 1.1, sample);
      assert.equal(shown, expected.starter.toString().trim().split('\n').length - 1, "the CLI's sample file's rows");
      const checked = await page.evaluate(() => [...document.querySelectorAll('[data-columns] input:checked')].map((b) => b.value));
      assert.deepEqual(checked, ['email', 'email'], 'the sample key column is chosen on both sides');
      // Run from the keyboard: focus the button, press Enter. Firefox over WebDriver BiDi delivers
      // the key events but performs no default action for them (no click on a focused button:
      // checked with listeners), so there the button is clicked.
      const run = await page.$('#run');
      await run.focus();
      if (label === 'firefox') await run.click();
      else await run.press('Enter');
      try {
        await page.waitForFunction(() => document.querySelector('#status').dataset.done === 'true' || document.querySelector('#status').classList.contains('error'), { timeout: 100_000 });
      } catch (error) {
        const seen = await page.evaluate(() => ({ status: document.querySelector('#status').textContent, steps: document.querySelector('#steps').textContent, active: document.activeElement?.id }));
        throw new Error(`the round did not end: ${JSON.stringify(seen)}`, { cause: error });
      }
      const dom = await page.evaluate(async () => {
        const text = async (side) => {
          const link = document.querySelector(`${side} [data-result] a[download]`);
          return link ? (await fetch(link.href)).text() : null;
        };
        const firstCells = (side) => [...document.querySelectorAll(`${side} [data-result] tbody tr`)].map((tr) => tr.cells[0].textContent + ',' + tr.cells[1].textContent);
        return {
          status: document.querySelector('#status').textContent,
          workers: [...document.querySelectorAll('#steps li')].map((li) => li.dataset.workers ?? null),
          starterCount: document.querySelector('#starter [data-result] [data-count]')?.dataset.count,
          joinerCount: document.querySelector('#joiner [data-result] [data-count]')?.dataset.count,
          starterFirst: firstCells('#starter'),
          joinerRows: [...document.querySelectorAll('#joiner [data-result] tbody tr')].map((tr) => tr.cells[0].textContent),
          starterFile: await text('#starter'),
          joinerFile: await text('#joiner'),
        };
      });
      assert.match(dom.status, /^Done in/, dom.status);
      assert.deepEqual(dom.workers.slice(0, 4), ['2', '2', '2', '2'], 'every masking step ran on 2 workers');
      const resolvedLines = expected.resolved.trim().split('\n');
      assert.equal(Number(dom.starterCount), resolvedLines.length - 1, 'the starter shows as many pairs as the CLI');
      assert.deepEqual(dom.starterFirst, resolvedLines.slice(1, 1 + dom.starterFirst.length).map((l) => l.split(',').slice(0, 2).join(',')), 'the pairs in the DOM');
      assert.equal(dom.starterFile, expected.resolved, "the starter's download is the CLI's matched-rows.csv");
      const cliJoinerRows = column(expected.matches, 'joiner_row');
      assert.equal(Number(dom.joinerCount), cliJoinerRows.length, 'the joiner shows as many rows as the CLI');
      assert.deepEqual(column(dom.joinerFile, 'joiner_row'), cliJoinerRows, "the joiner's matched rows are the CLI's");
      assert.deepEqual(dom.joinerRows, cliJoinerRows.slice(0, dom.joinerRows.length), 'the joiner rows in the DOM');
      await page.screenshot({ path: join(ARTIFACTS, `demo-${label}.png`), fullPage: true });
      await (page.setViewportSize ? page.setViewportSize({ width: 390, height: 844 }) : page.setViewport({ width: 390, height: 844 }));
      const narrow = await page.evaluate(() => ({
        scroll: document.documentElement.scrollWidth,
        width: document.documentElement.clientWidth,
        panes: getComputedStyle(document.querySelector('.panes')).gridTemplateColumns.split(' ').length,
      }));
      assert.equal(narrow.panes, 1, 'one pane a row on a narrow screen');
      assert.ok(narrow.scroll <= narrow.width + 1, `no sideways scrolling on a narrow screen (${narrow.scroll} > ${narrow.width})`);
      await page.screenshot({ path: join(ARTIFACTS, `demo-${label}-narrow.png`), fullPage: true });
      assert.deepEqual(browser.problems, [], 'no errors in the page');
    } finally {
      await browser.close();
    }
  });
}

test('chromium: the bench page measures 1, 2 and 4 workers and psi.js, with their ratios', { timeout: 120_000 }, async () => {
  const browser = await chromium();
  try {
    const { page } = browser;
    await page.goto(`${server.url}web/bench.html`);
    await page.waitForFunction(() => window.bench?.ready === true);
    await page.evaluate(() => {
      document.querySelector('#values').value = '400';
      document.querySelector('#rounds').value = '1';
      document.querySelector('#go').click();
    });
    await page.waitForFunction(() => document.querySelector('#status').dataset.done === 'true' || document.querySelector('#status').classList.contains('error'), { timeout: 100_000 });
    const table = await page.evaluate(() => ({
      status: document.querySelector('#status').textContent,
      head: [...document.querySelectorAll('#table thead th')].map((th) => th.textContent),
      rows: [...document.querySelectorAll('#table tbody tr')].map((tr) => [...tr.cells].map((c) => c.textContent)),
    }));
    assert.match(table.status, /^Done: 400 values/, table.status);
    assert.deepEqual(table.head.slice(0, 5), ['step', '1 worker', '2 workers', '4 workers', 'psi.js']);
    assert.deepEqual(table.rows.map((r) => r[0]), ['setup', 'request', 'respond', 'intersect']);
    for (const row of table.rows) assert.ok(row.slice(1).every((cell) => /^[\d,.]+$/.test(cell) && Number(cell.replace(/,/g, '')) > 0), row.join(' '));
    await page.screenshot({ path: join(ARTIFACTS, 'bench-chromium.png'), fullPage: true });
    assert.deepEqual(browser.problems, [], 'no errors in the page');
  } finally {
    await browser.close();
  }
});
