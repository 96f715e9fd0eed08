// DocSyncEngine (PROTOCOL §7): one open document in one tab. Invariants: the view is always
// the confirmed state with the queue re-applied by the server's rules (model.js); an op is
// counted in `pending` only once IndexedDB has it; at most one /sync is in flight; an op
// that was ever on the wire is never changed again (it may be resent, with the same opId).

import { TITLE_LEASE } from './model.js';
import { newBlockId } from './ids.js';
import { WakeLadder, STAGE_LABELS } from './transport.js';
import { LocalView } from './local-view.js';
import { Folds } from './folds.js';
import { DocApi } from './doc-api.js';
import { Notices } from './notices.js';
import { Link } from './link.js';
import { Inbound } from './inbound.js';
import { LeaseHolds, LEASE_KEEP_MS, FOCUS_IDLE_MS } from './leases.js';
import { Outbox } from './outbox.js';
import { Journal, readJournal, clearJournal } from './journal.js';
import { TabClaim, RELOAD_LOCK_WAIT_MS, ADOPT_GRACE_MS } from './tab-claim.js';
import { Confirmed } from './confirmed.js';
import { OthersLeases } from './others-leases.js';
import { LocalEdits } from './edits.js';
import { Exchange } from './exchange.js';
import { SendLoop, THROTTLE_MS, BACKOFF_FIRST_MS, BACKOFF_MAX_MS, MAX_OPS_PER_SYNC, KEEPALIVE_BODY_LIMIT } from './send-loop.js';

/** @typedef {import('./types.js').Op} Op */
/** @typedef {import('./types.js').EngineState} EngineState */
/** @typedef {import('./types.js').EngineOptions} EngineOptions */
/** @typedef {import('./types.js').EditResult} EditResult */
/** @typedef {import('./types.js').FlatRow} FlatRow */
/** @typedef {import('./types.js').Lock} Lock */
/** @typedef {import('./store.js').QueueRecord} QueueRecord */
/** @typedef {import('./outbox.js').QueueItem} QueueItem */

export { THROTTLE_MS, BACKOFF_FIRST_MS, BACKOFF_MAX_MS, MAX_OPS_PER_SYNC, KEEPALIVE_BODY_LIMIT };
export { LEASE_KEEP_MS, FOCUS_IDLE_MS };
export const RENEW_EVERY_MS = 7_000;
export { RELOAD_LOCK_WAIT_MS, ADOPT_GRACE_MS };
export const QUIET_EVERY_MS = 30_000;
export const INTERVAL_EVERY_MS = 3_000;

