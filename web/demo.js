// The demo page: a starter and a joiner in one page, each in its own workers of one PSI pool,
// run a whole round (lockstep psi request, setup, respond, intersect, resolve) over CSV files
// or the built-in sample data; or, with a relay's address and invitations, each pane runs its
// party through `lockstep serve` (relayRound). Every rule (record format, key columns,
// normalization, the messages, the round's order) is the engine's or the package's; this file
// only wires the page.
import { RelayClient, createJoiner, createPsiPool, createStarter, psiSample, relayRound, shardChoice } from '../js/src/index.js';

const $ = (selector, root = document) => /** @type {HTMLElement} */ (root.querySelector(selector));
const rowsInput = /** @type {HTMLInputElement} */ ($('#rows'));
const workersSelect = /** @type {HTMLSelectElement} */ ($('#workers'));
const runButton = /** @type {HTMLButtonElement} */ ($('#run'));
const progress = /** @type {HTMLProgressElement} */ ($('#progress'));
const status = $('#status');
const steps = $('#steps');

/** What a pane holds: its records' bytes and where they came from. */
const sides = {
  starter: { pane: $('#starter'), bytes: /** @type {Uint8Array | null} */ (null), keyColumn: '' },
  joiner: { pane: $('#joiner'), bytes: /** @type {Uint8Array | null} */ (null), keyColumn: '' },
};

/** Displayed rows of a result table at most (the download has them all). */
const SHOWN = 500;

const number = (n) => n.toLocaleString('en-US');

/**
 * The fields of one CSV line (quotes as RFC 4180): for display only; the engine reads the
 * records themselves.
 *
 * @param {string} line
 */
