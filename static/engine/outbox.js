// The queue of own ops on their way to the server, in the order they were made. Invariants:
// an op that was ever on the wire (`sent`, or read back from disk) is never changed again
// except for the rebase of a held-back text op; what may go is an ordered prefix; `pending`
// counts the items on disk and not yet acknowledged.

import { TITLE_LEASE, conflictCopyId } from './model.js';

/** @typedef {import('./types.js').Op} Op */
/** @typedef {import('./types.js').LogEntry} LogEntry */
/** @typedef {import('./types.js').OpResult} OpResult */
/** @typedef {import('./store.js').DocStore} DocStore */
/** @typedef {import('./store.js').QueueRecord} QueueRecord */
/** @typedef {import('./store.js').QueueKey} QueueKey */
/** @typedef {import('./journal.js').Journal} Journal */

/**
 * An own op on its way to the server. `saved`: on disk (counts in `pending`); `sent`: was on
 * the wire at least once, so it is frozen (no more merging); `inFlight`: in the request now.
 * @typedef {{rec: QueueRecord, saved: boolean, saveFailed: boolean, sent: boolean,
 *   inFlight: boolean}} QueueItem
 */

/** What a text op did: the version it left, or the conflict copy its text went to. @typedef {{version: number} | {copyId: string}} Outcome */

export class Outbox {
  /**
   * @param {{docId: string, clientId: () => string, store: DocStore, journal: Journal,
   *   onViewStale: () => void, onStorageError: (e: unknown) => void}} o
   */
  constructor(o) {
    this.docId = o.docId;
    this.clientId = o.clientId;
    this.store = o.store;
    /** Holds each record synchronously until its IndexedDB write has committed. */
    this.journal = o.journal;
    /** Something the view is built from changed (an op rebased or dropped). */
    this.onViewStale = o.onViewStale;
    this.onStorageError = o.onStorageError;
    /** @type {QueueItem[]} */
    this.items = [];
    this.nextN = 1;
    /** Queue changes waiting for the next confirmed-state transaction. @type {QueueKey[]} */
    this.diskDel = [];
    /** @type {Set<QueueItem>} */
    this.diskPut = new Set();
    /** `pending` as last counted; -1: the queue changed since. */
    this.pendingCount = -1;
  }

  /** Items were added, removed, saved or acknowledged: count `pending` again. */
  changed() {
    this.pendingCount = -1;
  }

  /** Own ops on disk and not yet confirmed. */
  pending() {
    if (this.pendingCount < 0) this.pendingCount = this.items.filter((i) => i.saved && i.rec.ackedSeq === null).length;
    return this.pendingCount;
  }

  /**
   * Own ops shown on screen, not acknowledged, whose IndexedDB write has not completed (or
   * failed): safe nowhere yet.
   */
  unsaved() {
    return this.items.filter((i) => !i.saved && i.rec.ackedSeq === null).length;
  }

  /** Records read back from disk (own after a reload, or adopted): frozen, as they may have been sent. @param {QueueRecord[]} recs */
  restore(recs) {
    for (const rec of recs) {
      const item = { rec, saved: true, saveFailed: false, sent: true, inFlight: false };
      this.items.push(item);
      this.nextN = Math.max(this.nextN, rec.n + 1);
      const op = this.basedOnQueue(rec.op, this.items.length - 1);
      if (op !== rec.op) item.rec = { ...rec, op };
    }
    this.changed();
  }

  /**
   * A text op behind an earlier one of the same target is based on what that one will
   * leave: its version + 1. The editor's diff bases it on the view's version, which counts
   * every keystroke merged into the earlier op; re-applying the queue after a reload would
   * then show our own held-back text as a conflict copy. Such an op was never on the wire
   * (it waits for the earlier one's outcome, and rebaseNext sets the real base then).
   * @param {Op} op @param {number} at its index in `items`
   * @returns {Op}
   */
  basedOnQueue(op, at) {
    if (!isTextOp(op)) return op;
    const t = textTarget(op);
    for (let k = at - 1; k >= 0; k--) {
      const prev = this.items[k].rec.op;
      if (!isTextOp(prev) || textTarget(prev) !== t) continue;
      const base = prev.baseVersion + 1;
      return op.baseVersion === base ? op : { ...op, baseVersion: base };
    }
    return op;
  }