export class DocSyncEngine {
  /** @param {EngineOptions} o */
  constructor(o) {
    this.docId = o.docId;
    this.clientId = o.clientId;
    this.user = o.user;
    this.store = o.store;
    this.baseUrl = o.baseUrl ?? '';
    this.fetchFn = o.fetch ?? globalThis.fetch?.bind(globalThis);
    this.headers = o.headers ?? {};
    /** This document's requests (doc-api.js). */
    this.api = new DocApi({
      docId: this.docId, baseUrl: this.baseUrl, headers: this.headers,
      // Read at each request: tools and tests may swap the engine's fetch.
      fetch: /** @type {typeof fetch} */ ((url, init) => this.fetchFn(url, init)),
    });
    this.now = o.now ?? (() => Date.now());
    const makeLadder = o.transport === undefined ? (/** @type {any} */ lo) => new WakeLadder(lo) : o.transport;
    /** The wake-up ladder and the connection's standing (link.js). */
    this.link = new Link(
      makeLadder
        ? () =>
            makeLadder({
              docId: this.docId, clientId: this.clientId, baseUrl: this.baseUrl, headers: this.headers,
              fetch: this.fetchFn, WebSocket: o.WebSocket, EventSource: o.EventSource,
              onWake: (w) => this.inbound.wake(w), onStage: () => this.onStageChange(),
            })
        : null,
    );

    /** What the server confirmed, with the document's standing (confirmed.js). */
    this.confirmed = new Confirmed({
      docId: this.docId, store: this.store, now: () => this.now(),
      onStorageError: (e) => this.setStorageError(e),
    });
    /** This device's copy, read by the app as it started (null: read it here). */
    this.earlyStored = o.stored ?? null;
    /** `localStorage` for the synchronous journal (journal.js); null: none. */
    this.storage = o.storage === undefined ? defaultStorage() : o.storage;
    this.journal = new Journal(this.storage, this.docId, () => this.clientId);
    /** This person's folds here, on this device: a view setting, not ops (folds.js). */
    this.folds = new Folds(this.storage, this.docId, this.user.userId);
    /** What this tab shows: confirmed + queue, and its rows with the folds (local-view.js). */
    this.local = new LocalView(this.confirmed.model.clone(), this.folds);
    /** Own ops on their way to the server (outbox.js). */
    this.outbox = new Outbox({
      docId: this.docId, clientId: () => this.clientId, store: this.store, journal: this.journal,
      onViewStale: () => { this.local.stale = true; },
      onStorageError: (e) => this.setStorageError(e),
    });

    /** Others' leases (others-leases.js): from the server, ending here when they run out. */
    this.others = new OthersLeases(() => this.now(), () => {
      this.local.stale = true;
      this.rebuildView();
      this.emit();
    });
    this.opened = false;
    this.closed = false;
    this.hidden = false;
    /** What the person is told (notices.js). */
    this.notices = new Notices();

    /** When to talk to the server (send-loop.js); what is said is this class's. */
    this.sending = new SendLoop({
      now: () => this.now(),
      active: () => !this.closed && !this.stopped && this.opened,
      exchange: (limit) => this.server.run(limit),
      hasWork: () => this.outbox.sendable().length > 0,
      backlog: () => this.outbox.sendable().length,
      period: () => this.period(),
      settled: () => this.emit(),
    });

    /** Our lease claims; when some run out, the server hears at once so others may edit. */
    this.leases = new LeaseHolds(
      () => this.now(),
      () => {
        if (this.mode === 'full') this.syncSoon(0);
      },
      () => !this.closed && !this.stopped,
      () => this.outbox.waitingOn(),
    );

    /** @type {Set<(s: EngineState) => void>} */
    this.listeners = new Set();
    /** This tab's client lock, and the queues of gone tabs (tab-claim.js). */
    this.claim = new TabClaim({
      docId: this.docId, store: this.store, storage: this.storage, clientId: () => this.clientId,
      locks: o.locks === undefined ? /** @type {any} */ (globalThis.navigator?.locks) ?? null : o.locks,
      adopt: (recs) => this.outbox.restore(recs),
      adoptedLate: () => {
        this.rebuildView();
        this.emit();
        this.syncSoon(0);
      },
      closed: () => this.closed,
      onStorageError: (e) => this.setStorageError(e),
    });
    /** Edits checked, applied and recorded for undo before they are queued (edits.js). */
    this.edits = new LocalEdits({
      local: this.local, journal: this.journal, notices: this.notices,
      role: () => this.role, locks: () => this.locks, context: () => this.opContext(),
      applied: (ops) => {
        // Queued first: a claim made by these ops lasts while they wait for the server.
        this.persistItems(this.outbox.add(ops, (op) => this.local.settle(op)));
        this.noteInput(ops);
        this.emit();
      },
      changed: () => this.emit(),
    });
    /** What the server says, onto the confirmed state and the view; the lease cursor (inbound.js). */
    this.inbound = new Inbound({
      confirmed: this.confirmed, local: this.local, outbox: this.outbox, link: this.link, others: this.others,
      sending: this.sending, notices: this.notices, api: this.api, snapshot: o.snapshot ?? null,
      clientId: () => /** @type {string} */ (this.clientId), userId: () => this.user.userId,
      full: () => this.mode === 'full', loaded: () => this.loaded,
      ended: () => this.closed || this.stopped, closed: () => this.closed,
      holdsLeases: () => this.leases.size > 0,
      rebuildView: () => this.rebuildView(), emit: () => this.emit(), afterPaint,
    });
    /** What an exchange says and what its failure means; the stop after 401/403/404 (exchange.js). @type {Exchange} */
    this.server = new Exchange({
      api: this.api, outbox: this.outbox, claim: this.claim, link: this.link, notices: this.notices,
      clientId: () => /** @type {string} */ (this.clientId), lastSeq: () => this.confirmed.lastSeq,
      full: () => this.mode === 'full', holdList: () => this.holdList(), holdsLeases: () => this.leases.size > 0,
      loaded: () => this.loaded, closed: () => this.closed,
      reloadSnapshot: () => this.inbound.reloadSnapshot(),
      applyReply: async (reply) => {
        await this.inbound.reply(reply);
        this.inbound.afterExchange();
        // A bullet left behind whose text the server now has: let go of it at once.
        if (this.mode === 'full' && this.leases.prune()) this.sending.changed();
      },
      dropped: () => this.rebuildView(),
      stopped: () => {
        this.clearTimers();
        this.link.stop();
      },
    });
    /** @type {EngineState} */
    this.state = this.buildState();
  }

