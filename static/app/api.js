// The app's API client: paths under /api/v1 on the browser's one HTTP client
// (engine/http.js: JSON, same-origin cookies, every failure an ApiError the pages can show),
// plus the app's one reaction of its own: a 401 sends the user to sign in. No DOM access
// (unit-tested in Node).

import { ApiError, requestJson } from '../engine/http.js';

export { ApiError, parseRetryAfter, errorFromResponse } from '../engine/http.js';

/** @typedef {'GET'|'POST'|'PUT'|'PATCH'|'DELETE'} Method */

/**
 * @typedef {{fetch?: typeof fetch, baseUrl?: string, onUnauthorized?: (e: ApiError) => void}} ApiOptions
 */

/**
 * Creates the API client. Paths are relative to /api/v1 (`'/docs'`, `'/me'`).
 * @param {ApiOptions} [opts]
 */
export function createApi(opts = {}) {
  const baseUrl = opts.baseUrl ?? '';
  /**
   * @template [T=any]
   * @param {Method} method
   * @param {string} path
   * @param {unknown} [body] sent as JSON when not undefined
   * @param {{signal?: AbortSignal, keepalive?: boolean, quiet401?: boolean, timeoutMs?: number}} [extra]
   *   timeoutMs: give up after this long and report the server as unreachable (status 0)
   * @returns {Promise<T>} parsed JSON, or null for 204 / empty bodies
   */
  async function request(method, path, body, extra = {}) {
    const doFetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
    try {
      return await requestJson(doFetch, `${baseUrl}/api/v1${path}`, { method, body, ...extra });
    } catch (e) {
      if (e instanceof ApiError && e.status === 401 && !extra.quiet401 && opts.onUnauthorized) opts.onUnauthorized(e);
      throw e;
    }
  }

  return {
    request,
    /** @template [T=any] @param {string} path @param {{signal?: AbortSignal, quiet401?: boolean, timeoutMs?: number}} [extra] @returns {Promise<T>} */
    get: (path, extra) => request('GET', path, undefined, extra),
    /** @template [T=any] @param {string} path @param {unknown} [body] @param {{keepalive?: boolean, quiet401?: boolean}} [extra] @returns {Promise<T>} */
    post: (path, body = {}, extra) => request('POST', path, body, extra),
    /** @template [T=any] @param {string} path @param {unknown} body @returns {Promise<T>} */
    put: (path, body) => request('PUT', path, body),
    /** @template [T=any] @param {string} path @param {unknown} body @returns {Promise<T>} */
    patch: (path, body) => request('PATCH', path, body),
    /** @template [T=any] @param {string} path @returns {Promise<T>} */
    del: (path) => request('DELETE', path),
  };
}

/** @typedef {ReturnType<typeof createApi>} Api */

/**
 * A short, human sentence for an error shown inline.
 * @param {unknown} e
 * @returns {string}
 */
export function describeError(e) {
  if (e instanceof ApiError) {
    if (e.offline) return 'You are offline — this needs a connection. Try again when you are back online.';
    const msg = e.message.replace(/^\w/, (c) => c.toUpperCase());
    return /[.!?]$/.test(msg) ? msg : `${msg}.`;
  }
  if (e instanceof Error) return e.message;
  return 'Something went wrong.';
}

/** Encodes one path segment (ids are safe, tag names and queries may not be). */
export const seg = encodeURIComponent;