function fields(line) {
  const out = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quoted) {
      if (c === '"' && line[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') out.push(field), (field = '');
    else field += c;
  }
  out.push(field);
  return out;
}

/** The first `limit` lines of a CSV file's text, and how many it has. @param {string} text @param {number} limit */
function lines(text, limit) {
  const all = text.replace(/^\ufeff/, '').split(/\r?\n/);
  if (all.at(-1) === '') all.pop();
  return { shown: all.slice(0, limit), count: all.length };
}

/** Shows a side's records: the source line and a checkbox per header column. */
function loaded(side, bytes, source, keyColumn) {
  const s = sides[side];
  s.bytes = bytes;
  const header = fields(lines(new TextDecoder().decode(bytes.subarray(0, 64 * 1024)), 1).shown[0] ?? '');
  const { count } = lines(new TextDecoder().decode(bytes), Infinity);
  $('[data-source]', s.pane).textContent = `${source}: ${number(Math.max(0, count - 1))} rows, ${header.length} columns.`;
  const set = /** @type {HTMLFieldSetElement} */ ($('[data-columns]', s.pane));
  set.replaceChildren(Object.assign(document.createElement('legend'), { textContent: 'Key columns' }));
  const chosen = keyColumn && header.includes(keyColumn) ? keyColumn : header[0];
  header.forEach((name, i) => {
    const label = document.createElement('label');
    const box = Object.assign(document.createElement('input'), { type: 'checkbox', value: name, checked: name === chosen });
    box.dataset.column = String(i);
    label.append(box, document.createTextNode(name || `(column ${i + 1})`));
    set.append(label);
  });
  set.disabled = false;
  $('[data-result]', s.pane).replaceChildren();
  updateRun();
}

/** @param {'starter' | 'joiner'} side */
const keysOf = (side) => ({
  columns: [...sides[side].pane.querySelectorAll('[data-columns] input:checked')].map((box) => /** @type {HTMLInputElement} */ (box).value),
  normalize: /** @type {HTMLInputElement} */ ($('[data-normalize]', sides[side].pane)).checked,
});

/** The pool's size and the parties' worker count for the Workers choice. */
function workersChosen() {
  const value = workersSelect.value;
  const asked = value === 'auto' ? 'auto' : Number(value);
  const choice = shardChoice(asked, 4);
  return { asked, pool: asked === 'auto' ? Math.max(1, choice.workers) : asked };
}

/** A table of a result file's first rows, and a download of all of it. */
function showTable(side, title, file, name) {
  const text = new TextDecoder().decode(file);
  const { shown, count } = lines(text, SHOWN + 1);
  const result = $('[data-result]', sides[side].pane);
  const heading = Object.assign(document.createElement('h3'), { textContent: title });
  const table = document.createElement('table');
  const [head, ...body] = shown.map(fields);
  const headRow = table.createTHead().insertRow();
  for (const cell of head ?? []) headRow.append(Object.assign(document.createElement('th'), { scope: 'col', textContent: cell }));
  const tbody = table.createTBody();
  for (const row of body) {
    const tr = tbody.insertRow();
    for (const cell of row) tr.insertCell().textContent = cell;
  }
  const scroll = Object.assign(document.createElement('div'), { className: 'scroll', tabIndex: 0 });
  scroll.setAttribute('role', 'region');
  scroll.setAttribute('aria-label', title);
  scroll.append(table);
  const matched = Math.max(0, count - 1);
  const note = Object.assign(document.createElement('p'), {
    textContent: matched > SHOWN ? `${number(matched)} rows; the first ${number(SHOWN)} shown.` : `${number(matched)} rows.`,
  });
  note.dataset.count = String(matched);
  const link = Object.assign(document.createElement('a'), {
    href: URL.createObjectURL(new Blob([file], { type: 'text/csv' })),
    download: name,
    textContent: `Download ${name}`,
  });
  result.replaceChildren(heading, note, scroll, link);
}

function failed(error) {
  status.textContent = `Failed: ${error?.message ?? error}${error?.code ? ` (${error.code})` : ''}`;
  status.classList.add('error');
}

/** A step's line in the list, filled in as it goes. */
function stepLine(label) {
  const item = document.createElement('li');
  item.textContent = `${label}…`;
  steps.append(item);
  return item;
}

let running = false;

/** The relay's address and the panes' invitations, when the relay's fields are filled. */
function relayChosen() {
  const url = /** @type {HTMLInputElement} */ ($('#relay-url')).value.trim();
  if (!url) return null;
  const invitation = (side) => /** @type {HTMLInputElement} */ ($(`#relay-${side}`)).value.trim();
  return { url, starter: invitation('starter'), joiner: invitation('joiner') };
}

/** Whether a pane can run: its records loaded, and its invitation given in relay mode. @param {'starter' | 'joiner'} side */
function ready(side) {
  const relay = relayChosen();
  return Boolean(sides[side].bytes) && (relay === null || Boolean(relay[side]));
}

/** Runs each pane that has an invitation through the relay, at once; the steps as they go. */
async function runThroughRelay(relay, pool, asked) {
  const started = performance.now();
  const runs = [];
  for (const side of /** @type {const} */ (['starter', 'joiner'])) {
    if (!relay[side] || !sides[side].bytes) continue;
    const client = new RelayClient(relay.url, relay[side]);
    const party = side === 'starter' ? await createStarter(pool, { shards: asked }) : await createJoiner(pool, { shards: asked });
    const lines = new Map();
    const onStep = ({ step, kind, bytes }) => {
      const label = `${side}: ${step}${kind ? ` ${kind}` : ''}`;
      const line = lines.get(label) ?? stepLine(label);
      lines.set(label, line);
      line.textContent = bytes === undefined ? `${label}…` : `${label}: ${number(bytes)} bytes`;
      if (step === 'done') line.textContent = `${side}: done`;
    };
    runs.push(relayRound(client, party, /** @type {Uint8Array} */ (sides[side].bytes), { ...keysOf(side), onStep }).then((out) => [side, out]));
  }
  status.textContent = 'Running through the relay…';
  const outcomes = await Promise.all(runs);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const found = outcomes.find(([side]) => side === 'joiner')?.[1];
  if (found) {
    showTable('joiner', 'Matched rows (the joiner sees)', /** @type {Uint8Array} */ (found.rowsFile), 'joiner-matches.csv');
    status.textContent = `Done through the relay in ${seconds} s: ${number(found.size)} shared keys, ${number(found.rows.length)} joiner rows matched.`;
  } else {
    status.textContent = `Done through the relay in ${seconds} s: the starter posted its setup and response.`;
  }
  progress.value = 1;
  status.dataset.done = 'true';
}

async function run() {
  if (running) return;
  running = true;
  runButton.disabled = true;
  status.classList.remove('error');
  steps.replaceChildren();
  progress.value = 0;
  const { asked, pool: poolWorkers } = workersChosen();
  const pool = createPsiPool({ workers: poolWorkers });
  const started = performance.now();
  try {
    const relay = relayChosen();
    if (relay) {
      await runThroughRelay(relay, pool, asked);
      return;
    }
    const starter = await createStarter(pool, { shards: asked });
    const joiner = await createJoiner(pool, { shards: asked });
    const plan = ['joiner: request', 'starter: setup (raw)', 'starter: respond', 'joiner: intersect', 'starter: resolve'];
    let index = 0;
    /** Runs a step with its progress on the bar and its rate in the list. */
    const step = async (party, call) => {
      const label = plan[index];
      const line = stepLine(label);
      const at = index;
      status.textContent = `${label}…`;
      const t0 = performance.now();
      const onProgress = ({ done, total }) => {
        if (total > 0) progress.value = (at + Math.min(1, done / total)) / plan.length;
      };
      const out = await call({ onProgress });
      const seconds = (performance.now() - t0) / 1000;
      const sharding = party?.lastSharding;
      if (sharding) {
        const rate = sharding.items / Math.max(seconds, 1e-6);
        line.textContent = `${label}: ${number(sharding.items)} in ${seconds.toFixed(2)} s (${number(Math.round(rate))}/s) on ${sharding.workers} worker${sharding.workers === 1 ? '' : 's'} (${sharding.reason})`;
        line.dataset.workers = String(sharding.workers);
      } else {
        line.textContent = `${label}: ${seconds.toFixed(2)} s`;
      }
      index++;
      progress.value = index / plan.length;
      return out;
    };
    const joinerKeys = keysOf('joiner');
    const starterKeys = keysOf('starter');
    const request = await step(joiner, (o) => joiner.request(/** @type {Uint8Array} */ (sides.joiner.bytes), joinerKeys, o));
    const joinerCount = /** @type {import('../js/src/index.js').PsiSharding} */ (joiner.lastSharding).items;
    const setup = await step(starter, (o) => starter.setup(/** @type {Uint8Array} */ (sides.starter.bytes), { ...starterKeys, joinerCount, format: 'raw' }, o));
    const response = await step(starter, (o) => starter.respond(request, { joinerCount }, o));
    const found = await step(joiner, (o) => joiner.intersect(setup, response, {}, o));
    const resolved = await step(null, () => starter.resolve(/** @type {Uint8Array} */ (found.pairsFile)));
    showTable('joiner', 'Matched rows (the joiner sees)', /** @type {Uint8Array} */ (found.rowsFile), 'joiner-matches.csv');
    showTable('starter', 'Matched rows (the starter resolves)', resolved.file, 'starter-matches.csv');
    status.textContent = `Done in ${((performance.now() - started) / 1000).toFixed(1)} s: ${number(found.size)} shared keys, ${number(found.rows.length)} joiner rows and ${number(resolved.starterRows.length)} pairs matched.`;
    status.dataset.done = 'true';
  } catch (error) {
    failed(error);
  } finally {
    await pool.close({ force: true });
    running = false;
    updateRun();
  }
}

/** Run needs both panes' records, or in relay mode a pane with records and its invitation. */
function updateRun() {
  runButton.disabled = running || (relayChosen() ? !(ready('starter') || ready('joiner')) : !(sides.starter.bytes && sides.joiner.bytes));
}
for (const id of ['#relay-url', '#relay-starter', '#relay-joiner']) $(id).addEventListener('input', updateRun);

for (const side of /** @type {const} */ (['starter', 'joiner'])) {
  const pane = sides[side].pane;
  $('[data-file]', pane).addEventListener('change', async (event) => {
    const file = /** @type {HTMLInputElement} */ (event.target).files?.[0];
    if (!file) return;
    loaded(side, new Uint8Array(await file.arrayBuffer()), file.name, '');
  });
  $('[data-sample]', pane).addEventListener('click', async () => {
    const rows = Number(rowsInput.value);
    if (!(Number.isInteger(rows) && rows >= 10 && rows <= 2_000_000)) {
      failed(new Error('sample rows must be a whole number from 10 to 2,000,000'));
      return;
    }
    const pool = createPsiPool({ workers: 1 });
    try {
      const sample = await psiSample(pool, { rows });
      loaded(side, sample[side], `Sample data (${side === 'starter' ? 'a clinic' : 'a registry'}, lockstep psi demo --rows ${rows})`, sample.keyColumn);
      status.classList.remove('error');
    } catch (error) {
      failed(error);
    } finally {
      await pool.close();
    }
  });
}
runButton.addEventListener('click', run);
window.demo = { ready: true };