  /**
   * Queues ops. A set_content (or set_title) right after an unsent one of the same block
   * merges into it, keeping the first baseVersion: what the user saw when typing started.
   * `merged` hears of each op merged so (its base is the first one's).
   * @param {Op[]} ops @param {(op: Op) => void} [merged] @returns {QueueItem[]} the items to write to disk
   */
  add(ops, merged) {
    /** @type {QueueItem[]} */
    const changed = [];
    for (const op of ops) {
      const last = this.items[this.items.length - 1];
      const prevOp = last?.rec.op;
      if (last && prevOp && !last.sent && last.rec.ackedSeq === null && isTextOp(prevOp) && isTextOp(op) && mergeable(prevOp, op)) {
        last.rec = { ...last.rec, op: { ...op, opId: prevOp.opId, baseVersion: prevOp.baseVersion } };
        if (!changed.includes(last)) changed.push(last);
        merged?.(last.rec.op);
        continue;
      }
      /** @type {QueueItem} */
      const item = {
        rec: { docId: this.docId, clientId: this.clientId(), n: this.nextN++, op: this.basedOnQueue(op, this.items.length), ackedSeq: null },
        saved: false, saveFailed: false, sent: false, inFlight: false,
      };
      this.items.push(item);
      this.changed();
      changed.push(item);
    }
    this.journal.put(changed.map((i) => i.rec));
    return changed;
  }

  /**
   * IndexedDB committed these records (as they were when their write began): they count as
   * saved, and the journal lets go of them unless they changed since (a merge wrote again).
   * @param {QueueItem[]} items @param {QueueRecord[]} recs
   */
  stored(items, recs) {
    for (const i of items) i.saved = true;
    this.journal.committed(recs);
    this.changed();
  }

  /** Their IndexedDB write failed: not on this device, still sent (the server is the other safe place). @param {QueueItem[]} items */
  saveFailed(items) {
    for (const i of items) i.saveFailed = true;
  }

  /** The bullets (and 'title') an op of ours on which still waits for the server. @returns {Set<string>} */
  waitingOn() {
    const out = new Set();
    for (const i of this.items) out.add(i.rec.op.kind === 'set_title' ? TITLE_LEASE : /** @type {any} */ (i.rec.op).blockId);
    return out;
  }

  /**
   * Up to `limit` sendable items go into a request: frozen from now on (never merged again)
   * and in flight until `landed` (whatever the answer).
   * @param {number} limit
   * @returns {QueueItem[]}
   */
  takeForSending(limit) {
    const batch = this.sendable().slice(0, limit);
    for (const i of batch) {
      i.inFlight = true;
      i.sent = true;
    }
    return batch;
  }

  /** The request carrying `batch` is over. @param {QueueItem[]} batch */
  landed(batch) {
    for (const i of batch) i.inFlight = false;
  }

  /**
   * What a keepalive request may carry (the page may be gone next): sendable items in order
   * while `fits` says their op fits, frozen like any sent op. Not in flight: its answer is
   * never read, and a duplicate is harmless (same op IDs).
   * @param {(op: Op) => boolean} fits
   * @returns {Op[]}
   */
  takeForKeepalive(fits) {
    /** @type {Op[]} */
    const ops = [];
    for (const i of this.sendable()) {
      if (!fits(i.rec.op)) break;
      ops.push(i.rec.op);
      i.sent = true;
    }
    return ops;
  }

