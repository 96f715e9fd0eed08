// The confirmed state of one document (PROTOCOL §7): what the server has confirmed, up to
// `lastSeq`, with the document's standing as last heard (role, mode, sharing, sessions) and the
// IDs removed for good. Invariants: log entries are applied only contiguous with lastSeq (the
// caller reloads a snapshot on a gap or `resync`); own ops are acknowledged and leave the
// queue only as the confirmed state reaches their seq; the confirmed state, its meta record
// and the queue's acks and drops reach IndexedDB in one transaction; a write that would
// change nothing is skipped.

import { DocModel, conflictCopyId } from './model.js';
import { isTextOp } from './outbox.js';

/** @typedef {import('./types.js').Block} Block */
/** @typedef {import('./types.js').LogEntry} LogEntry */
/** @typedef {import('./types.js').Snapshot} Snapshot */
/** @typedef {import('./types.js').SyncReply} SyncReply */
/** @typedef {import('./types.js').Role} Role */
/** @typedef {import('./types.js').Mode} Mode */
/** @typedef {import('./store.js').DocStore} DocStore */
/** @typedef {import('./store.js').DocMeta} DocMeta */
/** @typedef {import('./outbox.js').Outbox} Outbox */

/** What a reply or snapshot changed of the standing, for the owner's effects. @typedef {{modeChanged: boolean, iconChanged: boolean}} MetaChange */

export class Confirmed {
  #docId;
  /** @type {DocStore} */
  #store;
  /** @type {() => number} */
  #now;
  /** @type {(e: unknown) => void} */
  #onStorageError;
  /** @type {DocModel} */
  #model;
  /** Purged IDs stay purged for good; snapshots do not list them. @type {string[]} */
  #purged = [];
  #loaded = false;
  /** @type {Role|null} */
  #role = null;
  /** @type {Mode} */
  #mode = 'full';
  #shared = false;
  #sessions = 0;
  /** The user sees only bullets shared with them (PROTOCOL §10): the title is not theirs. */
  #bulletGuest = false;
  /** Who has the document open, one per person (live only, never stored). @type {import('./types.js').Person[]} */
  #people = [];
  /** The meta record last written (to skip writes when a sync changed nothing). */
  #savedSig = '';

  /**
   * @param {{docId: string, store: DocStore, now: () => number, onStorageError: (e: unknown) => void}} o
   */
  constructor(o) {
    this.#docId = o.docId;
    this.#store = o.store;
    this.#now = o.now;
    this.#onStorageError = o.onStorageError;
    this.#model = DocModel.empty(o.docId);
  }

  /** The confirmed document (read it; change it only through this class). */
  get model() {
    return this.#model;
  }

  get lastSeq() {
    return this.#model.lastSeq;
  }

  /** A confirmed state exists (from this device or the server). */
  get loaded() {
    return this.#loaded;
  }

  get role() {
    return this.#role;
  }

  get mode() {
    return this.#mode;
  }

  get shared() {
    return this.#shared;
  }

  /** The same array while nobody came or went (a UI compares by reference). */
  get people() {
    return this.#people;
  }

  get sessions() {
    return this.#sessions;
  }

  get bulletGuest() {
    return this.#bulletGuest;
  }

  /**
   * The copy this device stored (opening: shown at once, also offline).
   * @param {{meta: DocMeta, blocks: Block[]}} stored
   */
  restore(stored) {
    const m = stored.meta;
    this.#purged = m.purged ?? [];
    this.#model = DocModel.fromSnapshot(
      { docId: this.#docId, title: m.title, titleVersion: m.titleVersion, icon: m.icon, headSeq: m.lastSeq, blocks: stored.blocks },
      this.#purged,
    );
    this.#role = m.role;
    this.#mode = m.mode;
    this.#shared = m.shared;
    this.#sessions = m.sessions;
    this.#bulletGuest = m.bulletGuest === true;
    this.#loaded = true;
  }