  /** Sending stopped (401/403/404): the queue is kept. @returns {boolean} */
  get stopped() {
    return this.server.stopped;
  }

  /** The view's model: confirmed state + queue. */
  get view() {
    return this.local.model;
  }

  /** Lets go of this tab's client lock, as a tab that vanished would (tests, tools). */
  releaseOwnLock() {
    this.claim.release();
  }

  /** The queue's items, in order (read-only view for tools and tests). @returns {QueueItem[]} */
  get queue() {
    return this.outbox.items;
  }

  /** The document's standing as last heard from the server (or this device's copy). */
  get role() {
    return this.confirmed.role;
  }

  get mode() {
    return this.confirmed.mode;
  }

  get shared() {
    return this.confirmed.shared;
  }

  get sessions() {
    return this.confirmed.sessions;
  }

  /** The user sees only the bullets shared with them (PROTOCOL §10). */
  get bulletGuest() {
    return this.confirmed.bulletGuest;
  }

  /** A confirmed state exists (from this device or the server). */
  get loaded() {
    return this.confirmed.loaded;
  }

  // ---------------------------------------------------------------- public API

  /** @param {(s: EngineState) => void} fn @returns {() => void} unsubscribe */
  subscribe(fn) {
    this.listeners.add(fn);
    fn(this.state);
    return () => this.unsubscribe(fn);
  }

  /** @param {(s: EngineState) => void} fn */
  unsubscribe(fn) {
    this.listeners.delete(fn);
  }

  newBlockId() {
    return newBlockId();
  }

  /**
   * Shows the stored state at once, takes over orphaned queues, then talks to the server
   * (snapshot or sync) and starts the wake-up ladder. Resolves once the first exchange with
   * the server has settled (succeeded or failed); the stored state was emitted before that.
   */
  async open() {
    if (this.opened) return;
    this.opened = true;
    this.clientId = await this.claim.take(this.clientId);
    mark('docsync:client-lock');
    await this.loadStored();
    mark('docsync:stored');
    await this.claim.adoptOrphans();
    this.rebuildView();
    this.emit();
    mark('docsync:first-state');
    if (this.loaded && this.mode === 'full') this.startLadder();
    // Without a stored copy this loads the snapshot first, then syncs.
    await this.syncNow();
  }

  /**
   * The editor's one write path: the new flat list is diffed into ops, checked against
   * leases and role, applied to the view and queued (edits.js).
   * @param {FlatRow[]} next @param {{step: string}} opts @returns {EditResult}
   */
  commitRows(next, { step }) {
    return this.edits.commitRows(next, step);
  }

  /** Text typed, not yet handed over: journalled at once (edits.js). @param {string} blockId @param {string} content */
  noteTyping(blockId, content) {
    this.edits.noteTyping(blockId, content);
  }

  /**
   * Ops built by the caller instead of diffed from rows: checked, applied, recorded as one
   * undo step and queued exactly like commitRows' ops (tools, benchmarks, tests).
   * @param {Op[]} ops @param {{step: string}} opts @returns {EditResult}
   */
  submitOps(ops, { step }) {
    return this.edits.submit(ops, step);
  }

  /**
   * Folds or unfolds bullets for this person only (no op, no undo step; a viewer may fold).
   * @param {Iterable<[string, boolean]>} changes
   */
  setFolds(changes) {
    const shown = (/** @type {string} */ id) => this.folds.get(id) ?? !!this.view.get(id)?.collapsed;
    const changed = this.folds.set(changes, shown);
    if (changed.length === 0) return;
    this.local.refolded(changed);
    this.emit();
  }

  /** @param {string} text @returns {EditResult} */
  setTitle(text) {
    return this.edits.setTitle(text);
  }