  /**
   * The results of a /sync: a refused op leaves the queue (the text ops behind it keep its
   * base), as does one that changed nothing; an applied or conflicting one is acknowledged
   * and stays shown on top until the log reaches its seq. Returns why each refused op was
   * refused, in words for the notice bar.
   * @param {OpResult[]} results
   * @returns {string[]}
   */
  applyResults(results) {
    /** @type {QueueItem[]} */
    const dropped = [];
    /** @type {string[]} */
    const refused = [];
    const byOpId = this.byOpId();
    for (const r of results) {
      const item = byOpId.get(r.opId);
      if (!item) continue;
      if (r.status === 'rejected' || r.seq === null || r.seq === undefined) {
        // Refused for good (e.g. a move into a deleted bullet), or nothing changed (same
        // text as the server's): the version stays what it was.
        this.rebaseNext(item, { version: baseVersionOf(item.rec.op) });
        dropped.push(item);
        if (r.status === 'rejected') refused.push(REJECTION_TEXT[r.reason ?? ''] ?? r.reason ?? 'refused');
      } else if (item.rec.ackedSeq === null) {
        this.setAcked(item, r.seq);
        // Applied as sent: the view (confirmed + queue) already shows it. A conflict copy
        // is the server's, not the view's.
        if (r.status !== 'applied') this.onViewStale();
      }
    }
    this.drop(dropped, false);
    return refused;
  }

  /** @returns {Map<string, QueueItem>} */
  byOpId() {
    return new Map(this.items.map((i) => [i.rec.op.opId, i]));
  }

  /** The server gave the op a seq: it stays shown on top until the log reaches it. @param {QueueItem} item @param {number|null} seq */
  setAcked(item, seq) {
    item.rec = { ...item.rec, ackedSeq: seq };
    this.changed();
    this.diskPut.add(item);
  }

  /**
   * The ops that may go on the wire now: a prefix of the queue (order matters: a delete
   * must not overtake the text typed before it) of ops on disk (or failed to get there)
   * and not yet answered. It ends before a text op whose target still has an earlier text
   * op in the queue: that one's outcome decides this one's baseVersion (see rebaseNext).
   */
  sendable() {
    /** @type {QueueItem[]} */
    const out = [];
    /** @type {Set<string>} */
    const open = new Set();
    for (const i of this.items) {
      const t = textTarget(i.rec.op);
      if (i.rec.ackedSeq !== null) {
        if (t !== null) open.add(t);
        continue;
      }
      if (t !== null && open.has(t)) break;
      if (!i.saved && !i.saveFailed) break;
      if (t !== null) open.add(t);
      out.push(i);
    }
    return out;
  }

  /**
   * A text op (set_content/set_title) left the queue with a known outcome: the text ops of
   * the same target held back behind it now know what they are based on.
   * - Applied (or nothing to change): the next one gets the version that outcome left.
   *   Sent with a guess instead, it could overwrite someone's text: if our op conflicted
   *   and another client's change took the version we guessed, ours would apply over theirs.
   * - Conflict: our text went to a conflict copy (deterministic ID, leased to us). Every
   *   later text op of the target continues that same typing, so all of them move to the
   *   copy (one copy holding the whole text, not one copy per batch); the first gets the
   *   copy's version 1, the others wait their turn behind it as usual.
   * @param {QueueItem} item
   * @param {Outcome} outcome
   */
  rebaseNext(item, outcome) {
    const t = textTarget(item.rec.op);
    if (t === null) return;
    const at = this.items.indexOf(item);
    for (let k = at + 1; k < this.items.length; k++) {
      const next = this.items[k];
      const op = next.rec.op;
      if (!isTextOp(op) || textTarget(op) !== t) continue;
      /** @type {Op} */
      let moved;
      if ('copyId' in outcome) {
        const content = op.kind === 'set_title' ? op.title : op.content;
        moved = { opId: op.opId, kind: 'set_content', blockId: outcome.copyId, content, baseVersion: 1 };
      } else if (op.baseVersion !== outcome.version) {
        moved = { ...op, baseVersion: outcome.version };
      } else {
        return;
      }
      next.rec = { ...next.rec, op: moved };
      this.journal.replace(next.rec);
      this.diskPut.add(next);
      this.onViewStale();
      if (!('copyId' in outcome)) return;
    }
  }

