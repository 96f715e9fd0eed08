// The one way the app talks to the server: JSON in, JSON out, same-origin cookies, and every
// failure turned into an ApiError the pages can show. No DOM access (unit-tested in Node).

/** @typedef {'GET'|'POST'|'PUT'|'PATCH'|'DELETE'} Method */

export class ApiError extends Error {
  /**
   * @param {number} status HTTP status; 0 when the request never got an answer (offline).
   * @param {string} code the server's error code, or `network` / `http_<status>`.
   * @param {string} message a sentence a person can read.
   * @param {number|null} retryAfter seconds from a Retry-After header, when sent.
   */
  constructor(status, code, message, retryAfter = null) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.retryAfter = retryAfter;
  }

  /** True when the server was not reached at all (offline, DNS, server down). */
  get offline() {
    return this.status === 0;
  }
}

/**
 * Seconds from a Retry-After header: either delta-seconds or an HTTP date.
 * @param {string|null|undefined} value
 * @param {number} [now] ms since epoch (tests)
 * @returns {number|null}
 */
export function parseRetryAfter(value, now = Date.now()) {
  if (value == null) return null;
  const v = value.trim();
  if (v === '') return null;
  if (/^\d+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return null;
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * Builds an ApiError from a non-2xx answer's status, headers and body text.
 * @param {number} status
 * @param {string} bodyText
 * @param {string|null} retryAfterHeader
 * @returns {ApiError}
 */
export function errorFromResponse(status, bodyText, retryAfterHeader) {
  let code = `http_${status}`;
  let message = defaultMessage(status);
  try {
    const body = JSON.parse(bodyText);
    const err = body && typeof body === 'object' ? body.error : null;
    if (err && typeof err === 'object') {
      if (typeof err.code === 'string' && err.code) code = err.code;
      if (typeof err.message === 'string' && err.message) message = err.message;
    }
  } catch {
    // not JSON (a proxy's error page): keep the default message
  }
  return new ApiError(status, code, message, parseRetryAfter(retryAfterHeader));
}

/** @param {number} status */
function defaultMessage(status) {
  if (status === 401) return 'You are not signed in.';
  if (status === 403) return 'You do not have permission to do that.';
  if (status === 404) return 'Not found, or you no longer have access.';
  if (status === 413) return 'That is too large to save.';
  if (status === 429) return 'Too many requests — please wait a moment.';
  if (status >= 500) return 'The server had a problem. Please try again.';
  return `Request failed (${status}).`;
}

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
    /** @type {Record<string, string>} */
    const headers = { Accept: 'application/json' };
    let signal = extra.signal;
    if (extra.timeoutMs && typeof AbortSignal.timeout === 'function') {
      const t = AbortSignal.timeout(extra.timeoutMs);
      signal = signal && typeof AbortSignal.any === 'function' ? AbortSignal.any([signal, t]) : t;
    }
    /** @type {RequestInit} */
    const init = { method, headers, credentials: 'same-origin', signal };
    if (extra.keepalive) init.keepalive = true;
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    /** @type {Response} */
    let res;
    try {
      res = await doFetch(`${baseUrl}/api/v1${path}`, init);
    } catch (e) {
      if (e instanceof DOMException && e.name === 'AbortError') throw e; // the caller's own abort; a timeout is 'TimeoutError'
      throw new ApiError(0, 'network', 'Cannot reach the server. Check your connection.');
    }
    const text = await res.text().catch(() => '');
    if (!res.ok) {
      const err = errorFromResponse(res.status, text, res.headers.get('Retry-After'));
      if (res.status === 401 && !extra.quiet401 && opts.onUnauthorized) opts.onUnauthorized(err);
      throw err;
    }
    if (text === '') return /** @type {T} */ (/** @type {unknown} */ (null));
    try {
      return JSON.parse(text);
    } catch {
      throw new ApiError(res.status, 'bad_response', 'The server sent an unreadable answer.');
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
