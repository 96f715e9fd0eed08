// The synchronous journal (PROTOCOL §7 "Persistence"): what is painted but not yet committed
// to IndexedDB, written to `localStorage` inside the input handler, so a tab that crashes,
// is discarded or is killed a millisecond after a keystroke still has it at the next start.
// IndexedDB writes complete later (and die with a crashed renderer); a `localStorage` write
// has reached the browser process when `setItem` returns.
//
// One key per (document, clientId) — two tabs of one document never share one — holding
//   records: queue records whose IndexedDB write has not committed yet (by `n`), and
//   draft:   the text of one field typed but not yet handed to the engine (the editor hands
//            it over after the next frame), as the op it would become.
// Invariants: a record leaves the journal only when IndexedDB committed that exact record
// (a merged text op written again stays until its newest version is on disk) or when the
// op left the queue; the journal of a client is merged into that client's queue only by the
// holder of that client's Web Lock, and exactly once (`mergeJournal`: same `n` → the
// journal's newer version unless the disk copy was already acknowledged; ops whose opId is
// already queued are not added again).

/** @typedef {import('./types.js').Op} Op */
/** @typedef {import('./store.js').QueueRecord} QueueRecord */
/** @typedef {import('./store.js').QueueKey} QueueKey */

/** What the journal needs of `localStorage` (a Map-backed stand-in in tests). @typedef {Pick<Storage, 'getItem'|'setItem'|'removeItem'|'key'|'length'>} StorageLike */

/** What one key holds. @typedef {{records: QueueRecord[], draft: Op|null}} JournalContent */

const PREFIX = 'docsync:journal:';

/** @param {string} docId @param {string} clientId */
function keyOf(docId, clientId) {
  return `${PREFIX}${docId}:${clientId}`;
}

export class Journal {
  /** @type {StorageLike|null} */
  #storage;
  #docId;
  /** @type {() => string} */
  #clientId;
  /** @type {Map<number, QueueRecord>} */
  #records = new Map();
  /** @type {Op|null} */
  #draft = null;
  /** What is in storage now (to skip writes that change nothing). */
  #written = '';

  /**
   * @param {StorageLike|null} storage null: no journal (the engine runs on IndexedDB alone)
   * @param {string} docId
   * @param {() => string} clientId the current client (it may change while opening)
   */
  constructor(storage, docId, clientId) {
    this.#storage = storage;
    this.#docId = docId;
    this.#clientId = clientId;
  }

