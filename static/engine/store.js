// The device copy of each document (PROTOCOL §7 "Persistence"): the confirmed state (meta
// record + blocks in hash buckets + change records not yet folded into them,
// store-changes.js) and the queue of own unconfirmed ops per (docId, clientId).
// Every write is one IndexedDB transaction whose promise resolves only on `complete`, and
// rejects (never swallowed) on error or abort, e.g. QuotaExceededError. Each write asks for
// its commit (`tx.commit()`) as soon as its last request is issued: a write begun in the
// same task as a keystroke, or in `pagehide`, then completes even if the page is gone next.

/** @typedef {import('./types.js').Block} Block */
/** @typedef {import('./types.js').Op} Op */
/** @typedef {import('./types.js').Role} Role */
/** @typedef {import('./types.js').Mode} Mode */

import { mergeJournal } from './journal.js';
import { applyChanges, changeRecord, entriesOf, foldPlan, readChange } from './store-changes.js';

/**
 * The confirmed document without its blocks. `buckets`: how many block records it has;
 * `purged`: IDs removed for good by compaction (so late edits to them are recognised).
 * @typedef {{docId: string, title: string, titleVersion: number, icon: string|null,
 *   lastSeq: number, role: Role|null, mode: Mode, shared: boolean, sessions: number,
 *   bulletGuest?: boolean, savedAt: number, buckets: number, purged?: string[]}} DocMeta
 */

/**
 * One own op not yet confirmed. `n` orders the queue of one (docId, clientId); `ackedSeq` is
 * set once the server answered with that seq: the op stays (still shown on top of the
 * confirmed state) until the confirmed state has caught up to it, and is never resent.
 * @typedef {{docId: string, clientId: string, n: number, op: Op, ackedSeq: number|null}} QueueRecord
 */

/** @typedef {{clientId: string, n: number}} QueueKey */

const DB_VERSION = 1;
// Buckets hold ~BUCKET_TARGET blocks, so a sync that changes a few blocks rewrites a few
// small records, while opening a 10,000-block document reads ~40 records in one getAll.
const BUCKET_TARGET = 256;
const MAX_BUCKETS = 256;
// Each save of the confirmed state writes its changes as one record (store-changes.js) and
// folds the entries of up to FOLD_BUCKETS buckets into them; past FOLD_ALL_AT entries in
// records it folds them all (a storm of pastes with no quiet save in between).
const FOLD_BUCKETS = 4;
const FOLD_ALL_AT = 2000;

/** @param {number} blockCount */
export function bucketCountFor(blockCount) {
  return Math.min(MAX_BUCKETS, Math.max(1, Math.ceil(blockCount / BUCKET_TARGET)));
}

/**
 * FNV-1a over the id's UTF-16 units: stable across sessions, so a block always lives in
 * the same bucket for a given bucket count.
 * @param {string} id
 * @param {number} buckets
 */
export function bucketOf(id, buckets) {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h ^= id.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h % buckets;
}

/**
 * @template T
 * @param {IDBRequest<T>} req
 * @returns {Promise<T>}
 */
function done(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('IndexedDB request failed'));
  });
}

/**
 * Asks for the commit now instead of after the requests' success events have run in this
 * page (one round trip fewer; the queued transactions behind it start sooner, and a
 * transaction begun in `pagehide` does not depend on this page running again).
 * @param {IDBTransaction} tx
 */
function commitNow(tx) {
  if (typeof tx.commit === 'function') tx.commit();
}

/**
 * Resolves when the transaction has committed (data is on disk as far as the browser
 * promises), rejects on error or abort.
 * @param {IDBTransaction} tx
 * @returns {Promise<void>}
 */
function committed(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error ?? new Error('IndexedDB transaction failed'));
    tx.onabort = () => reject(tx.error ?? new Error('IndexedDB transaction aborted'));
  });
}

export class DocStore {
  /**
   * @param {IDBDatabase} db
   * @param {typeof IDBKeyRange} keyRange
   */
  constructor(db, keyRange) {
    this.db = db;
    this.keyRange = keyRange;
  }

