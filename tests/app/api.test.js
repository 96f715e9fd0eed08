// @ts-check
import { describe, it, expect, vi } from 'vitest';
import { createApi, ApiError, parseRetryAfter, errorFromResponse, describeError } from '../../static/app/api.js';

/** @param {number} status @param {string} body @param {Record<string, string>} [headers] */
const reply = (status, body, headers = {}) => new Response(status === 204 ? null : body, { status, headers });

describe('parseRetryAfter', () => {
  it('reads delta seconds and HTTP dates', () => {
    expect(parseRetryAfter('120')).toBe(120);
    expect(parseRetryAfter(' 7 ')).toBe(7);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:01:30 GMT', now)).toBe(90);
    expect(parseRetryAfter('Thu, 01 Jan 2025 00:00:00 GMT', now)).toBe(0);
  });
  it('gives null for missing or junk values', () => {
    expect(parseRetryAfter(null)).toBeNull();
    expect(parseRetryAfter('')).toBeNull();
    expect(parseRetryAfter('soon')).toBeNull();
  });
});

describe('errorFromResponse', () => {
  it('uses the server error code and message', () => {
    const e = errorFromResponse(403, '{"error":{"code":"forbidden","message":"only the owner manages shares"}}', null);
    expect(e).toBeInstanceOf(ApiError);
    expect(e.status).toBe(403);
    expect(e.code).toBe('forbidden');
    expect(e.message).toBe('only the owner manages shares');
    expect(e.retryAfter).toBeNull();
  });
  it('falls back to a readable message for non-JSON bodies', () => {
    const e = errorFromResponse(502, '<html>Bad gateway</html>', null);
    expect(e.code).toBe('http_502');
    expect(e.message).toMatch(/server/i);
  });
  it('carries Retry-After', () => {
    expect(errorFromResponse(429, '{"error":{"code":"too_many_requests","message":"x"}}', '300').retryAfter).toBe(300);
  });
});

describe('createApi', () => {
  it('sends JSON with same-origin credentials and parses the answer', async () => {
    const fetch = vi.fn(async () => reply(201, '{"docId":"doc_1"}'));
    const api = createApi({ fetch });
    await expect(api.post('/docs', { title: 'x' })).resolves.toEqual({ docId: 'doc_1' });
    const call = /** @type {any[]} */ (fetch.mock.calls[0]);
    expect(call[0]).toBe('/api/v1/docs');
    expect(call[1].method).toBe('POST');
    expect(call[1].credentials).toBe('same-origin');
    expect(call[1].headers['Content-Type']).toBe('application/json');
    expect(call[1].body).toBe('{"title":"x"}');
  });
  it('GET sends no body; 204 resolves to null', async () => {
    const fetch = vi.fn(async () => reply(204, ''));
    const api = createApi({ fetch, baseUrl: 'http://h' });
    await expect(api.del('/docs/doc_1')).resolves.toBeNull();
    await api.get('/me');
    const call = /** @type {any[]} */ (fetch.mock.calls[1]);
    expect(call[0]).toBe('http://h/api/v1/me');
    expect(call[1].body).toBeUndefined();
  });
  it('turns error bodies into ApiError with retryAfter', async () => {
    const fetch = vi.fn(async () => reply(429, '{"error":{"code":"too_many_requests","message":"too many failed logins; try again in 240 s"}}', { 'Retry-After': '240' }));
    const api = createApi({ fetch });
    const e = await api.post('/auth/login', { username: 'a', password: 'b' }).catch((x) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect(e.status).toBe(429);
    expect(e.code).toBe('too_many_requests');
    expect(e.retryAfter).toBe(240);
  });
  it('reports a network failure as status 0 / offline', async () => {
    const api = createApi({ fetch: async () => { throw new TypeError('Failed to fetch'); } });
    const e = await api.get('/docs').catch((x) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect(e.status).toBe(0);
    expect(e.offline).toBe(true);
    expect(describeError(e)).toMatch(/offline/i);
  });
  it('calls onUnauthorized on 401 unless quiet401', async () => {
    const onUnauthorized = vi.fn();
    const api = createApi({ fetch: async () => reply(401, '{"error":{"code":"unauthorized","message":"log in"}}'), onUnauthorized });
    await api.get('/docs').catch(() => {});
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
    await api.get('/me', { quiet401: true }).catch(() => {});
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
  });
});

describe('timeouts', () => {
  it('a request that takes longer than timeoutMs counts as unreachable', async () => {
    /** @type {typeof fetch} */
    const slow = (_url, init) => new Promise((_resolve, reject) => {
      init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
    });
    const api = createApi({ fetch: slow });
    const e = await api.get('/me', { timeoutMs: 20 }).catch((x) => x);
    expect(e).toBeInstanceOf(ApiError);
    expect(e.status).toBe(0);
  });
  it('the caller\'s own abort is passed through', async () => {
    const ctl = new AbortController();
    /** @type {typeof fetch} */
    const slow = (_url, init) => new Promise((_resolve, reject) => {
      init?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
    });
    const api = createApi({ fetch: slow });
    const p = api.get('/docs', { signal: ctl.signal }).catch((x) => x);
    ctl.abort();
    const e = await p;
    expect(e.name).toBe('AbortError');
  });
});
