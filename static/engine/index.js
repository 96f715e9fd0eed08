// @docsync/client — the browser's sync engine as a package for programs: bots, importers,
// tests. `openDocument` opens one document the way a tab does (this device's copy in
// IndexedDB, a queue that survives restarts, wake-ups by long-polling) and gives a small
// surface to read and change it; `DocSyncEngine` is the whole engine for anything else.
// In Node, bring an IndexedDB (`import 'fake-indexeddb/auto'`, or pass `indexedDB`); Node has
// no WebSocket or EventSource before v22, so wake-ups fall back to long-polling on their own.

import { DocSyncEngine } from './engine.js';
import { openStore, createMemoryLocks } from './store.js';
import { newBlockId, newClientId, newOpId } from './ids.js';
import { keyBetween } from './order-key.js';

export { DocSyncEngine, openStore, createMemoryLocks, newBlockId, newClientId, newOpId, keyBetween };

/** @typedef {import('./types.js').EngineState} EngineState */
/** @typedef {import('./types.js').Row} Row */
/** @typedef {import('./types.js').Op} Op */

/**
 * @typedef {{
 *   baseUrl: string, token: string, docId: string,
 *   clientId?: string, indexedDB?: IDBFactory, IDBKeyRange?: typeof IDBKeyRange,
 *   storeName?: string, fetch?: typeof fetch,
 * }} OpenOptions
 */

/**
 * Opens a document as the owner of `token` (an API token) and resolves once it shows the
 * server's state.
 * @param {OpenOptions} o
 */
export async function openDocument(o) {
  const base = o.baseUrl.replace(/\/$/, '');
  const fetchFn = o.fetch ?? globalThis.fetch.bind(globalThis);
  const headers = { Authorization: `Bearer ${o.token}` };
  const meRes = await fetchFn(`${base}/api/v1/me`, { headers });
  if (!meRes.ok) throw new Error(`docsync: GET /api/v1/me answered ${meRes.status}: ${await meRes.text()}`);
  const me = await meRes.json();
  const store = await openStore({ indexedDB: o.indexedDB, IDBKeyRange: o.IDBKeyRange, name: o.storeName });
  const engine = new DocSyncEngine({
    docId: o.docId,
    clientId: o.clientId ?? newClientId(),
    user: { userId: me.id, name: me.displayName || me.name },
    store,
    baseUrl: base,
    fetch: fetchFn,
    headers,
    locks: createMemoryLocks(),
    storage: null,
  });
  const doc = new DocumentClient(engine);
  await engine.open();
  await doc.until((s) => s.synced || !!s.error, 30_000);
  if (doc.state.error) throw new Error(`docsync: ${doc.state.error.message} (${doc.state.error.status})`);
  return doc;
}

/** One open document: its state, a few edits, and waiting for what a program waits for. */
export class DocumentClient {
  /** @param {DocSyncEngine} engine */
  constructor(engine) {
    this.engine = engine;
    /** @type {EngineState} */
    this.state = /** @type {any} */ (null);
    /** @type {Set<() => void>} */
    this.waiters = new Set();
    engine.subscribe((s) => {
      this.state = s;
      for (const w of [...this.waiters]) w();
    });
  }

  /** The bullets, in document order. @returns {Row[]} */
  get rows() {
    return this.state?.rows ?? [];
  }

  /**
   * Adds a bullet as the last child of `parentId` (the top level when null); its ID.
   * @param {string} content @param {{parentId?: string|null}} [where]
   */
  addBullet(content, where = {}) {
    const parentId = where.parentId ?? null;
    const model = this.engine.view;
    // Tombstones included: after them too, so a restored bullet keeps its place.
    const siblings = model.children(parentId);
    const last = siblings.length ? siblings[siblings.length - 1].orderKey : null;
    const blockId = newBlockId();
    this.submit([{ opId: newOpId(), kind: 'insert', blockId, parentId, orderKey: keyBetween(last, null), content }], 'insert');
    return blockId;
  }

  /** Replaces a bullet's text. @param {string} blockId @param {string} content */
  setText(blockId, content) {
    const b = this.engine.view.get(blockId);
    if (!b || b.deleted) throw new Error(`docsync: no bullet ${blockId}`);
    this.submit([{ opId: newOpId(), kind: 'set_content', blockId, content, baseVersion: b.version }], 'typing');
  }

  /** Deletes a bullet and everything below it. @param {string} blockId */
  remove(blockId) {
    this.submit([{ opId: newOpId(), kind: 'delete', blockId }], 'delete');
  }

  /** @param {Op[]} ops @param {string} step */
  submit(ops, step) {
    const r = this.engine.submitOps(ops, { step });
    if (!r.ok) throw new Error(`docsync: ${r.reason}`);
  }

  /** Off (queued on this device) or back online (the queue is sent). @param {boolean} online */
  setOnline(online) {
    this.engine.setOnline(online);
  }

  /**
   * Resolves with the state once `pred` holds for it (checked now and at every change).
   * @param {(s: EngineState) => boolean} pred @param {number} [timeoutMs]
   * @returns {Promise<EngineState>}
   */
  until(pred, timeoutMs = 30_000) {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.state && pred(this.state)) {
          this.waiters.delete(check);
          clearTimeout(timer);
          resolve(this.state);
        }
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`docsync: still waiting after ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  /** Resolves once everything this client did is on the server. */
  saved(timeoutMs = 30_000) {
    return this.until((s) => s.pending === 0 && s.unsaved === 0 && s.synced, timeoutMs);
  }

  /** Leaves the document (its leases are released); what is still queued stays on this device. */
  close() {
    this.waiters.clear();
    return this.engine.close();
  }
}