  /** @param {string} docId */
  blockRange(docId) {
    return this.keyRange.bound([docId, 0], [docId, Infinity]);
  }

  /** A document's change records, keys `[docId, 'c', n]` in the order they were written. @param {string} docId */
  changeRange(docId) {
    return this.keyRange.bound([docId, 'c', 0], [docId, 'c', Infinity]);
  }

  /** Everything of a document in the `blocks` store: its buckets and change records. @param {string} docId */
  docRange(docId) {
    return this.keyRange.bound([docId], [docId, []]);
  }

  /** @param {string} docId @param {string} clientId */
  queueRange(docId, clientId) {
    return this.keyRange.bound([docId, clientId, 0], [docId, clientId, Infinity]);
  }

  /**
   * The stored confirmed state, or null if this device never saw the document.
   * @param {string} docId
   * @returns {Promise<{meta: DocMeta, blocks: Block[]}|null>}
   */
  async loadDoc(docId) {
    const tx = this.db.transaction(['docs', 'blocks'], 'readonly');
    const metaP = done(tx.objectStore('docs').get(docId));
    const bucketsP = done(tx.objectStore('blocks').getAll(this.blockRange(docId)));
    const changesP = done(tx.objectStore('blocks').getAll(this.changeRange(docId)));
    const [meta, buckets, changes] = await Promise.all([metaP, bucketsP, changesP]);
    if (!meta) return null;
    /** @type {Block[]} */
    const blocks = [];
    for (const b of /** @type {StoredBucket[]} */ (buckets)) for (const x of readBucket(b)) blocks.push(x);
    return { meta: /** @type {DocMeta} */ (meta), blocks: applyChanges(blocks, changes.map(readChange)) };
  }

  /**
   * Replaces the whole confirmed state (after a snapshot), re-bucketing for its size, and
   * applies queue changes in the same transaction. Never backwards, as saveConfirmed: if the
   * stored state is already newer (another tab, or an update saved before this deferred
   * write ran), only the queue changes are written — unless `back` says the server itself
   * went back (restored from a backup: its snapshot is the truth, however old).
   * @param {Omit<DocMeta, 'buckets'>} meta
   * @param {Block[]} blocks
   * @param {{put?: QueueRecord[], del?: QueueKey[]}} [queue]
   * @param {{back?: boolean}} [opts]
   */
  async saveSnapshot(meta, blocks, queue = {}, opts = {}) {
    const tx = this.db.transaction(['docs', 'blocks', 'queue'], 'readwrite');
    const result = committed(tx);
    const old = /** @type {DocMeta|undefined} */ (await done(tx.objectStore('docs').get(meta.docId)));
    if (old && old.lastSeq > meta.lastSeq && !opts.back) {
      this.queueWrites(tx, meta.docId, queue);
      commitNow(tx);
      return result;
    }
    const buckets = bucketCountFor(blocks.length);
    const store = tx.objectStore('blocks');
    store.delete(this.docRange(meta.docId));
    /** @type {Block[][]} */
    const parts = Array.from({ length: buckets }, () => []);
    for (const b of blocks) parts[bucketOf(b.id, buckets)].push(stripDepth(b));
    parts.forEach((part, i) => store.put(bucketRecord(part), [meta.docId, i]));
    tx.objectStore('docs').put({ ...meta, buckets });
    this.queueWrites(tx, meta.docId, queue);
    commitNow(tx);
    return result;
  }

