// @ts-check
// A step's items and the parts they are split into (lockstep_psi::parts): the distinct keys a
// setup or a request masks (packed values and end offsets), or the elements a response re-masks
// or an intersection unmasks (33 bytes each). Part `i` of a split covers items [start, end);
// its outputs are 33-byte elements, and the outputs of all parts, concatenated in part order,
// are the whole map's.

import { ELEMENT_LEN } from './messages.js';

/**
 * @typedef {{ kind: 'mask', values: Uint8Array, ends: Uint32Array }
 *   | { kind: 'remask' | 'unmask', elements: Uint8Array }} Items
 */
/**
 * @typedef {{ kind: 'mask', first: number, values: Uint8Array, ends: Uint32Array }
 *   | { kind: 'remask' | 'unmask', first: number, elements: Uint8Array }} Part
 */
/**
 * What maps a part: a party's own key (PsiParty) or a helper's (PsiHelper), in the wasm module.
 *
 * @typedef {object} PartMapper
 * @property {(values: Uint8Array, ends: Uint32Array, progress: (done: number, total: number) => void) => Uint8Array} maskPart
 * @property {(elements: Uint8Array, first: number, progress: (done: number, total: number) => void) => Uint8Array} remaskPart
 * @property {(elements: Uint8Array, first: number, progress: (done: number, total: number) => void) => Uint8Array} unmaskPart
 */

/** @param {Items} items */
export const itemCount = (items) => (items.kind === 'mask' ? items.ends.length : items.elements.length / ELEMENT_LEN);

/**
 * Items [start, end) as a part of their own (fresh buffers, so they can be transferred).
 *
 * @param {Items} items
 * @param {number} start
 * @param {number} end
 * @returns {Part}
 */
export function partOf(items, start, end) {
  if (items.kind === 'mask') {
    const from = start === 0 ? 0 : items.ends[start - 1];
    const ends = items.ends.slice(start, end);
    for (let i = 0; i < ends.length; i++) ends[i] -= from;
    return { kind: 'mask', first: start, values: items.values.slice(from, end === 0 ? 0 : items.ends[end - 1]), ends };
  }
  return { kind: items.kind, first: start, elements: items.elements.slice(start * ELEMENT_LEN, end * ELEMENT_LEN) };
}

/** The buffers a part is made of. @param {Part} part @returns {ArrayBuffer[]} */
export const partBuffers = (part) =>
  /** @type {ArrayBuffer[]} */ (part.kind === 'mask' ? [part.values.buffer, part.ends.buffer] : [part.elements.buffer]);

/**
 * Maps `part` with `mapper` (the op its kind names): its outputs, packed.
 *
 * @param {PartMapper} mapper
 * @param {Part} part
 * @param {(done: number, total: number) => void} progress
 */
export function mapPart(mapper, part, progress) {
  switch (part.kind) {
    case 'mask':
      return mapper.maskPart(part.values, part.ends, progress);
    case 'remask':
      return mapper.remaskPart(part.elements, part.first, progress);
    case 'unmask':
      return mapper.unmaskPart(part.elements, part.first, progress);
    default:
      throw new TypeError(`a part of kind ${JSON.stringify(/** @type {any} */ (part).kind)}`);
  }
}

/**
 * The split of `count` items over `workers` as the engine makes it (lockstep_psi::parts::ranges,
 * `psiRanges` in the module): `[start, end)` pairs.
 *
 * @param {(items: number, count: number) => Uint32Array} psiRanges
 * @param {number} count
 * @param {number} workers
 * @returns {Array<[number, number]>}
 */
export function ranges(psiRanges, count, workers) {
  const flat = psiRanges(count, workers);
  /** @type {Array<[number, number]>} */
  const out = [];
  for (let i = 0; i < flat.length; i += 2) out.push([flat[i], flat[i + 1]]);
  return out;
}

/**
 * `parts` back to back.
 *
 * @param {Uint8Array[]} parts
 */
export function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/**
 * Items a worker maps between two turns of its event loop: the messages that came meanwhile
 * (a helper's progress, a dismissal, a failure) are seen, and a terminated worker stops, within
 * one chunk (Chromium does not interrupt a running wasm call). A turn costs a timer's few ms;
 * 2,048 items take some 300 ms here.
 */
export const CHUNK = 2_048;

/** A turn of the event loop. */
const turn = () => new Promise((resolve) => setTimeout(resolve, 0));

/**
 * Maps `part` in chunks of CHUNK items, turning the event loop between them and asking
 * `stop()` (a reason to give up, or null) after each chunk and again after the turn (which is
 * when the messages that came meanwhile are seen: a reason that came during a chunk stops the
 * map before the next); progress counts the whole part.
 *
 * @param {PartMapper} mapper
 * @param {Part} part
 * @param {(done: number, total: number) => void} progress
 * @param {() => Error | null} stop
 * @returns {Promise<Uint8Array>}
 */
export async function mapInChunks(mapper, part, progress, stop) {
  const items = part.kind === 'mask' ? { kind: part.kind, values: part.values, ends: part.ends } : { kind: part.kind, elements: part.elements };
  const count = itemCount(/** @type {Items} */ (items));
  /** @type {Uint8Array[]} */
  const outputs = [];
  for (let at = 0; at < count || (count === 0 && outputs.length === 0); at += CHUNK) {
    const end = Math.min(count, at + CHUNK);
    const piece = at === 0 && end === count ? part : { ...partOf(/** @type {Items} */ (items), at, end), first: part.first + at };
    outputs.push(mapPart(mapper, /** @type {Part} */ (piece), (done) => progress(at + done, count)));
    progress(end, count);
    const reason = stop();
    if (reason) throw reason;
    if (end < count) {
      await turn();
      const late = stop();
      if (late) throw late;
    }
  }
  return outputs.length === 1 ? outputs[0] : concat(outputs);
}