  /**
   * The editor's focus moved. The new bullet's lease is requested at once; the one left
   * stays held 20 s.
   * @param {string|null} blockId a block ID, 'title', or null (nothing focused)
   */
  focus(blockId) {
    if (this.leases.focus(blockId) && this.mode === 'full') this.syncSoon(0);
    this.armLeaseTimer();
  }

  /** @returns {{done: boolean, skipped: {blockId: string, reason: string}[]}} */
  undo() {
    return this.edits.undoRedo('undo');
  }

  /** @returns {{done: boolean, skipped: {blockId: string, reason: string}[]}} */
  redo() {
    return this.edits.undoRedo('redo');
  }

  /** Accept a conflict copy: the original takes the copy's text and the copy goes. @param {string} copyId */
  acceptConflict(copyId) {
    return this.edits.resolveConflict('accept', copyId);
  }

  /** @param {string} copyId */
  discardConflict(copyId) {
    return this.edits.resolveConflict('discard', copyId);
  }

  /** Keep both: the copy stays as an ordinary bullet, marked resolved. @param {string} copyId */
  keepConflict(copyId) {
    return this.edits.resolveConflict('keep', copyId);
  }

  /**
   * Tab hidden: send what is pending with keepalive and release every lease (hold: []).
   * Visible again: sync at once (which asks for the focused bullet again).
   * @param {boolean} visible
   */
  setVisible(visible) {
    if (visible === !this.hidden) return;
    this.hidden = !visible;
    if (this.hidden) this.sendKeepalive();
    else {
      this.sending.resetBackoff();
      this.syncSoon(0);
    }
  }

  /** @param {boolean} online */
  setOnline(online) {
    this.link.setOnline(online);
    if (online) {
      // Back online: sync at once, without waiting out the backoff of the failures.
      this.sending.resetBackoff();
      this.syncSoon(0);
    }
    this.emit();
  }

  /** The page is going away: pending ops and `leave`, both with keepalive. */
  pageHide() {
    if (!this.hidden) this.sendKeepalive();
    this.api.leave(this.clientId, true).catch(() => {});
  }

  /** Stops timers and channels, ends the session (`leave`) and frees the client lock. */
  async close() {
    if (this.closed) return;
    this.closed = true;
    this.clearTimers();
    this.others.clear();
    this.link.stop();
    this.claim.close();
    if (!this.stopped) await this.api.leave(this.clientId, false).catch(() => {});
  }

  // ---------------------------------------------------------------- opening

  async loadStored() {
    try {
      // The confirmed copy needs no lock (only the queue does): the app may have read it
      // already, while the modules loaded.
      const early = this.earlyStored;
      this.earlyStored = null;
      const stored = (early ? await early.catch(() => null) : null) ?? (await this.store.loadDoc(this.docId));
      if (stored) this.confirmed.restore(stored);
      // What the journal kept of the last run (a crash before IndexedDB committed) joins
      // the queue on disk first, so it is sent like everything else and exactly once.
      const journal = readJournal(this.storage, this.docId, this.clientId);
      const recs = journal.records.length || journal.draft
        ? await this.store.takeQueue(this.docId, this.clientId, this.clientId, journal)
        : await this.store.loadQueue(this.docId, this.clientId);
      if (journal.records.length || journal.draft) clearJournal(this.storage, this.docId, this.clientId);
      this.outbox.restore(recs);
    } catch (e) {
      this.setStorageError(e);
    }
  }

  startLadder() {
    this.inbound.startLadder();
  }

  // ---------------------------------------------------------------- local edits

  /** The context in which own ops are applied to the view (the server's rules). */
  opContext() {
    return {
      clientId: this.clientId,
      userId: this.user.userId,
      name: this.user.name,
      now: this.now(),
      heldByOthers: (/** @type {string} */ id) => this.locks.has(id),
      leasesEnabled: this.mode === 'full',
    };
  }

  /** Typing and new bullets claim their blocks (leases.js); a new claim brings the next sync forward. @param {Op[]} ops */
  noteInput(ops) {
    if (this.leases.noteInput(ops, () => this.focusedIsEditable())) this.sending.tighten();
    this.armLeaseTimer();
  }

  focusedIsEditable() {
    const f = this.leases.focused;
    if (!f) return false;
    if (f === TITLE_LEASE) return true;
    const b = this.view.get(f);
    return !!b && !b.deleted;
  }