  /**
   * Advances the confirmed state: upserts `changed`, removes `purged`, writes `meta`, and
   * applies queue changes, all in one transaction (a crash leaves either all or none).
   * Never backwards: two tabs of one document share this record, and a tab that is behind
   * (it applies seq 9 after the other saved seq 10) must not put older blocks over newer
   * ones — a tab reloaded next would show, and type on, text that was already replaced
   * (the two-tab loss). Then only the queue changes are written.
   * @param {Omit<DocMeta, 'buckets'>} meta
   * @param {Block[]} changed
   * @param {string[]} purged
   * @param {{put?: QueueRecord[], del?: QueueKey[]}} [queue]
   */
  async saveConfirmed(meta, changed, purged, queue = {}) {
    const tx = this.db.transaction(['docs', 'blocks', 'queue'], 'readwrite');
    const result = committed(tx);
    const docs = tx.objectStore('docs');
    const old = /** @type {DocMeta|undefined} */ (await done(docs.get(meta.docId)));
    if (old && old.lastSeq > meta.lastSeq) {
      this.queueWrites(tx, meta.docId, queue);
      commitNow(tx);
      return result;
    }
    const buckets = old?.buckets ?? 1;
    docs.put({ ...meta, buckets });
    const docId = meta.docId;
    const store = tx.objectStore('blocks');
    const range = this.changeRange(docId);
    const [keys, stored] = await Promise.all([done(store.getAllKeys(range)), done(store.getAll(range))]);
    const changes = stored.map(readChange);
    const ids = /** @type {[string, 'c', number][]} */ (keys);
    const up = changed.map(stripDepth);
    const fresh = up.length > 0 || purged.length > 0;
    if (fresh) {
      ids.push([docId, 'c', ids.length ? ids[ids.length - 1][2] + 1 : 0]);
      changes.push({ up, rm: [...purged] });
    }
    if (changes.length) {
      // Read-modify-write of the buckets this save folds, inside this transaction: no other
      // write can interleave, so concurrent tabs never lose each other's updates.
      const plan = foldPlan(changes, (id) => bucketOf(id, buckets), entriesOf(changes) > FOLD_ALL_AT ? Infinity : FOLD_BUCKETS);
      await Promise.all(
        plan.buckets.map(async (i) => {
          const key = [docId, i];
          const cur = readBucket(/** @type {StoredBucket|undefined} */ (await done(store.get(key))));
          store.put(bucketRecord(plan.fold(i, cur)), key);
        }),
      );
      plan.rest().forEach((c, k) => {
        const isNew = fresh && k === changes.length - 1;
        if (c && (isNew || c !== changes[k])) store.put(changeRecord(c.up, c.rm), ids[k]);
        else if (!c && !isNew) store.delete(ids[k]);
      });
    }
    this.queueWrites(tx, meta.docId, queue);
    commitNow(tx);
    return result;
  }

  /**
   * @param {IDBTransaction} tx
   * @param {string} docId
   * @param {{put?: QueueRecord[], del?: QueueKey[]}} queue
   */
  queueWrites(tx, docId, queue) {
    const q = tx.objectStore('queue');
    for (const k of queue.del ?? []) q.delete([docId, k.clientId, k.n]);
    for (const r of queue.put ?? []) q.put(r);
  }

  /**
   * This client's queue of the document, in order.
   * @param {string} docId
   * @param {string} clientId
   * @returns {Promise<QueueRecord[]>}
   */
  async loadQueue(docId, clientId) {
    const tx = this.db.transaction('queue', 'readonly');
    return /** @type {Promise<QueueRecord[]>} */ (
      done(tx.objectStore('queue').getAll(this.queueRange(docId, clientId)))
    );
  }

  /**
   * Adds or replaces queue records (a merged set_content replaces its record).
   * @param {QueueRecord[]} records
   */
  async putQueued(records) {
    const tx = this.db.transaction('queue', 'readwrite');
    const result = committed(tx);
    const q = tx.objectStore('queue');
    for (const r of records) q.put(r);
    commitNow(tx);
    return result;
  }

  /**
   * @param {string} docId
   * @param {QueueKey[]} keys
   */
  async deleteQueued(docId, keys) {
    const tx = this.db.transaction('queue', 'readwrite');
    const result = committed(tx);
    this.queueWrites(tx, docId, { del: keys });
    commitNow(tx);
    return result;
  }

  /**
   * Client IDs that have queued ops for this document (own one included).
   * @param {string} docId
   * @returns {Promise<string[]>}
   */
  async queueOwners(docId) {
    const tx = this.db.transaction('queue', 'readonly');
    const range = this.keyRange.bound([docId], [docId, []]);
    const keys = /** @type {[string, string, number][]} */ (
      await done(tx.objectStore('queue').getAllKeys(range))
    );
    return [...new Set(keys.map((k) => k[1]))];
  }

