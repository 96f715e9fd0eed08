// The one way the browser talks to the server over HTTP — the app's pages (through
// app/api.js), the engine, its long-polling wake-ups and the admin page: JSON in, JSON out,
// same-origin cookies, one error type. Invariant: a request that got no HTTP answer (offline,
// a reset, a timeout, a body cut off) throws ApiError with status 0 (`offline`); one that
// reached the server but failed throws ApiError with the status and the server's code and
// message (a proxy's page instead: a readable default); a 2xx that is not JSON is
// `bad_response`. The caller's own abort (its signal) is rethrown as the AbortError it is.

export class ApiError extends Error {
  /**
   * @param {number} status HTTP status; 0 when the request never got an answer (offline).
   * @param {string} code the server's error code, or `network` / `http_<status>` / `bad_response`.
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

const UNREACHABLE = 'Cannot reach the server. Check your connection.';

/**
 * @typedef {{method?: string, body?: unknown, headers?: Record<string, string>,
 *   keepalive?: boolean, signal?: AbortSignal, timeoutMs?: number, cache?: RequestCache}} RequestOptions
 * `body`: sent as JSON when not undefined; `timeoutMs`: give up after this long and report
 * the server as unreachable (status 0).
 */

/**
 * One request. Resolves with the parsed JSON (null for an empty body, e.g. 204).
 * @param {typeof fetch|undefined} fetchFn
 * @param {string} url
 * @param {RequestOptions} [o]
 * @returns {Promise<any>}
 */
export async function requestJson(fetchFn, url, o = {}) {
  if (!fetchFn) throw new ApiError(0, 'network', 'fetch is not available');
  /** @type {Record<string, string>} */
  const headers = { Accept: 'application/json', ...o.headers };
  let signal = o.signal;
  if (o.timeoutMs && typeof AbortSignal.timeout === 'function') {
    const t = AbortSignal.timeout(o.timeoutMs);
    signal = signal && typeof AbortSignal.any === 'function' ? AbortSignal.any([signal, t]) : t;
  }
  /** @type {RequestInit} */
  const init = { method: o.method ?? 'GET', headers, credentials: 'same-origin' };
  if (signal) init.signal = signal;
  if (o.cache) init.cache = o.cache;
  if (o.keepalive) init.keepalive = true;
  if (o.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(o.body);
  }
  /** @type {Response} */
  let res;
  /** @type {string} */
  let text;
  try {
    res = await fetchFn(url, init);
    // A connection that breaks while the body arrives is no answer either.
    text = await res.text();
  } catch (e) {
    // The caller's own abort is theirs to handle; a timeout is no answer (said as such).
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    if (e instanceof DOMException && e.name === 'TimeoutError') throw new ApiError(0, 'timeout', 'The server did not answer in time.');
    throw new ApiError(0, 'network', UNREACHABLE);
  }
  if (!res.ok) throw errorFromResponse(res.status, text, res.headers?.get?.('Retry-After') ?? null);
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    // A proxy's or captive portal's page instead of our JSON: a server-side failure.
    throw new ApiError(res.status, 'bad_response', 'The server sent an unreadable answer.');
  }
}