  /** Records written to the queue; their IndexedDB write starts now. @param {QueueRecord[]} recs */
  put(recs) {
    if (!this.#storage || recs.length === 0) return;
    for (const r of recs) this.#records.set(r.n, r);
    this.#draft = null;
    this.#write();
  }

  /** A record changed in memory (rebased): if the journal still holds it, hold the new one. @param {QueueRecord} rec */
  replace(rec) {
    if (!this.#records.has(rec.n)) return;
    this.#records.set(rec.n, rec);
    this.#write();
  }

  /** IndexedDB committed exactly these records: the journal lets go of them. @param {QueueRecord[]} recs */
  committed(recs) {
    let changed = false;
    for (const r of recs) {
      if (this.#records.get(r.n) === r) {
        this.#records.delete(r.n);
        changed = true;
      }
    }
    if (changed) this.#write();
  }

  /** Ops that left the queue (confirmed, rejected): nothing to recover of them. @param {QueueKey[]} keys */
  forget(keys) {
    let changed = false;
    for (const k of keys) changed = this.#records.delete(k.n) || changed;
    if (changed) this.#write();
  }

  /** The text typed into a field that the engine has not been given yet (null: none). @param {Op|null} op */
  setDraft(op) {
    if (!this.#storage) return;
    if (op === null && this.#draft === null) return;
    this.#draft = op;
    this.#write();
  }

  get draft() {
    return this.#draft;
  }

  /** Records the journal holds (not yet on disk). */
  get size() {
    return this.#records.size + (this.#draft ? 1 : 0);
  }

  #write() {
    const storage = this.#storage;
    if (!storage) return;
    const key = keyOf(this.#docId, this.#clientId());
    try {
      if (this.#records.size === 0 && !this.#draft) {
        if (this.#written !== '') storage.removeItem(key);
        this.#written = '';
        return;
      }
      /** @type {JournalContent} */
      const content = { records: [...this.#records.values()], draft: this.#draft };
      const text = JSON.stringify(content);
      if (text === this.#written) return;
      storage.setItem(key, text);
      this.#written = text;
    } catch {
      // Full or unusable: IndexedDB (and the server) still get the change; only the
      // crash window of a few milliseconds is not covered.
      this.#written = '';
    }
  }
}

/**
 * What a client's journal holds for a document (empty when nothing or unreadable).
 * @param {StorageLike|null} storage @param {string} docId @param {string} clientId
 * @returns {JournalContent}
 */
export function readJournal(storage, docId, clientId) {
  if (!storage) return { records: [], draft: null };
  try {
    const text = storage.getItem(keyOf(docId, clientId));
    if (!text) return { records: [], draft: null };
    const c = JSON.parse(text);
    const records = Array.isArray(c?.records) ? c.records.filter(isRecord) : [];
    const draft = c?.draft && typeof c.draft.opId === 'string' && typeof c.draft.kind === 'string' ? c.draft : null;
    return { records, draft };
  } catch {
    return { records: [], draft: null };
  }
}

/** Removes a client's journal of a document (after its content is on disk). @param {StorageLike|null} storage @param {string} docId @param {string} clientId */
export function clearJournal(storage, docId, clientId) {
  try {
    storage?.removeItem(keyOf(docId, clientId));
  } catch {
    // Unusable storage: nothing was written there either.
  }
}

/**
 * Client IDs with a journal for this document (a crashed tab's among them).
 * @param {StorageLike|null} storage @param {string} docId
 * @returns {string[]}
 */
export function journalOwners(storage, docId) {
  if (!storage) return [];
  const prefix = `${PREFIX}${docId}:`;
  /** @type {string[]} */
  const out = [];
  try {
    for (let i = 0; i < storage.length; i++) {
      const k = storage.key(i);
      if (k && k.startsWith(prefix)) out.push(k.slice(prefix.length));
    }
  } catch {
    return [];
  }
  return out;
}

/**
 * How many changes all journals on this device hold (they count as not yet on the server).
 * @param {StorageLike|null} storage
 */
export function journalCount(storage) {
  if (!storage) return 0;
  let n = 0;
  try {
    for (let i = 0; i < storage.length; i++) {
      const k = storage.key(i);
      if (!k || !k.startsWith(PREFIX)) continue;
      const rest = k.slice(PREFIX.length);
      const cut = rest.lastIndexOf(':');
      const c = readJournal(storage, rest.slice(0, cut), rest.slice(cut + 1));
      n += c.records.length + (c.draft ? 1 : 0);
    }
  } catch {
    return n;
  }
  return n;
}

/**
 * A client's queue as on disk, with its journal merged in, exactly once: a record of the
 * same `n` is replaced by the journal's (newer: it was written before its disk write began)
 * unless the disk copy was already acknowledged (it was sent as it was); a journal record of
 * an `n` not on disk is added; the draft becomes the last op. Ops whose opId is in `known`
 * (already queued, e.g. merged at an earlier start that crashed before clearing the journal)
 * are not added again. Returns the records in order and which of them must be written.
 * @param {QueueRecord[]} onDisk that client's records
 * @param {JournalContent} journal that client's journal
 * @param {Set<string>} known opIds queued already (onDisk's included); grows
 * @param {string} docId @param {string} clientId whose queue this is
 * @returns {{records: QueueRecord[], writes: QueueRecord[]}}
 */
export function mergeJournal(onDisk, journal, known, docId, clientId) {
  const byN = new Map(onDisk.map((r) => [r.n, r]));
  /** @type {QueueRecord[]} */
  const writes = [];
  for (const r of journal.records) {
    const disk = byN.get(r.n);
    if (disk) {
      if (disk.ackedSeq !== null && disk.ackedSeq !== undefined) continue;
      if (disk.op.opId !== r.op.opId || JSON.stringify(disk.op) === JSON.stringify(r.op)) continue;
      const rec = { ...disk, op: r.op };
      byN.set(r.n, rec);
      writes.push(rec);
    } else if (!known.has(r.op.opId)) {
      const rec = { docId, clientId, n: r.n, op: r.op, ackedSeq: null };
      byN.set(r.n, rec);
      known.add(r.op.opId);
      writes.push(rec);
    }
  }
  const records = [...byN.values()].sort((a, b) => a.n - b.n);
  const d = journal.draft;
  if (d && !known.has(d.opId)) {
    const last = records[records.length - 1];
    const rec = { docId, clientId, n: (last ? last.n : 0) + 1, op: d, ackedSeq: null };
    known.add(d.opId);
    records.push(rec);
    writes.push(rec);
  }
  return { records, writes };
}

/** @param {any} r @returns {r is QueueRecord} */
function isRecord(r) {
  return r && typeof r.n === 'number' && typeof r.docId === 'string' && typeof r.clientId === 'string' &&
    r.op && typeof r.op.opId === 'string' && typeof r.op.kind === 'string';
}