  /**
   * Takes a client's queue of this document with its journal (journal.js) merged in, in one
   * transaction, keeping every op (and its opId) as it is. For `fromClientId === toClientId`
   * (a start after a crash) the merged queue stays where it is; otherwise (adopting a gone
   * tab's queue) it moves to the end of `toClientId`'s queue. Returns the taken records in
   * order. The caller must hold `fromClientId`'s Web Lock, so no one else takes or sends it,
   * and clears that journal only after this resolved (a crash in between merges it again,
   * which `mergeJournal` makes harmless: known opIds are not added twice).
   * @param {string} docId
   * @param {string} fromClientId
   * @param {string} toClientId
   * @param {import('./journal.js').JournalContent} [journal]
   * @returns {Promise<QueueRecord[]>}
   */
  async takeQueue(docId, fromClientId, toClientId, journal = { records: [], draft: null }) {
    const tx = this.db.transaction('queue', 'readwrite');
    const result = committed(tx);
    const q = tx.objectStore('queue');
    const theirs = /** @type {QueueRecord[]} */ (await done(q.getAll(this.queueRange(docId, fromClientId))));
    /** @type {QueueRecord[]} */
    const mine = fromClientId === toClientId
      ? []
      : /** @type {QueueRecord[]} */ (await done(q.getAll(this.queueRange(docId, toClientId))));
    const known = new Set([...theirs, ...mine].map((r) => r.op.opId));
    const { records, writes } = mergeJournal(theirs, journal, known, docId, fromClientId);
    if (fromClientId === toClientId) {
      for (const r of writes) q.put(r);
      commitNow(tx);
      await result;
      return records;
    }
    let next = mine.length ? mine[mine.length - 1].n + 1 : 1;
    q.delete(this.queueRange(docId, fromClientId));
    const moved = records.map((r) => ({ ...r, clientId: toClientId, n: next++ }));
    for (const r of moved) q.put(r);
    commitNow(tx);
    await result;
    return moved;
  }

  /**
   * Removes everything stored about a document (e.g. after it was deleted).
   * @param {string} docId
   */
  async forgetDoc(docId) {
    const tx = this.db.transaction(['docs', 'blocks', 'queue'], 'readwrite');
    const result = committed(tx);
    tx.objectStore('docs').delete(docId);
    tx.objectStore('blocks').delete(this.docRange(docId));
    tx.objectStore('queue').delete(this.keyRange.bound([docId], [docId, []]));
    commitNow(tx);
    return result;
  }

  /**
   * What this device holds: documents stored, and own ops not yet confirmed by the server
   * (acknowledged ones waiting only for the confirmed state to catch up do not count).
   * @returns {Promise<{docs: number, pending: number}>}
   */
  async counts() {
    const tx = this.db.transaction(['docs', 'queue'], 'readonly');
    const docs = await done(tx.objectStore('docs').count());
    const queued = /** @type {QueueRecord[]} */ (await done(tx.objectStore('queue').getAll()));
    return { docs, pending: queued.filter((r) => r.ackedSeq === null || r.ackedSeq === undefined).length };
  }

  close() {
    this.db.close();
  }
}

/**
 * Deletes the whole device store (every document's copy and queue). Other tabs' open
 * connections close themselves on `versionchange`, so the deletion is not blocked by them.
 * @param {{indexedDB?: IDBFactory, name?: string}} [opts]
 * @returns {Promise<void>}
 */
export function deleteStore(opts = {}) {
  const factory = opts.indexedDB ?? globalThis.indexedDB;
  if (!factory) return Promise.resolve();
  const req = factory.deleteDatabase(opts.name ?? 'docsync');
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve();
    req.onerror = () => reject(req.error);
  });
}