  /**
   * Role, mode, sharing, sessions and icon of a reply or snapshot.
   * @param {Partial<SyncReply>|Snapshot} r
   * @returns {MetaChange}
   */
  meta(r) {
    if (r.role) this.#role = r.role;
    if (typeof r.shared === 'boolean') this.#shared = r.shared;
    if (typeof r.sessions === 'number') this.#sessions = r.sessions;
    if (typeof r.bulletGuest === 'boolean') this.#bulletGuest = r.bulletGuest;
    if (Array.isArray(r.people) && JSON.stringify(r.people) !== JSON.stringify(this.#people)) this.#people = r.people;
    let iconChanged = false;
    if (r.icon !== undefined && r.icon !== this.#model.icon) {
      this.#model.icon = r.icon;
      iconChanged = true;
    }
    const modeChanged = !!r.mode && r.mode !== this.#mode;
    if (r.mode) this.#mode = r.mode;
    return { modeChanged, iconChanged };
  }

  /**
   * Log entries contiguous with lastSeq go onto the confirmed state; the own ops they
   * confirm are acknowledged (and the text ops held behind them rebased) and leave the queue
   * once reached; everything is persisted in one transaction.
   * @param {LogEntry[]} entries
   * @param {Outbox} outbox
   * @param {boolean} [shown] the entries are the view's own first queued ops, applied by the
   *   server exactly as the view applied them (`LocalView.shows`): their leaving the queue
   *   changes nothing the view shows
   */
  applyEntries(entries, outbox, shown = false) {
    /** @type {Map<string, Block>} */
    const changed = new Map();
    /** @type {string[]} */
    const purgedNow = [];
    const byOpId = outbox.byOpId();
    for (const entry of entries) {
      this.#model.applyEntry(entry);
      for (const e of entry.effects) {
        if (e.e === 'block') changed.set(e.block.id, e.block);
        else if (e.e === 'purge') {
          for (const id of e.blockIds) {
            changed.delete(id);
            purgedNow.push(id);
          }
        }
      }
      // Our own op seen in the log before its result came back (a wake-up with entries);
      // matched by opId, as an adopted op was first sent under another clientId.
      const own = byOpId.get(entry.opId);
      if (own) {
        if (own.rec.ackedSeq === null) outbox.setAcked(own, entry.seq);
        outbox.rebaseNext(own, outbox.outcomeOf(own.rec.op, entry));
      }
    }
    if (purgedNow.length) this.#purged = [...this.#purged, ...purgedNow];
    const lastSeq = this.#model.lastSeq;
    outbox.drop(outbox.items.filter((i) => i.rec.ackedSeq !== null && i.rec.ackedSeq <= lastSeq), false, shown);
    const meta = this.#record();
    const queueWrites = outbox.takeWrites();
    const sig = signature(meta);
    if (!entries.length && sig === this.#savedSig && !queueWrites.del.length && !queueWrites.put.length) return;
    this.#savedSig = sig;
    this.#store.saveConfirmed(meta, [...changed.values()], purgedNow, queueWrites).catch(this.#onStorageError);
  }

  /**
   * A snapshot replaces the confirmed state; the queue is kept (to be re-applied on top):
   * ops the snapshot already holds leave it, ops acknowledged at a seq the server no longer
   * has go out again. Persisted in one transaction, when `later` runs it: the write copies
   * every block (tens of milliseconds for 10,000), which the first paint need not wait for;
   * what it holds is the server's and fetched again if lost, and the queue's acks and drops
   * in it only make resends harmlessly answered from the op results.
   * @param {Snapshot} snap
   * @param {Outbox} outbox
   * @param {(save: () => void) => void} [later] default: now
   * @returns {MetaChange}
   */
  replace(snap, outbox, later = (save) => save()) {
    // The server went back (restored from a backup): its older state must replace ours on disk too.
    const back = snap.headSeq < this.#model.lastSeq;
    this.#model = DocModel.fromSnapshot(snap, this.#purged);
    this.#loaded = true;
    const change = this.meta(snap);
    const done = outbox.items.filter((i) => i.rec.ackedSeq !== null && i.rec.ackedSeq <= snap.headSeq);
    for (const i of outbox.items) {
      if (i.rec.ackedSeq !== null && i.rec.ackedSeq > snap.headSeq) {
        // Acknowledged at a seq the server no longer has (restored from a backup): send it
        // again; a server that still knows the opId answers with the stored result.
        outbox.setAcked(i, null);
      }
    }
    for (const i of done) {
      // Its log entry was never seen: its conflict copy (deterministic id) tells the outcome.
      const op = i.rec.op;
      if (!isTextOp(op)) continue;
      const copyId = conflictCopyId(this.#docId, op.opId);
      outbox.rebaseNext(i, this.#model.get(copyId) ? { copyId } : { version: op.baseVersion + 1 });
    }
    outbox.drop(done, false);
    const meta = this.#record();
    this.#savedSig = signature(meta);
    // The queue's changes as they are when the write runs (an op dropped meanwhile is not
    // put back).
    later(() => this.#store.saveSnapshot(meta, snap.blocks, outbox.takeWrites(), { back }).catch(this.#onStorageError));
    return change;
  }

  /** The meta record for IndexedDB. */
  #record() {
    return {
      docId: this.#docId,
      title: this.#model.title,
      titleVersion: this.#model.titleVersion,
      icon: this.#model.icon,
      lastSeq: this.#model.lastSeq,
      role: this.#role,
      mode: this.#mode,
      shared: this.#shared,
      sessions: this.#sessions,
      bulletGuest: this.#bulletGuest,
      savedAt: this.#now(),
      purged: this.#purged,
    };
  }
}

/** The meta fields whose change is worth a write. @param {Record<string, any>} m */
function signature(m) {
  return JSON.stringify([m.title, m.titleVersion, m.icon, m.lastSeq, m.role, m.mode, m.shared, m.sessions, m.bulletGuest, m.purged.length]);
}
