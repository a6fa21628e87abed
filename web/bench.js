// The bench page: js/bench/psi-steps.js's measures (the ones `node js/bench/psi.js` prints),
// in this page, at 1, 2 and 4 workers and for psi.js, shown with their ratios.
import * as lockstep from '../js/src/index.js';
import { ours, theirs } from '../js/bench/psi-steps.js';

const $ = (selector) => /** @type {HTMLElement} */ (document.querySelector(selector));
const status = $('#status');
const table = /** @type {HTMLTableElement} */ ($('#table'));
$('#cores').textContent = String(navigator.hardwareConcurrency ?? 'an unknown number of');

const STEPS = ['setup', 'request', 'respond', 'intersect'];
const COUNTS = [1, 2, 4];

function render(rates, psiJs) {
  table.replaceChildren();
  const head = table.createTHead().insertRow();
  const columns = ['step', ...COUNTS.map((w) => `${w} worker${w === 1 ? '' : 's'}`), 'psi.js', '2 / 1', '4 / 1', ...COUNTS.map((w) => `${w} / psi.js`)];
  for (const c of columns) head.append(Object.assign(document.createElement('th'), { scope: 'col', textContent: c }));
  const body = table.createTBody();
  for (const step of STEPS) {
    const row = body.insertRow();
    const cell = (text) => (row.insertCell().textContent = text);
    row.append(Object.assign(document.createElement('th'), { scope: 'row', textContent: step }));
    for (const w of COUNTS) cell(rates[w] ? Math.round(rates[w][step]).toLocaleString('en-US') : '…');
    cell(psiJs ? Math.round(psiJs[step]).toLocaleString('en-US') : '…');
    for (const w of [2, 4]) cell(rates[w] && rates[1] ? (rates[w][step] / rates[1][step]).toFixed(2) : '…');
    for (const w of COUNTS) cell(rates[w] && psiJs ? (rates[w][step] / psiJs[step]).toFixed(2) : '…');
  }
  table.hidden = false;
}

$('#go').addEventListener('click', async () => {
  const go = /** @type {HTMLButtonElement} */ ($('#go'));
  const count = Number(/** @type {HTMLInputElement} */ ($('#values')).value);
  const rounds = Number(/** @type {HTMLInputElement} */ ($('#rounds')).value);
  if (!(Number.isInteger(count) && count >= 100 && count % 2 === 0 && Number.isInteger(rounds) && rounds >= 1)) {
    status.textContent = 'Values must be an even whole number of at least 100, rounds a whole number of at least 1.';
    return;
  }
  go.disabled = true;
  status.classList.remove('error');
  const rates = {};
  let psiJs = null;
  try {
    for (const workers of COUNTS) {
      status.textContent = `Measuring lockstep on ${workers} worker${workers === 1 ? '' : 's'}…`;
      rates[workers] = await ours(lockstep, 'scalar', count, rounds, workers);
      render(rates, psiJs);
    }
    if (typeof globalThis.PSI === 'function') {
      status.textContent = 'Measuring psi.js on this page (it blocks the page)…';
      await new Promise((resolve) => setTimeout(resolve, 50));
      psiJs = await theirs(globalThis.PSI, count, rounds);
      status.textContent = `Done: ${count.toLocaleString('en-US')} values a party, median of ${rounds} rounds; values per second.`;
    } else {
      status.textContent = 'Done without psi.js: /peers/psi.js/ is not served (run scripts/install-peers).';
    }
    render(rates, psiJs);
    status.dataset.done = 'true';
  } catch (error) {
    status.textContent = `Failed: ${error?.message ?? error}`;
    status.classList.add('error');
  } finally {
    go.disabled = false;
  }
});
window.bench = { ready: true };
