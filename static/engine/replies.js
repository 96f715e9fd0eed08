// Replies from the server applied to the engine: op results, meta and leases of a /sync
// reply, log entries onto the confirmed state, snapshot reloads. Invariants: entries are
// applied only contiguous with lastSeq (a gap or `resync` reloads the snapshot); the
// confirmed state, its meta and the queue's acks/drops reach IndexedDB in one transaction.

import { DocModel, conflictCopyId } from './model.js';
import { textTarget } from './outbox.js';

/** @typedef {import('./engine.js').DocSyncEngine} Engine */
/** @typedef {import('./types.js').Block} Block */
/** @typedef {import('./types.js').LogEntry} LogEntry */
/** @typedef {import('./types.js').Snapshot} Snapshot */
/** @typedef {import('./types.js').SyncReply} SyncReply */
/** @typedef {import('./types.js').Lock} Lock */
/** @typedef {import('./outbox.js').QueueItem} QueueItem */

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
 * Applies a /sync reply: op results, meta, leases, log entries (or a snapshot reload on
 * `resync` or a gap), then persists confirmed state and queue in one transaction.
 * @param {SyncReply} reply
 * @param {Engine} eng
 */
export async function applyReply(eng, reply) {
  /** @type {QueueItem[]} */
  const dropped = [];
  const byOpId = eng.outbox.byOpId();
  for (const r of reply.results ?? []) {
    const item = byOpId.get(r.opId);
    if (!item) continue;
    if (r.status === 'rejected') {
      // The server refused it for good (e.g. a move into a deleted bullet): drop it.
      eng.outbox.rebaseNext(item, { version: /** @type {number} */ (item.rec.op.baseVersion) });
      dropped.push(item);
      const why = REJECTION_TEXT[r.reason ?? ''] ?? r.reason ?? 'refused';
      eng.noteNotice(`A change was not applied: ${why}.`);
    } else if (r.seq === null || r.seq === undefined) {
      // Nothing changed (same text as the server's): the version stays.
      eng.outbox.rebaseNext(item, { version: /** @type {number} */ (item.rec.op.baseVersion) });
      dropped.push(item);
    } else if (item.rec.ackedSeq === null) {
      // Applied or conflict: it stays shown on top until the log catches up to its seq.
      eng.outbox.setAcked(item, r.seq);
      eng.viewStale = true;
    }
  }
  eng.outbox.drop(dropped, false);
  eng.applyMeta(reply);
  eng.leaseSeq = reply.leaseSeq;
  if (eng.mode === 'full') eng.setLocks(reply.leases?.others ?? []);
  const fresh = (reply.ops ?? []).filter((e) => e.seq > eng.confirmed.lastSeq);
  if (reply.resync || (fresh.length && fresh[0].seq !== eng.confirmed.lastSeq + 1)) {
    // Ahead of the server, behind compaction, or a gap: start again from a snapshot.
    await eng.reloadSnapshot();
    return;
  }
  eng.applyEntries(fresh);
  eng.ladder?.noteCursor(eng.confirmed.lastSeq, eng.leaseSeq);
  if (reply.hasMore) eng.sending.again();
}

/** @param {Engine} eng @param {Partial<SyncReply>|Snapshot} r */
export function applyMeta(eng, r) {
  if (r.role) eng.role = r.role;
  if (typeof r.shared === 'boolean') eng.shared = r.shared;
  if (typeof r.sessions === 'number') eng.sessions = r.sessions;
  if (r.icon !== undefined && r.icon !== eng.confirmed.icon) {
    eng.confirmed.icon = r.icon;
    eng.viewStale = true;
  }
  if (r.mode && r.mode !== eng.mode) {
    eng.mode = r.mode;
    if (r.mode === 'full') {
      // Someone else opened it or it was shared: leases and wake-ups from now on.
      eng.startLadder();
      if (eng.leases.size > 0) eng.sending.again();
    } else {
      eng.stopLadder();
      eng.locks = new Map();
    }
  }
}

/** @param {Engine} eng @param {import('./types.js').LeaseOfOther[]} others */
export function setLocks(eng, others) {
  /** @type {Map<string, Lock>} */
  const next = new Map();
  for (const o of others) {
    if (o.clientId === eng.clientId) continue;
    next.set(o.blockId, { blockId: o.blockId, userId: o.userId, name: o.name });
  }
  if (!sameLocks(eng.locks, next)) {
    eng.locks = next;
    // Queued ops re-apply against leases (a lock can turn an edit into a conflict copy).
    eng.viewStale = true;
  }
}

/**
 * Entries contiguous with lastSeq go onto the confirmed state; own ops they confirm are
 * acknowledged; the view is rebuilt (queue re-applied) and everything is persisted in
 * one transaction.
 * @param {LogEntry[]} entries
 * @param {Engine} eng
 */