/**
 * A bucket as stored: its blocks as one JSON text. Opening a document reads every bucket, and
 * parsing one text per bucket is several times faster than IndexedDB's structured clone of
 * 256 block objects (at 50,000 blocks the read was most of the time to the first bullets).
 * Buckets written before as arrays of blocks are still read as they are.
 * @typedef {string|Block[]} StoredBucket
 */

/** @param {Block[]} blocks @returns {StoredBucket} */
function bucketRecord(blocks) {
  return JSON.stringify(blocks);
}

/** @param {StoredBucket|undefined} v @returns {Block[]} */
function readBucket(v) {
  if (v === undefined) return [];
  return typeof v === 'string' ? JSON.parse(v) : v;
}

/**
 * Snapshot blocks carry `depth`; it is derived, so it is not stored.
 * @param {Block} b
 * @returns {Block}
 */
function stripDepth(b) {
  if (b.depth === undefined) return b;
  const { depth: _depth, ...rest } = b;
  return rest;
}

/**
 * Opens (creating or upgrading) the docsync database. One per tab, shared by its engines.
 * @param {{indexedDB?: IDBFactory, IDBKeyRange?: typeof IDBKeyRange, name?: string}} [opts]
 * @returns {Promise<DocStore>}
 */
export async function openStore(opts = {}) {
  const factory = opts.indexedDB ?? globalThis.indexedDB;
  const keyRange = opts.IDBKeyRange ?? globalThis.IDBKeyRange;
  if (!factory || !keyRange) throw new Error('IndexedDB is not available');
  const req = factory.open(opts.name ?? 'docsync', DB_VERSION);
  req.onupgradeneeded = () => {
    const db = req.result;
    if (!db.objectStoreNames.contains('docs')) db.createObjectStore('docs', { keyPath: 'docId' });
    // Out-of-line keys [docId, bucket]; values are Block[].
    if (!db.objectStoreNames.contains('blocks')) db.createObjectStore('blocks');
    if (!db.objectStoreNames.contains('queue')) {
      db.createObjectStore('queue', { keyPath: ['docId', 'clientId', 'n'] });
    }
  };
  const db = await done(req);
  // Another tab upgrading the schema: step aside instead of blocking it forever.
  db.onversionchange = () => db.close();
  return new DocStore(db, keyRange);
}

/**
 * An in-memory stand-in for `navigator.locks` (Node tests, the simulation): exclusive locks
 * with `ifAvailable`, held until the callback's promise settles. Shared by the "tabs" of one
 * test, like navigator.locks is shared by the tabs of one origin.
 * @returns {LockManagerLike}
 */
export function createMemoryLocks() {
  /** @type {Map<string, (() => void)[]>} waiters per held lock name */
  const held = new Map();
  return {
    async request(name, optsOrCb, maybeCb) {
      const opts = typeof optsOrCb === 'function' ? {} : optsOrCb;
      const cb = /** @type {(lock: {name: string}|null) => any} */ (
        typeof optsOrCb === 'function' ? optsOrCb : maybeCb
      );
      if (held.has(name)) {
        if (opts.ifAvailable) return cb(null);
        const queue = /** @type {(() => void)[]} */ (held.get(name));
        await new Promise((resolve, reject) => {
          const wake = () => resolve(undefined);
          queue.push(wake);
          opts.signal?.addEventListener('abort', () => {
            const at = queue.indexOf(wake);
            if (at >= 0) queue.splice(at, 1);
            reject(new DOMException('The lock request was aborted.', 'AbortError'));
          });
        });
      }
      if (!held.has(name)) held.set(name, []);
      try {
        return await cb({ name });
      } finally {
        const waiters = /** @type {(() => void)[]} */ (held.get(name));
        const next = waiters.shift();
        if (next) next();
        else held.delete(name);
      }
    },
  };
}

/**
 * The part of the Web Locks API the engine uses.
 * @typedef {{request: (name: string, optsOrCb: {ifAvailable?: boolean, signal?: AbortSignal} | ((lock: {name: string}|null) => any),
 *   cb?: (lock: {name: string}|null) => any) => Promise<any>}} LockManagerLike
 */
