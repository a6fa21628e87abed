// @ts-check
// A party's side of a round through a relay (`lockstep serve`): the HTTP calls of
// crates/server/src/wire.rs with fetch (Node 20 and browsers alike), every download checked
// against the digest the relay recorded, and `relayRound`, which walks a pooled party
// (createStarter / createJoiner) through the round in the order the CLI's `psi round` does
// (lockstep_server::client::next_step): the request first, the setup sized for it, then the
// response. The messages are the party's own steps, so a round through the relay gives the same
// bytes as `lockstep psi` on files.

import { LockstepError } from '../pool/errors.js';

/**
 * The relay refused, or could not be reached within `retryFor`. `code` is the relay's stable
 * refusal code (`unauthorized`, `forbidden`, `invalid`, ...; crates/server/README.md), or
 * `unreachable`, `digest` (a download other than what the round holds), `role` (the invitation
 * is the other party's) or `timeout` (the other party did not post within `waitMs`).
 */
export class RelayError extends LockstepError {
  /** @param {string} message @param {string} code @param {number} [status] @param {ErrorOptions} [options] */
  constructor(message, code, status, options) {
    super(message, code, options);
    this.status = status;
  }
}

const KINDS = ['setup', 'request', 'response'];
/** Statuses worth another try: the relay restarting, or its database away. */
const PASSING = new Set([502, 503, 504]);

/** @param {number} ms @param {AbortSignal | undefined} signal */
function pause(ms, signal) {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', aborted);
      resolve(undefined);
    }, ms);
    const aborted = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', aborted, { once: true });
  });
}

/** @param {Uint8Array} bytes */
async function sha256(bytes) {
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', /** @type {BufferSource} */ (bytes)));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * A party's connection to its round on a relay.
 *
 * The invitation (`ROUND.TOKEN`, the text of the file `lockstep psi invite` wrote for this
 * party) is a secret: it travels only in the `Authorization` header, never in a URL, and is not
 * kept anywhere but this object. Every call retries what may pass (the relay unreachable,
 * answering 502/503/504, or not answering an attempt within `answerWithin` ms) for up to
 * `retryFor` ms; a refusal rejects at once with a RelayError. Every call is safe to repeat: a
 * view, a read and a close change nothing twice, and the relay accepts the same post again.
 */
export class RelayClient {
  /** @type {string} */ #token;

  /**
   * @param {string} server the relay, `https://host:port` (or `http://` on loopback)
   * @param {string} invitation `ROUND.TOKEN`
   * @param {{ retryFor?: number, answerWithin?: number, fetch?: typeof fetch }} [options]
   */
  constructor(server, invitation, options = {}) {
    const url = new URL(String(server));
    const loopback = ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
      throw new TypeError(`${server}: https only (plain http to loopback only): the token would travel in clear`);
    }
    const match = /^([0-9a-f]{32})\.([0-9a-f]{64})$/.exec(String(invitation).trim());
    if (!match) throw new TypeError('an invitation is ROUND.TOKEN (32 and 64 lowercase hex digits), as `lockstep psi invite` wrote it');
    this.server = url.origin;
    this.round = match[1];
    this.#token = match[2];
    this.retryFor = options.retryFor ?? 60_000;
    // An attempt whose answer never starts (a connection lost without a reset, seen in a browser
    // as a fetch that never settles) is abandoned and tried again, not awaited for ever.
    this.answerWithin = options.answerWithin ?? 20_000;
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /**
   * One call: attempts until an answer passes, then `consume` reads its body (under the caller's
   * signal only; the answerWithin limit ends once the answer has started).
   *
   * @template T
   * @param {string} path @param {RequestInit} init @param {AbortSignal | undefined} signal
   * @param {(response: Response) => Promise<T>} consume
   * @returns {Promise<T>}
   */
  async #send(path, init, signal, consume) {
    const started = Date.now();
    let wait = 100;
    for (;;) {
      let last;
      signal?.throwIfAborted();
      // The attempt's own signal: the caller's abort, or no answer within answerWithin.
      const attempt = new AbortController();
      const forward = () => attempt.abort(signal?.reason);
      signal?.addEventListener('abort', forward, { once: true });
      const silent = setTimeout(() => attempt.abort(new Error(`no answer within ${this.answerWithin} ms`)), this.answerWithin);
      try {
        const response = await this.fetch(`${this.server}${path}`, {
          ...init,
          signal: attempt.signal,
          headers: { ...init.headers, authorization: `Bearer ${this.#token}` },
        });
        clearTimeout(silent);
        if (!PASSING.has(response.status)) {
          if (response.ok) return await consume(response);
          const text = await response.text();
          let refusal = { code: 'http', error: text.slice(0, 200) };
          try {
            refusal = JSON.parse(text);
          } catch {}
          throw new RelayError(`the relay refused (${response.status}, ${refusal.code}): ${refusal.error}`, refusal.code, response.status);
        }
        last = `${response.status}`;
      } catch (error) {
        if (error instanceof RelayError || signal?.aborted) throw error;
        last = attempt.signal.aborted ? String(attempt.signal.reason?.message ?? attempt.signal.reason) : /** @type {Error} */ (error).message;
      } finally {
        clearTimeout(silent);
        signal?.removeEventListener('abort', forward);
      }
      if (Date.now() - started >= this.retryFor) {
        throw new RelayError(`the relay at ${this.server} could not be reached for ${Math.round((Date.now() - started) / 1000)} s: ${last}`, 'unreachable');
      }
      await pause(wait, signal);
      wait = Math.min(wait * 2, 2_000);
    }
  }

  /**
   * The round as this party sees it: `{ round, role, format, size_only, max_rows, max_bytes,
   * expires_at, messages: { setup?, request?, response? } }`, each message `{ digest, len,
   * elements }`.
   *
   * @param {{ signal?: AbortSignal }} [options]
   */
  async view(options = {}) {
    return this.#send(`/v1/rounds/${this.round}`, { method: 'GET' }, options.signal, (r) => r.json());
  }

  /**
   * Posts this party's message of `kind` (`setup`, `request` or `response`); the same bytes
   * again are a retry the relay accepts once.
   *
   * @param {string} kind @param {Uint8Array} bytes @param {{ signal?: AbortSignal }} [options]
   */
  async post(kind, bytes, options = {}) {
    if (!KINDS.includes(kind)) throw new TypeError(`kind is one of ${KINDS.join(', ')}`);
    return this.#send(`/v1/rounds/${this.round}/${kind}`, { method: 'PUT', body: /** @type {BodyInit} */ (bytes) }, options.signal, (r) => r.json());
  }

  /**
   * The other party's message of `kind`, checked against the digest the round recorded.
   *
   * @param {string} kind @param {{ digest: string }} posted @param {{ signal?: AbortSignal }} [options]
   */
  async read(kind, posted, options = {}) {
    if (!KINDS.includes(kind)) throw new TypeError(`kind is one of ${KINDS.join(', ')}`);
    const bytes = await this.#send(`/v1/rounds/${this.round}/${kind}`, { method: 'GET' }, options.signal, async (r) => new Uint8Array(await r.arrayBuffer()));
    const got = await sha256(bytes);
    if (got !== posted.digest) {
      throw new RelayError(`the ${kind} read has digest ${got}; the round holds ${posted.digest}`, 'digest');
    }
    return bytes;
  }

  /** Closes the round: the relay removes its messages. @param {{ signal?: AbortSignal }} [options] */
  async close(options = {}) {
    await this.#send(`/v1/rounds/${this.round}`, { method: 'DELETE' }, options.signal, async () => undefined);
  }
}

