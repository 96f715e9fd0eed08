// What the server says, brought onto this tab (PROTOCOL §4, §7): /sync replies, snapshots
// and wake-ups reach the confirmed state (confirmed.js) and the view follows
// (local-view.js). Owns the lease cursor and the snapshot the app asked for early.
// Invariants: log entries are applied only contiguous with `lastSeq` — a gap, a `resync` or
// a cursor ahead of the server reloads the snapshot with the queue kept on top; the early
// snapshot is used at most once, and only when it was asked for with this tab's clientId.

import { readWake, pullsAfterExchange } from './wake.js';

/** @typedef {import('./types.js').Snapshot} Snapshot */
/** @typedef {import('./types.js').SyncReply} SyncReply */
/** @typedef {import('./types.js').LogEntry} LogEntry */
/** @typedef {import('./types.js').EarlySnapshot} EarlySnapshot */
/** @typedef {import('./types.js').LeaseOfOther} LeaseOfOther */
/** @typedef {import('./transport.js').Wake} Wake */

/**
 * @typedef {object} InboundParts
 * @property {import('./confirmed.js').Confirmed} confirmed
 * @property {import('./local-view.js').LocalView} local
 * @property {import('./outbox.js').Outbox} outbox
 * @property {import('./link.js').Link} link
 * @property {import('./others-leases.js').OthersLeases} others
 * @property {import('./send-loop.js').SendLoop} sending
 * @property {import('./notices.js').Notices} notices
 * @property {import('./doc-api.js').DocApi} api
 * @property {EarlySnapshot|null} snapshot the snapshot the app asked for while modules loaded
 * @property {() => string} clientId
 * @property {() => string} userId
 * @property {() => boolean} full the document is in full mode (leases, wake-ups)
 * @property {() => boolean} loaded a confirmed state exists
 * @property {() => boolean} ended closed, or stopped after 401/403/404
 * @property {() => boolean} closed
 * @property {() => boolean} holdsLeases this tab holds leases
 * @property {() => void} rebuildView view = confirmed + queue
 * @property {() => void} emit
 * @property {(fn: () => void) => void} afterPaint
 */

export class Inbound {
  /** @param {InboundParts} o */
  constructor(o) {
    this.o = o;
    /** -1: not known yet, so the first wake-up always pulls. */
    this.leaseSeq = -1;
    /** @type {EarlySnapshot|null} */
    this.earlySnapshot = o.snapshot;
  }

  /** The wake-up ladder from the cursors as they are now. */
  startLadder() {
    if (!this.o.ended()) this.o.link.start(this.o.confirmed.lastSeq, this.leaseSeq);
  }

  /**
   * A /sync reply: op results, standing, leases, log entries (or a snapshot reload on
   * `resync` or a gap); confirmed state and queue are persisted together (confirmed.js).
   * @param {SyncReply} reply
   */
  async reply(reply) {
    const { confirmed, outbox, notices, link, sending } = this.o;
    for (const why of outbox.applyResults(reply.results ?? [])) notices.note(`A change was not applied: ${why}.`);
    this.afterMeta(confirmed.meta(reply));
    this.leaseSeq = reply.leaseSeq;
    if (this.o.full()) this.setLocks(reply.leases?.others ?? []);
    const fresh = (reply.ops ?? []).filter((e) => e.seq > confirmed.lastSeq);
    if (reply.resync || (fresh.length && fresh[0].seq !== confirmed.lastSeq + 1)) {
      // Ahead of the server, behind compaction, or a gap: start again from a snapshot.
      await this.reloadSnapshot();
      return;
    }
    this.entries(fresh);
    link.noteCursor(confirmed.lastSeq, this.leaseSeq);
    if (reply.hasMore) sending.again();
  }

  /**
   * GET the snapshot: the confirmed state is replaced, the queue kept on top. Throws like
   * `request`; the exchange that called it is retried.
   */
  async reloadSnapshot() {
    const { confirmed, outbox, link, api } = this.o;
    const early = this.earlySnapshot;
    this.earlySnapshot = null;
    const clientId = this.o.clientId();
    /** @type {Snapshot} */
    const snap = (early && early.clientId === clientId ? await early.promise.catch(() => null) : null) ??
      (await api.snapshot(clientId));
    if (this.o.closed()) return;
    link.reached();
    this.afterMeta(confirmed.replace(snap, outbox, this.o.afterPaint));
    if (this.o.full()) this.setLocks(snap.leases?.others ?? []);
    this.o.rebuildView();
    link.noteCursor(confirmed.lastSeq, this.leaseSeq);
    if (this.o.full()) this.startLadder();
    this.o.emit();
  }

  /**
   * A wake-up (PROTOCOL §4), read by wake.js. During an exchange it is kept and pulls after
   * it only if it announced more than the reply brought (so a writer does not pull its own
   * change a second time). A stopped engine (403/404) or a closed one ignores wake-ups.
   * @param {Wake} w
   */
  wake(w) {
    const { confirmed, link, sending } = this.o;
    if (this.o.ended()) return;
    if (sending.inFlight) {
      sending.noteWake(w);
      return;
    }
    const { entries, pull } = readWake(w, { lastSeq: confirmed.lastSeq, leaseSeq: this.leaseSeq, loaded: this.o.loaded() });
    if (entries) {
      this.entries(entries);
      link.noteCursor(confirmed.lastSeq, this.leaseSeq);
      this.o.emit();
    }
    if (pull(confirmed.lastSeq)) sending.soon(0);
  }

  /** After a successful exchange: the wake-up that came during it, if it asks for more. */
  afterExchange() {
    const w = this.o.sending.takeWake();
    if (w && pullsAfterExchange(w, this.o.confirmed.lastSeq, this.leaseSeq)) this.o.sending.again();
  }

  /** What follows from a change of role, mode, sharing or icon. @param {import('./confirmed.js').MetaChange} change */
  afterMeta(change) {
    if (change.iconChanged) this.o.local.stale = true;
    if (!change.modeChanged) return;
    if (this.o.full()) {
      // Someone else opened it or it was shared: leases and wake-ups from now on.
      this.startLadder();
      if (this.o.holdsLeases()) this.o.sending.again();
    } else {
      this.o.link.stop();
      this.o.others.clear();
    }
  }

  /** Others' leases as locks. @param {LeaseOfOther[]} others */
  setLocks(others) {
    // Queued ops re-apply against leases (a lock can turn an edit into a conflict copy).
    if (this.o.others.set(others, this.o.clientId(), this.o.userId())) this.o.local.stale = true;
  }

  /** Log entries contiguous with lastSeq onto the confirmed state; the view follows. @param {LogEntry[]} entries */
  entries(entries) {
    const { confirmed, local, outbox } = this.o;
    const shown = entries.length > 0 &&
      local.shows(entries, confirmed.lastSeq, outbox.items.map((i) => i.rec.op));
    confirmed.applyEntries(entries, outbox, shown);
    if ((entries.length && !shown) || local.stale) this.o.rebuildView();
  }
}
