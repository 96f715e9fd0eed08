// One document's requests to the server (PROTOCOL §3): `/snapshot`, `/sync`, `/leave`, as
// JSON over fetch. Failures throw ApiError (http.js): status 0 when there was no answer,
// else the server's status, code and message. Knows nothing of what the answers mean.

import { requestJson } from './http.js';

/** @typedef {import('./types.js').Snapshot} Snapshot */
/** @typedef {import('./types.js').SyncReply} SyncReply */

export class DocApi {
  /**
   * @param {{docId: string, baseUrl: string, fetch: typeof fetch, headers: Record<string, string>}} o
   */
  constructor(o) {
    this.o = o;
  }

  /** @param {string} path */
  url(path) {
    return this.o.baseUrl ? new URL(path, this.o.baseUrl).toString() : path;
  }

  /** @param {string} what */
  path(what) {
    return `/api/v1/docs/${encodeURIComponent(this.o.docId)}/${what}`;
  }

  /**
   * @param {string} method @param {string} path @param {unknown} body @param {boolean} keepalive
   * @returns {Promise<any>}
   */
  request(method, path, body, keepalive) {
    return requestJson(this.o.fetch, this.url(path), { method, body, headers: this.o.headers, keepalive });
  }

  /** @param {string} clientId @returns {Promise<Snapshot>} */
  snapshot(clientId) {
    return this.request('GET', `${this.path('snapshot')}?clientId=${encodeURIComponent(clientId)}`, undefined, false);
  }

  /**
   * `keepalive`: the page may be frozen or killed next (the answer may never be read).
   * @param {Record<string, unknown>} body @param {boolean} keepalive
   * @returns {Promise<SyncReply>}
   */
  sync(body, keepalive) {
    return this.request('POST', this.path('sync'), body, keepalive);
  }

  /** Ends the session of `clientId`. @param {string} clientId @param {boolean} keepalive */
  leave(clientId, keepalive) {
    return this.request('POST', this.path('leave'), { clientId }, keepalive);
  }
}