/**
 * Runs `party`'s whole side of the client's round over `rows` (its records, as the party's
 * steps take them), in `lockstep psi round`'s order, and returns what the party learned: the
 * joiner's intersection (and the round closed, unless `keep`), or the starter's `{ setup,
 * response }`. Each step's messages are the party's own, so they equal `lockstep psi`'s.
 * `onStep({ step, kind, bytes? })` reports `make`, `post`, `wait`, `read` and `done`.
 *
 * @param {RelayClient} client
 * @param {import('../index.js').PsiStarter | import('../index.js').PsiJoiner} party
 * @param {import('../index.js').PsiRows} rows
 * @param {{ columns?: string | string[], normalize?: boolean, fpr?: number, keep?: boolean,
 *   pollMs?: number, waitMs?: number, signal?: AbortSignal,
 *   onStep?: (step: { step: string, kind?: string, bytes?: number }) => void }} [options]
 */
export async function relayRound(client, party, rows, options = {}) {
  const { columns, normalize, fpr, keep = false, pollMs = 500, waitMs = 3_600_000, signal } = options;
  const onStep = options.onStep ?? (() => {});
  let view = await client.view({ signal });
  if (view.role !== party.role) {
    throw new RelayError(`this invitation is the ${view.role}'s; the party is a ${party.role}`, 'role');
  }
  /** Waits until the round holds `kind`. @param {string} kind */
  const waitFor = async (kind) => {
    const started = Date.now();
    while (!view.messages[kind]) {
      onStep({ step: 'wait', kind });
      if (Date.now() - started >= waitMs) {
        throw new RelayError(`the other party's ${kind} has not come in ${Math.round(waitMs / 1000)} s`, 'timeout');
      }
      await pause(pollMs, signal);
      view = await client.view({ signal });
    }
    return view.messages[kind];
  };
  /** @param {string} kind */
  const read = async (kind) => {
    const bytes = await client.read(kind, await waitFor(kind), { signal });
    onStep({ step: 'read', kind, bytes: bytes.length });
    return bytes;
  };
  /** @param {string} kind @param {Uint8Array} bytes */
  const post = async (kind, bytes) => {
    await client.post(kind, bytes, { signal });
    onStep({ step: 'post', kind, bytes: bytes.length });
  };
  const sizeOnly = Boolean(view.size_only);
  if (party.role === 'joiner') {
    const joiner = /** @type {import('../index.js').PsiJoiner} */ (party);
    onStep({ step: 'make', kind: 'request' });
    await post('request', await joiner.request(rows, { sizeOnly, columns, normalize }, { signal }));
    const setup = await read('setup');
    const response = await read('response');
    const found = await joiner.intersect(setup, response, {}, { signal });
    if (!keep) await client.close({ signal });
    onStep({ step: 'done' });
    return found;
  }
  const starter = /** @type {import('../index.js').PsiStarter} */ (party);
  const request = await read('request');
  const joinerCount = (await waitFor('request')).elements;
  onStep({ step: 'make', kind: 'setup' });
  const setup = await starter.setup(rows, { joinerCount, format: view.format, fpr, columns, normalize }, { signal });
  await post('setup', setup);
  onStep({ step: 'make', kind: 'response' });
  const response = await starter.respond(request, { joinerCount, sizeOnly }, { signal });
  await post('response', response);
  onStep({ step: 'done' });
  return { setup, response };
}
