// @ts-check
// http.js, the browser's one HTTP client: what counts as "no answer" (status 0) and as a
// server failure (the status, the server's code and message), and that a caller's abort stays one.
import { describe, it, expect } from 'vitest';
import { requestJson, ApiError } from '../../static/engine/http.js';

/** @param {number} status @param {string} text @param {Record<string, string>} [headers] */
const answer = (status, text, headers = {}) => async () => new Response(status === 204 ? null : text, { status, headers });

describe('requestJson', () => {
  it('sends JSON with the headers and parses the reply', async () => {
    /** @type {any} */
    let seen = null;
    const fetchFn = /** @type {any} */ (async (/** @type {string} */ url, /** @type {any} */ init) => {
      seen = { url, init };
      return answer(200, '{"a":1}')();
    });
    expect(await requestJson(fetchFn, '/x', { method: 'POST', body: { b: 2 }, headers: { Authorization: 'Bearer t' }, keepalive: true })).toEqual({ a: 1 });
    expect(seen.init).toMatchObject({
      method: 'POST', body: '{"b":2}', keepalive: true, credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', Authorization: 'Bearer t', Accept: 'application/json' },
    });
    expect(await requestJson(/** @type {any} */ (answer(204, '')), '/x', { method: 'POST' })).toBe(null);
  });

  it('no answer → status 0; an error status → its code and message; a page that is not JSON → bad_response', async () => {
    const down = /** @type {any} */ (async () => { throw new TypeError('fetch failed'); });
    const off = await requestJson(down, '/x').catch((e) => e);
    expect(off).toBeInstanceOf(ApiError);
    expect(off).toMatchObject({ status: 0, code: 'network', offline: true });
    const e403 = await requestJson(/** @type {any} */ (answer(403, '{"error":{"code":"forbidden","message":"no"}}')), '/x').catch((e) => e);
    expect(e403).toBeInstanceOf(ApiError);
    expect(e403).toMatchObject({ status: 403, code: 'forbidden', message: 'no', offline: false });
    const e429 = await requestJson(/** @type {any} */ (answer(429, '{"error":{"code":"too_many_requests","message":"wait"}}', { 'Retry-After': '7' })), '/x').catch((e) => e);
    expect(e429).toMatchObject({ status: 429, retryAfter: 7 });
    const e502 = await requestJson(/** @type {any} */ (answer(502, '<html>')), '/x').catch((e) => e);
    expect(e502).toMatchObject({ status: 502, code: 'http_502' });
    expect(e502.message).toMatch(/server/i);
    const page = await requestJson(/** @type {any} */ (answer(200, '<html>portal</html>')), '/x').catch((e) => e);
    expect(page).toMatchObject({ status: 200, code: 'bad_response' });
  });

  it("a body cut off is no answer; a timeout says so; the caller's own abort is rethrown as it is", async () => {
    const cut = /** @type {any} */ (async () => ({ ok: true, status: 200, headers: new Headers(), text: async () => { throw new TypeError('terminated'); } }));
    expect(await requestJson(cut, '/x').catch((e) => e)).toMatchObject({ status: 0, code: 'network' });
    const slow = /** @type {any} */ ((/** @type {string} */ _u, /** @type {RequestInit} */ init) => new Promise((_r, reject) => {
      init.signal?.addEventListener('abort', () => reject(init.signal?.reason));
    }));
    expect(await requestJson(slow, '/x', { timeoutMs: 10 }).catch((e) => e)).toMatchObject({ status: 0, code: 'timeout' });
    const ctl = new AbortController();
    const waiting = requestJson(slow, '/x', { signal: ctl.signal }).catch((e) => e);
    ctl.abort();
    const aborted = await waiting;
    expect(aborted).not.toBeInstanceOf(ApiError);
    expect(aborted.name).toBe('AbortError');
  });
});
