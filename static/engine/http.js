// Requests of the engine to the server: JSON in, JSON out. Invariant: a request that got no
// HTTP answer (offline, reset, a body cut off) throws NetworkError; one that reached the
// server but failed (non-2xx, or a 2xx that is not JSON) throws HttpError with status and code.

/** The request did not get an HTTP answer (offline, DNS, connection reset, aborted). */
export class NetworkError extends Error {}

/** A failed request that reached the server: carries the status and the error body. */
export class HttpError extends Error {
  /** @param {number} status @param {string} code @param {string} message */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/**
 * One request; `body` undefined = none. Resolves with the parsed JSON (null for an empty body).
 * @param {typeof fetch|undefined} fetchFn @param {string} url @param {string} method
 * @param {unknown} body @param {Record<string, string>} headers @param {boolean} keepalive
 * @returns {Promise<any>}
 */
export async function requestJson(fetchFn, url, method, body, headers, keepalive) {
  if (!fetchFn) throw new TypeError('fetch is not available');
  /** @type {RequestInit} */
  const init = { method, headers: { ...headers }, credentials: 'same-origin' };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { 'Content-Type': 'application/json', ...headers };
  }
  if (keepalive) init.keepalive = true;
  /** @type {Response} */
  let res;
  try {
    res = await fetchFn(url, init);
  } catch (e) {
    throw new NetworkError(e instanceof Error ? e.message : String(e));
  }
  if (!res.ok) {
    /** @type {any} */
    let err = null;
    try {
      err = (await res.json())?.error;
    } catch {
      // a proxy's HTML error page: keep the status only
    }
    throw new HttpError(res.status, err?.code ?? `http_${res.status}`, err?.message ?? `HTTP ${res.status}`);
  }
  let text;
  try {
    text = await res.text();
  } catch (e) {
    // The connection broke while the body was arriving.
    throw new NetworkError(e instanceof Error ? e.message : String(e));
  }
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    // A proxy's or captive portal's page instead of our JSON: a server-side failure.
    throw new HttpError(res.status, 'bad_response', 'The server sent something that is not JSON');
  }
}