  /** @param {QueueItem[]} items */
  persistItems(items) {
    const recs = items.map((i) => i.rec);
    this.store.putQueued(recs).then(
      () => {
        this.outbox.stored(items, recs);
        this.emit();
        this.sending.changed();
      },
      (e) => {
        this.outbox.saveFailed(items);
        this.setStorageError(e);
        this.sending.changed();
      },
    );
  }

  // ---------------------------------------------------------------- talking to the server

  /**
   * An exchange in `delay` ms unless one is due sooner (never before the backoff ran out).
   * @param {number} delay
   */
  syncSoon(delay) {
    this.sending.soon(delay);
  }

  /** One exchange now (or right after the one in flight). */
  async syncNow() {
    return this.sending.run();
  }

  /** An exchange is under way. */
  get inFlight() {
    return this.sending.inFlight;
  }

  /** Pending ops and `hold: []` with keepalive: the page may be frozen or killed next (exchange.js). */
  sendKeepalive() {
    this.server.keepalive(this.opened && !this.closed);
  }

  // ---------------------------------------------------------------- the view

  /** view = confirmed + queue, by the server's rules. */
  rebuildView() {
    this.local.rebuild(this.confirmed.model, this.queue.map((i) => i.rec.op), this.opContext());
  }

  /** Who holds which bullet, other than this tab. @returns {Map<string, Lock>} */
  get locks() {
    return this.others.map;
  }

  /** The wake-up ladder moved to another stage. */
  onStageChange() {
    this.sending.tighten();
    this.emit();
  }

  // ---------------------------------------------------------------- timers

  /**
   * The background sync: 3 s in the interval stage, 7 s while holding leases (renewal before
   * the server's 20 s run out), else 30 s; private mode: 30 s.
   */
  period() {
    if (this.mode === 'private') return QUIET_EVERY_MS;
    if (this.link.polling) return INTERVAL_EVERY_MS;
    return this.holdList().length > 0 ? RENEW_EVERY_MS : QUIET_EVERY_MS;
  }

  /** The hold list for the next request: claims not yet run out; nothing while hidden. */
  holdList() {
    // A viewer never edits, so it must not lock bullets away from editors.
    if (this.hidden || this.mode !== 'full' || this.role === 'viewer') return [];
    return this.leases.list();
  }

  /** The lease timer (leases.js), while the engine runs. */
  armLeaseTimer() {
    this.leases.arm();
  }

  clearTimers() {
    this.sending.clear();
    this.leases.clear();
  }

  // ---------------------------------------------------------------- state

  /** @param {unknown} e */
  setStorageError(e) {
    this.notices.storage(e);
    this.emit();
  }

  /** @returns {EngineState} */
  buildState() {
    const stage = this.link.stage(this.mode);
    return {
      docId: this.docId,
      title: this.view.title,
      titleVersion: this.view.titleVersion,
      icon: this.view.icon,
      role: this.role,
      mode: this.mode,
      shared: this.shared,
      sessions: this.sessions,
      bulletGuest: this.bulletGuest,
      people: this.confirmed.people,
      rows: this.local.rowList(),
      locks: this.locks,
      lastSeq: this.confirmed.lastSeq,
      stage,
      stageLabel: STAGE_LABELS[stage],
      pending: this.outbox.pending(),
      unsaved: this.outbox.unsaved(),
      loaded: this.loaded,
      synced: this.link.synced,
      error: this.server.error,
      notice: this.notices.notice,
      noticeSeq: this.notices.seq,
      storageError: this.notices.storageError,
    };
  }

  emit() {
    this.state = this.buildState();
    for (const fn of this.listeners) fn(this.state);
  }
}

/** The page's `localStorage`, or null where there is none or it throws (privacy settings). */
function defaultStorage() {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
}

/**
 * Runs `fn` once the browser is idle after this task (after the next paint), at most 1 s
 * later; in Node (tests), in the next task.
 * @param {() => void} fn
 */
function afterPaint(fn) {
  const idle = /** @type {any} */ (globalThis).requestIdleCallback;
  if (typeof idle === 'function') idle(fn, { timeout: 1000 });
  else setTimeout(fn, 0);
}

/** A named point of the start (the editor benchmark reads them); nothing where unsupported. @param {string} name */
function mark(name) {
  globalThis.performance?.mark?.(name);
}