export function applyEntries(eng, entries) {
  /** @type {Map<string, Block>} */
  const changed = new Map();
  /** @type {string[]} */
  const purgedNow = [];
  const byOpId = eng.outbox.byOpId();
  for (const entry of entries) {
    eng.confirmed.applyEntry(entry);
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
      if (own.rec.ackedSeq === null) {
        eng.outbox.setAcked(own, entry.seq);
      }
      eng.outbox.rebaseNext(own, eng.outbox.outcomeOf(own.rec.op, entry));
    }
  }
  if (purgedNow.length) eng.purged = [...eng.purged, ...purgedNow];
  const done = eng.queue.filter((i) => i.rec.ackedSeq !== null && i.rec.ackedSeq <= eng.confirmed.lastSeq);
  eng.outbox.drop(done, false);
  if (entries.length || eng.viewStale) eng.rebuildView();
  const meta = eng.metaRecord();
  const queueWrites = eng.outbox.takeWrites();
  const metaChanged = metaSignature(meta) !== eng.savedMetaSig;
  if (!entries.length && !metaChanged && !queueWrites.del.length && !queueWrites.put.length) return;
  eng.savedMetaSig = metaSignature(meta);
  eng.store
    .saveConfirmed(meta, [...changed.values()], purgedNow, queueWrites)
    .catch((e) => eng.setStorageError(e));
}

/** The confirmed state's meta record for IndexedDB. @param {Engine} eng */
export function metaRecord(eng) {
  return {
    docId: eng.docId,
    title: eng.confirmed.title,
    titleVersion: eng.confirmed.titleVersion,
    icon: eng.confirmed.icon,
    lastSeq: eng.confirmed.lastSeq,
    role: eng.role,
    mode: eng.mode,
    shared: eng.shared,
    sessions: eng.sessions,
    savedAt: eng.now(),
    purged: eng.purged,
  };
}

/**
 * GET the snapshot: the confirmed state is replaced; the queue is kept and re-applied on
 * top (ops already in the snapshot are acknowledged ones and leave it). Throws like
 * `request`; the caller (syncNow) retries.
 * @param {Engine} eng
 */
export async function reloadSnapshot(eng) {
  const q = `?clientId=${encodeURIComponent(eng.clientId)}`;
  /** @type {Snapshot} */
  const snap = await eng.request('GET', `/api/v1/docs/${encodeURIComponent(eng.docId)}/snapshot${q}`, undefined, false);
  if (eng.closed) return;
  eng.netDown = false;
  // Purged IDs stay purged for good; the snapshot does not list them.
  eng.confirmed = DocModel.fromSnapshot(snap, eng.purged);
  eng.loaded = true;
  eng.applyMeta(snap);
  if (eng.mode === 'full') eng.setLocks(snap.leases?.others ?? []);
  const done = eng.queue.filter((i) => i.rec.ackedSeq !== null && i.rec.ackedSeq <= snap.headSeq);
  for (const i of eng.queue) {
    if (i.rec.ackedSeq !== null && i.rec.ackedSeq > snap.headSeq) {
      // Acknowledged at a seq the server no longer has (restored from a backup): send it
      // again; a server that still knows the opId answers with the stored result.
      eng.outbox.setAcked(i, null);
    }
  }
  for (const i of done) {
    // Its log entry was never seen: its conflict copy (deterministic id) tells the outcome.
    const op = i.rec.op;
    if (textTarget(op) === null) continue;
    const copyId = conflictCopyId(eng.docId, op.opId);
    eng.outbox.rebaseNext(i, eng.confirmed.get(copyId) ? { copyId } : { version: /** @type {number} */ (op.baseVersion) + 1 });
  }
  eng.outbox.drop(done, false);
  eng.rebuildView();
  eng.ladder?.noteCursor(eng.confirmed.lastSeq, Math.max(0, eng.leaseSeq));
  if (eng.mode === 'full') eng.startLadder();
  const meta = eng.metaRecord();
  eng.savedMetaSig = metaSignature(meta);
  eng.store
    .saveSnapshot(meta, snap.blocks, eng.outbox.takeWrites())
    .catch((e) => eng.setStorageError(e));
  eng.emit();
}

/** The meta fields whose change is worth a write. @param {Record<string, any>} m */
function metaSignature(m) {
  return JSON.stringify([m.title, m.titleVersion, m.icon, m.lastSeq, m.role, m.mode, m.shared, m.sessions, m.purged.length]);
}

/** @param {Map<string, Lock>} a @param {Map<string, Lock>} b */
function sameLocks(a, b) {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (!w || w.userId !== v.userId || w.name !== v.name) return false;
  }
  return true;
}
