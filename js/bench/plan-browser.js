// The plan bench in headless Chromium (bench/plan.html): f32 addition chains through runPlan
// on both wasm builds, on the page and on a Web Worker: durations, frames painted during the
// run and the longest frame and timer gaps (medians).
//
//   node bench/plan-browser.js [--repeats 15] [--nodes 3,64] [--elements 1048576,16777216]
import { parseArgs } from 'node:util';
import { openPage } from '../test/node/chromium.js';
import { serve } from '../test/node/serve.js';

const { values: args } = parseArgs({
  options: {
    repeats: { type: 'string', default: '15' },
    nodes: { type: 'string', default: '3,64' },
    elements: { type: 'string', default: '1048576,16777216' },
  },
});
const server = await serve();
const browser = await openPage();
let result;
try {
  await browser.page.goto(`${server.url}bench/plan.html`);
  await browser.page.waitForFunction(() => window.ready === true);
  result = await browser.page.evaluate((a) => window.bench(a), {
    nodes: args.nodes.split(',').map(Number),
    elements: args.elements.split(',').map(Number),
    repeats: Number(args.repeats),
  });
} finally {
  await browser.close();
  await server.close();
}
const fmt = (v) => v.toFixed(3);
console.log(`plan bench in ${result.userAgent.match(/(Headless)?Chrome\/[\d.]+/)?.[0] ?? 'Chromium'}: f32 addition chains, medians of ${args.repeats}`);
console.log('\n| nodes | elements | wasm build | placement | ms | frames during the run | longest frame gap ms | longest timer gap ms |');
console.log('|---|---|---|---|---|---|---|---|');
for (const r of result.rows) {
  console.log(`| ${r.nodes} | ${r.elements} | ${r.wasm} | ${r.placement} | ${fmt(r.ms)} | ${r.frames} | ${fmt(r.frameGap)} | ${fmt(r.timerGap)} |`);
}