  /**
   * What a text op did, read from its own log entry: its conflict copy appears (then the
   * text is there), or the target's new version.
   * @param {Op} op @param {LogEntry} entry
   * @returns {Outcome}
   */
  outcomeOf(op, entry) {
    const copyId = conflictCopyId(this.docId, op.opId);
    for (const e of entry.effects) {
      if (e.e === 'block' && e.block.id === copyId) return { copyId };
    }
    for (const e of entry.effects) {
      if (op.kind === 'set_title' && e.e === 'title') return { version: e.titleVersion };
      if (op.kind === 'set_content' && e.e === 'block' && e.block.id === op.blockId) return { version: e.block.version };
    }
    return { version: baseVersionOf(op) };
  }

  /** Queue changes not yet on disk (drops, acks), for the next state transaction. */
  takeWrites() {
    const del = this.diskDel;
    const put = [...this.diskPut].filter((i) => this.items.includes(i)).map((i) => i.rec);
    this.diskDel = [];
    this.diskPut = new Set();
    return { del, put };
  }

  /**
   * Removes items from the queue (confirmed, rejected or undeliverable). With `persist`,
   * also deletes them on disk now; otherwise the caller's transaction does.
   * @param {QueueItem[]} items @param {boolean} [persist]
   */
  drop(items, persist = true, shown = false) {
    if (items.length === 0) return;
    const gone = new Set(items);
    this.items = this.items.filter((i) => !gone.has(i));
    this.changed();
    // `shown`: these ops are now in the confirmed state exactly as the view applied them.
    if (!shown) this.onViewStale();
    const keys = items.map((i) => ({ clientId: i.rec.clientId, n: i.rec.n }));
    this.journal.forget(keys);
    if (persist) {
      this.store.deleteQueued(this.docId, keys).catch((e) => this.onStorageError(e));
    } else {
      this.diskDel.push(...keys);
    }
  }
}

/** Why the server refused an op, in words for the notice bar. */
const REJECTION_TEXT = /** @type {Record<string, string>} */ ({
  locked: 'someone else is editing that bullet',
  deleted: 'that bullet was deleted',
  purged: 'that bullet was removed for good',
  cycle: 'a bullet cannot move inside itself',
  parent_deleted: 'the target bullet was deleted',
  unknown_block: 'that bullet no longer exists',
  duplicate_block: 'that bullet already exists',
  foreign_block: 'that bullet belongs to another document',
  invalid: 'the change was invalid',
  too_deep: 'the outline would get deeper than the server allows',
});

/**
 * A text op: set_content or set_title (the ops with a baseVersion that merge and rebase).
 * @param {Op} op @returns {op is import('./types.js').SetContentOp | import('./types.js').SetTitleOp}
 */
export function isTextOp(op) {
  return op.kind === 'set_content' || op.kind === 'set_title';
}

/** The baseVersion of a text op; 0 for every other op (they have none). @param {Op} op */
export function baseVersionOf(op) {
  return isTextOp(op) ? op.baseVersion : 0;
}

/** The target of a text op (block ID, or 'title'); null for every other op. @param {Op} op */
export function textTarget(op) {
  if (op.kind === 'set_content') return op.blockId;
  return op.kind === 'set_title' ? TITLE_LEASE : null;
}

/** @param {Op} a @param {Op} b */
function mergeable(a, b) {
  if (a.kind === 'set_content' && b.kind === 'set_content') return a.blockId === b.blockId;
  return a.kind === 'set_title' && b.kind === 'set_title';
}
