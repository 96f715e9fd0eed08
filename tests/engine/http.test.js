// @ts-check
// http.js: what counts as "no answer" (NetworkError) and as a server failure (HttpError).
import { describe, it, expect } from 'vitest';
import { requestJson, NetworkError, HttpError } from '../../static/engine/http.js';

/** @param {number} status @param {string} text */
const answer = (status, text) => async () => /** @type {any} */ ({
  ok: status >= 200 && status < 300, status,
  json: async () => JSON.parse(text),
  text: async () => text,
});

describe('requestJson', () => {
  it('sends JSON with the headers and parses the reply', async () => {
    /** @type {any} */
    let seen = null;
    const fetchFn = /** @type {any} */ (async (/** @type {string} */ url, /** @type {any} */ init) => {
      seen = { url, init };
      return answer(200, '{"a":1}')();
    });
    expect(await requestJson(fetchFn, '/x', 'POST', { b: 2 }, { Authorization: 'Bearer t' }, true)).toEqual({ a: 1 });
    expect(seen.init).toMatchObject({ method: 'POST', body: '{"b":2}', keepalive: true, headers: { 'Content-Type': 'application/json', Authorization: 'Bearer t' } });
    expect(await requestJson(/** @type {any} */ (answer(204, '')), '/x', 'POST', undefined, {}, false)).toBe(null);
  });

  it('no answer → NetworkError; an error status → HttpError with the code; a page that is not JSON → HttpError bad_response', async () => {
    const down = /** @type {any} */ (async () => { throw new TypeError('fetch failed'); });
    await expect(requestJson(down, '/x', 'GET', undefined, {}, false)).rejects.toBeInstanceOf(NetworkError);
    const e403 = await requestJson(/** @type {any} */ (answer(403, '{"error":{"code":"forbidden","message":"no"}}')), '/x', 'GET', undefined, {}, false).catch((e) => e);
    expect(e403).toBeInstanceOf(HttpError);
    expect(e403).toMatchObject({ status: 403, code: 'forbidden', message: 'no' });
    const e502 = await requestJson(/** @type {any} */ (answer(502, '<html>')), '/x', 'GET', undefined, {}, false).catch((e) => e);
    expect(e502).toMatchObject({ status: 502, code: 'http_502' });
    const page = await requestJson(/** @type {any} */ (answer(200, '<html>portal</html>')), '/x', 'GET', undefined, {}, false).catch((e) => e);
    expect(page).toMatchObject({ status: 200, code: 'bad_response' });
  });
});
