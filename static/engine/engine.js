// DocSyncEngine (PROTOCOL §7): one open document in one tab. Invariants: the view is always
// the confirmed state with the queue re-applied by the server's rules (model.js); an op is
// counted in `pending` only once IndexedDB has it; at most one /sync is in flight; an op
// that was ever on the wire is never changed again (it may be resent, with the same opId).

import { DocModel, TITLE_LEASE } from './model.js';
import { diffRows } from './diff.js';
import { inverseOps, UndoHistory } from './undo.js';
import { newOpId, newBlockId, newClientId } from './ids.js';
import { WakeLadder, STAGE_LABELS } from './transport.js';
import { ViewRows, changedInPlace } from './view-rows.js';
import { ApiError, requestJson } from './http.js';
import { LeaseHolds, LEASE_KEEP_MS, FOCUS_IDLE_MS } from './leases.js';
import { Outbox, baseVersionOf } from './outbox.js';
import { Journal, readJournal, clearJournal, journalOwners } from './journal.js';
import { Confirmed } from './confirmed.js';
import { OthersLeases } from './others-leases.js';
import { SendLoop, THROTTLE_MS, BACKOFF_FIRST_MS, BACKOFF_MAX_MS, MAX_OPS_PER_SYNC, KEEPALIVE_BODY_LIMIT } from './send-loop.js';

/** @typedef {import('./types.js').Op} Op */
/** @typedef {import('./types.js').Block} Block */
/** @typedef {import('./types.js').LogEntry} LogEntry */
/** @typedef {import('./types.js').Snapshot} Snapshot */
/** @typedef {import('./types.js').SyncReply} SyncReply */
/** @typedef {import('./types.js').OpResult} OpResult */
/** @typedef {import('./types.js').EngineState} EngineState */
/** @typedef {import('./types.js').EditResult} EditResult */
/** @typedef {import('./types.js').FlatRow} FlatRow */
/** @typedef {import('./types.js').Lock} Lock */
/** @typedef {import('./types.js').Stage} Stage */
/** @typedef {import('./types.js').Role} Role */
/** @typedef {import('./types.js').Mode} Mode */
/** @typedef {import('./store.js').DocStore} DocStore */
/** @typedef {import('./store.js').QueueRecord} QueueRecord */
/** @typedef {import('./store.js').LockManagerLike} LockManagerLike */
/** @typedef {import('./transport.js').Wake} Wake */
/** @typedef {import('./outbox.js').QueueItem} QueueItem */

export { THROTTLE_MS, BACKOFF_FIRST_MS, BACKOFF_MAX_MS, MAX_OPS_PER_SYNC, KEEPALIVE_BODY_LIMIT };
export { LEASE_KEEP_MS, FOCUS_IDLE_MS };
export const RENEW_EVERY_MS = 7_000;
/** How long a reloaded tab waits for its own clientId's lock before taking a fresh one. */
export const RELOAD_LOCK_WAIT_MS = 2_000;
/**
 * An orphaned queue whose tab let go of its lock is adopted this long after: a reloading tab
 * takes its own queue back within RELOAD_LOCK_WAIT_MS, and must (its user types on it next).
 */
export const ADOPT_GRACE_MS = RELOAD_LOCK_WAIT_MS + 500;
export const QUIET_EVERY_MS = 30_000;
export const INTERVAL_EVERY_MS = 3_000;
/** More rows changed than this in one commitRows: the whole list is diffed (see quickDiff). */
const QUICK_DIFF_MAX_ROWS = 32;

/**
 * @typedef {{
 *   docId: string, clientId: string, user: {userId: string, name: string}, store: DocStore,
 *   baseUrl?: string, fetch?: typeof fetch, WebSocket?: any, EventSource?: any,
 *   locks?: LockManagerLike|null, headers?: Record<string, string>, now?: () => number,
 *   transport?: ((o: import('./transport.js').LadderOptions) => LadderLike) | null,
 *   storage?: import('./journal.js').StorageLike | null,
 *   snapshot?: EarlySnapshot | null,
 *   stored?: Promise<{meta: import('./store.js').DocMeta, blocks: Block[]}|null> | null,
 * }} EngineOptions
 */

/**
 * A snapshot the app fetched as it started (a document this device has no copy of), for the
 * engine's first snapshot load instead of a request of its own — used only for the same
 * clientId, and only once; if it failed, the engine asks again.
 * @typedef {{clientId: string, promise: Promise<Snapshot>}} EarlySnapshot
 */

/**
 * What the engine needs of a wake-up ladder (WakeLadder, or a test/simulation stand-in).
 * @typedef {{start(): void, stop(): void, setOnline(b: boolean): void,
 *   noteCursor(headSeq: number, leaseSeq: number): void, stage: Stage, trying: Stage}} LadderLike
 */

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
    /** @type {LockManagerLike|null} */
    this.locksApi = o.locks === undefined ? /** @type {any} */ (globalThis.navigator?.locks) ?? null : o.locks;
    this.now = o.now ?? (() => Date.now());
    const makeLadder = o.transport === undefined ? (/** @type {any} */ lo) => new WakeLadder(lo) : o.transport;
    /** transport: null runs without wake-ups (3 s polling), as the interval stage does. */
    this.hasTransport = makeLadder !== null;
    /** @type {LadderLike|null} */
    this.ladder = null;
    this.makeLadder = () =>
      makeLadder
        ? makeLadder({
            docId: this.docId, clientId: this.clientId, baseUrl: this.baseUrl, headers: this.headers,
            fetch: this.fetchFn, WebSocket: o.WebSocket, EventSource: o.EventSource,
            onWake: (w) => this.onWake(w), onStage: () => this.onStageChange(),
          })
        : null;

    /** What the server confirmed, with the document's standing (confirmed.js). */
    this.confirmed = new Confirmed({
      docId: this.docId, store: this.store, now: () => this.now(),
      onStorageError: (e) => this.setStorageError(e),
    });
    this.view = this.confirmed.model.clone();
    /** The view's rows as handed out in EngineState (Row identity = unchanged row). */
    this.viewRows = new ViewRows();
    /** @type {EarlySnapshot|null} */
    this.earlySnapshot = o.snapshot ?? null;
    /** This device's copy, read by the app as it started (null: read it here). */
    this.earlyStored = o.stored ?? null;
    /** `localStorage` for the synchronous journal (journal.js); null: none. */
    this.storage = o.storage === undefined ? defaultStorage() : o.storage;
    this.journal = new Journal(this.storage, this.docId, () => this.clientId);
    /** Own ops on their way to the server (outbox.js). */
    this.outbox = new Outbox({
      docId: this.docId, clientId: () => this.clientId, store: this.store, journal: this.journal,
      onViewStale: () => { this.viewStale = true; },
      onStorageError: (e) => this.setStorageError(e),
    });
    this.history = new UndoHistory();

    /** -1: not known yet, so the first wake-up always pulls. */
    this.leaseSeq = -1;
    /** Others' leases (others-leases.js): from the server, ending here when they run out. */
    this.others = new OthersLeases(() => this.now(), () => {
      this.viewStale = true;
      this.rebuildView();
      this.emit();
    });
    this.opened = false;
    this.closed = false;
    /** Sending stopped (403/404/401): the queue is kept. */
    this.stopped = false;
    this.browserOffline = false;
    /** The last request failed with a network error. */
    this.netDown = false;
    /** An exchange with the server has succeeded since opening. */
    this.synced = false;
    this.hidden = false;
    /** @type {EngineState['error']} */
    this.error = null;
    /** @type {string|null} */
    this.notice = null;
    /** Counts notices, so the same text twice in a row is still a new notice. */
    this.noticeSeq = 0;
    /** @type {string|null} */
    this.storageError = null;

    /** When to talk to the server (send-loop.js); what is said is this class's. */
    this.sending = new SendLoop({
      now: () => this.now(),
      active: () => !this.closed && !this.stopped && this.opened,
      exchange: (limit) => this.exchange(limit),
      hasWork: () => this.outbox.sendable().length > 0,
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
    );

    /** Something the view depends on changed (queue, leases, icon): rebuild it. */
    this.viewStale = false;

    /** @type {Set<(s: EngineState) => void>} */
    this.listeners = new Set();
    /** @type {() => void} */
    this.releaseOwnLock = () => {};
    /** Ends the waits for orphaned queues' locks when the engine closes. */
    this.adoptWaits = new AbortController();
    /** Client IDs whose lock this engine waits for, to adopt their queue. @type {Set<string>} */
    this.watching = new Set();
    /**
     * Client IDs whose queue was adopted: the server hears `leave` for each before their ops
     * go out, so the gone tab's leases (its new bullets, its focused one) do not turn our
     * own text into conflict copies against ourselves. @type {Set<string>}
     */
    this.adoptedFrom = new Set();
    /** @type {EngineState} */
    this.state = this.buildState();
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
    await this.takeClientLock();
    mark('docsync:client-lock');
    await this.loadStored();
    mark('docsync:stored');
    await this.adoptOrphans();
    this.rebuildView();
    this.emit();
    mark('docsync:first-state');
    if (this.loaded && this.mode === 'full') this.startLadder();
    // Without a stored copy this loads the snapshot first, then syncs.
    await this.syncNow();
  }

  /**
   * The editor's one write path: the new flat list is diffed into ops, checked against
   * leases and role, applied to the view and queued.
   * @param {FlatRow[]} next
   * @param {{step: string}} opts
   * @returns {EditResult}
   */
  commitRows(next, { step }) {
    const refused = this.refuseIfViewer();
    if (refused) return refused;
    const ops = this.quickDiff(next) ?? diffRows(this.diffModel(), next, newOpId);
    return this.submitOps(ops, { step });
  }

  /**
   * Text typed into a bullet's field that the editor hands over later (after the frame is
   * painted): kept synchronously in the journal as the op it would become, so a crash in
   * between loses nothing. The next commit (or any edit) replaces it.
   * @param {string} blockId @param {string} content
   */
  noteTyping(blockId, content) {
    if (this.role === 'viewer') return;
    const b = this.view.get(blockId);
    if (!b || b.deleted || b.content === content) return;
    const prev = this.journal.draft;
    const opId = prev && prev.kind === 'set_content' && prev.blockId === blockId ? prev.opId : newOpId();
    this.journal.setDraft({ opId, kind: 'set_content', blockId, content, baseVersion: b.version });
  }

  /**
   * diffRows' answer in O(changed) for the typing case: the editor hands back the engine's
   * own Row objects for every unchanged row, and the few other rows keep their id and depth.
   * Those alone go through diffRows as a list of their own (all at depth 0, so its
   * same-shape path runs: per row, set_content and set_props of what differs, exactly as
   * for the whole list). null when the list is not of that kind: diff all of it.
   * @param {FlatRow[]} next
   * @returns {Op[]|null}
   */
  quickDiff(next) {
    const rows = this.viewRows.get(this.view);
    if (next.length !== rows.length) return null;
    /** @type {number[]} */
    const at = [];
    for (let i = 0; i < next.length; i++) {
      const r = next[i];
      if (r === rows[i]) continue;
      if (r.id !== rows[i].id || r.depth !== rows[i].depth || at.length === QUICK_DIFF_MAX_ROWS) return null;
      at.push(i);
    }
    if (at.length === 0) return [];
    const current = at.map((i) => ({ ...rows[i], depth: 0 }));
    const changed = at.map((i) => ({ ...next[i], depth: 0 }));
    return diffRows(this.diffModel(current), changed, newOpId);
  }

  /**
   * Ops built by the caller instead of diffed from rows: checked, applied, recorded as one
   * undo step and queued exactly like commitRows' ops (tools, benchmarks, tests).
   * @param {Op[]} ops
   * @param {{step: string}} opts
   * @returns {EditResult}
   */
  submitOps(ops, { step }) {
    // What was typed is in these ops now (or was refused): no draft to recover.
    this.journal.setDraft(null);
    const refused = this.refuseIfViewer();
    if (refused) return refused;
    if (ops.length === 0) return { ok: true, ops };
    const locked = this.lockedBy(ops);
    if (locked) return this.refuseLocked(locked);
    return this.applyLocal(ops, step, true);
  }

  /** @param {string} text */
  setTitle(text) {
    const refused = this.refuseIfViewer();
    if (refused) return refused;
    if (text === this.view.title) return { ok: true, ops: [] };
    /** @type {Op} */
    const op = { opId: newOpId(), kind: 'set_title', title: text, baseVersion: this.view.titleVersion };
    const locked = this.lockedBy([op]);
    if (locked) return this.refuseLocked(locked);
    return this.applyLocal([op], 'typing', true);
  }

  /**
   * The editor's focus moved. The new bullet's lease is requested at once; the one left
   * stays held 20 s.
   * @param {string|null} blockId a block ID, 'title', or null (nothing focused)
   */
  focus(blockId) {
    if (this.leases.focus(blockId) && this.mode === 'full') this.requestSoon();
    this.armLeaseTimer();
  }

  /** @returns {{done: boolean, skipped: {blockId: string, reason: string}[]}} */
  undo() {
    return this.undoRedo('undo');
  }

  /** @returns {{done: boolean, skipped: {blockId: string, reason: string}[]}} */
  redo() {
    return this.undoRedo('redo');
  }

  /**
   * Accept a conflict copy: the original takes the copy's text (against the original's
   * current version) and the copy goes. Refused while another client holds either.
   * @param {string} copyId
   * @returns {EditResult}
   */
  acceptConflict(copyId) {
    const refused = this.refuseIfViewer();
    if (refused) return refused;
    const copy = this.view.get(copyId);
    if (!copy || copy.deleted || !copy.conflictOf) return this.invalid('That conflict copy is gone.');
    /** @type {Op[]} */
    let ops;
    if (copy.conflictOf === TITLE_LEASE) {
      ops = [
        { opId: newOpId(), kind: 'set_title', title: copy.content, baseVersion: this.view.titleVersion },
        { opId: newOpId(), kind: 'delete', blockId: copyId },
      ];
    } else {
      const orig = this.view.get(copy.conflictOf);
      if (!orig || orig.deleted) {
        // Decision: writing into a deleted original would bring it back with its own text
        // overwritten (text someone may still restore). The copy's text stays where it is,
        // now an ordinary bullet: marked resolved.
        ops = [{ opId: newOpId(), kind: 'set_props', blockId: copyId, props: { conflictResolved: true } }];
        const held = this.lockedBy(ops);
        if (held) return this.refuseLocked(held);
        return this.applyLocal(ops, 'props', true);
      }
      ops = [
        { opId: newOpId(), kind: 'set_content', blockId: orig.id, content: copy.content, baseVersion: orig.version },
        { opId: newOpId(), kind: 'delete', blockId: copyId },
      ];
    }
    const locked = this.lockedBy(ops);
    if (locked) return this.refuseLocked(locked);
    return this.applyLocal(ops, 'merge', true);
  }

  /** @param {string} copyId @returns {EditResult} */
  discardConflict(copyId) {
    const refused = this.refuseIfViewer();
    if (refused) return refused;
    const copy = this.view.get(copyId);
    if (!copy || copy.deleted || !copy.conflictOf) return this.invalid('That conflict copy is gone.');
    /** @type {Op[]} */
    const ops = [{ opId: newOpId(), kind: 'delete', blockId: copyId }];
    const orig = copy.conflictOf === TITLE_LEASE ? TITLE_LEASE : copy.conflictOf;
    const locked = this.locks.get(orig) ?? this.lockedBy(ops);
    if (locked) return this.refuseLocked(locked);
    return this.applyLocal(ops, 'delete', true);
  }

  /**
   * Keep both: the copy stays as an ordinary bullet below the original, marked resolved (no
   * more Accept / Discard, no longer counted as an open conflict).
   * @param {string} copyId
   * @returns {EditResult}
   */
  keepConflict(copyId) {
    const refused = this.refuseIfViewer();
    if (refused) return refused;
    const copy = this.view.get(copyId);
    if (!copy || copy.deleted || !copy.conflictOf) return this.invalid('That conflict copy is gone.');
    /** @type {Op[]} */
    const ops = [{ opId: newOpId(), kind: 'set_props', blockId: copyId, props: { conflictResolved: true } }];
    const locked = this.lockedBy(ops);
    if (locked) return this.refuseLocked(locked);
    return this.applyLocal(ops, 'props', true);
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
    this.browserOffline = !online;
    this.ladder?.setOnline(online);
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
    this.post('leave', { clientId: this.clientId }, true).catch(() => {});
  }

  /** Stops timers and channels, ends the session (`leave`) and frees the client lock. */
  async close() {
    if (this.closed) return;
    this.closed = true;
    this.clearTimers();
    this.others.clear();
    this.ladder?.stop();
    this.adoptWaits.abort();
    this.releaseOwnLock();
    if (!this.stopped) await this.post('leave', { clientId: this.clientId }, false).catch(() => {});
  }

  // ---------------------------------------------------------------- opening

  /**
   * Holds `docsync:client:<clientId>` for the engine's life, so no other tab adopts this
   * queue. If a live tab already holds it (a duplicated tab copies sessionStorage), this
   * engine takes a fresh clientId instead of sharing a queue.
   */
  async takeClientLock() {
    const api = this.locksApi;
    if (!api) return;
    for (let attempt = 0; attempt < 3; attempt++) {
      let got = await this.holdLock(api, this.clientId);
      // A reloaded tab keeps its clientId (sessionStorage), but the page being replaced may
      // not have let go of the lock yet (its release reaches the lock manager late). Taking
      // a fresh clientId at once would strand that page's queue — the user's offline typing
      // — until some later reload. So wait a little for our own clientId first; only a tab
      // that still holds it after that is a live duplicate.
      for (let waited = 0; got === 'taken' && attempt === 0 && waited < RELOAD_LOCK_WAIT_MS; waited += 100) {
        await new Promise((r) => setTimeout(r, 100));
        got = await this.holdLock(api, this.clientId);
      }
      if (got === 'held') return;
      if (got === 'broken') {
        // Web Locks unusable here: keep our clientId (and its queue) and adopt nothing,
        // since adoption could not be made exactly-once.
        this.locksApi = null;
        return;
      }
      this.clientId = newClientId();
    }
  }

  /**
   * @param {LockManagerLike} api @param {string} clientId
   * @returns {Promise<'held'|'taken'|'broken'>}
   */
  holdLock(api, clientId) {
    return new Promise((resolve) => {
      api
        .request(`docsync:client:${clientId}`, { ifAvailable: true }, (lock) => {
          if (!lock) {
            resolve('taken');
            return undefined;
          }
          resolve('held');
          return new Promise((release) => {
            this.releaseOwnLock = () => release(undefined);
          });
        })
        .catch(() => resolve('broken'));
    });
  }

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

  /**
   * Queues (and journals) of this document left by tabs that are gone — their client lock is
   * free — move to this client's queue. Taking the lock with ifAvailable makes the move
   * exactly-once. A queue whose tab still holds its lock is watched: when that tab goes
   * (closed, crashed, discarded), its queue is adopted then, not at some later start.
   */
  async adoptOrphans() {
    const api = this.locksApi;
    if (!api) return;
    try {
      const owners = new Set([...(await this.store.queueOwners(this.docId)), ...journalOwners(this.storage, this.docId)]);
      for (const owner of owners) {
        if (owner === this.clientId) continue;
        if (!(await this.adoptFrom(api, owner))) this.watchOrphan(api, owner);
      }
    } catch (e) {
      this.setStorageError(e);
    }
  }

  /**
   * Takes `owner`'s queue and journal if its lock is free. false: a live tab holds it.
   * @param {LockManagerLike} api @param {string} owner
   */
  async adoptFrom(api, owner) {
    const moved = await api.request(`docsync:client:${owner}`, { ifAvailable: true }, async (lock) => {
      if (!lock) return null;
      const taken = await this.store.takeQueue(this.docId, owner, this.clientId, readJournal(this.storage, this.docId, owner));
      clearJournal(this.storage, this.docId, owner);
      return taken;
    });
    if (moved === null) return false;
    this.outbox.restore(/** @type {QueueRecord[]} */ (moved));
    if (moved.length) this.adoptedFrom.add(owner);
    return true;
  }

  /**
   * Waits for a live tab's lock to be let go, then (after ADOPT_GRACE_MS, in which a
   * reloading tab takes its own queue back) adopts its queue, shows it and sends it.
   * @param {LockManagerLike} api @param {string} owner
   */
  watchOrphan(api, owner) {
    if (this.watching.has(owner) || this.closed) return;
    this.watching.add(owner);
    const signal = this.adoptWaits.signal;
    api
      .request(`docsync:client:${owner}`, { signal }, async () => {})
      .then(() => new Promise((r) => setTimeout(r, ADOPT_GRACE_MS)))
      .then(async () => {
        if (this.closed) return;
        this.watching.delete(owner);
        if (!(await this.adoptFrom(api, owner))) {
          this.watchOrphan(api, owner);
          return;
        }
        if (this.closed) return;
        this.rebuildView();
        this.emit();
        this.syncSoon(0);
      })
      .catch((e) => {
        this.watching.delete(owner);
        if (/** @type {any} */ (e)?.name !== 'AbortError') this.setStorageError(e);
      });
  }

  startLadder() {
    if (this.ladder || this.closed || this.stopped) return;
    this.ladder = this.makeLadder();
    if (!this.ladder) return;
    this.ladder.noteCursor(this.confirmed.lastSeq, Math.max(0, this.leaseSeq));
    if (this.browserOffline) this.ladder.setOnline(false);
    this.ladder.start();
  }

  stopLadder() {
    this.ladder?.stop();
    this.ladder = null;
  }

  // ---------------------------------------------------------------- local edits

  /** @returns {EditResult|null} */
  refuseIfViewer() {
    if (this.role !== 'viewer') return null;
    const message = 'You can only read this document.';
    this.setNotice(message);
    return { ok: false, reason: 'viewer', message };
  }

  /** @param {string} message @returns {EditResult} */
  invalid(message) {
    this.setNotice(message);
    return { ok: false, reason: 'invalid', message };
  }

  /** @param {Lock} lock @returns {EditResult} */
  refuseLocked(lock) {
    const message = `${lock.name} is editing this bullet right now.`;
    this.setNotice(message);
    return { ok: false, reason: 'locked', blockId: lock.blockId, heldBy: lock.name, message };
  }

  /**
   * The lock of another client that one of these ops would touch, if any. Inserts never
   * need a lease (a new bullet below a locked one is fine); a delete needs the whole
   * subtree free, as on the server (rule 6).
   * @param {Op[]} ops
   * @returns {Lock|null}
   */
  lockedBy(ops) {
    if (this.locks.size === 0) return null;
    for (const op of ops) {
      if (op.kind === 'insert') continue;
      if (op.kind === 'set_title') {
        const l = this.locks.get(TITLE_LEASE);
        if (l) return l;
        continue;
      }
      if (!op.blockId) continue;
      if (op.kind === 'delete') {
        for (const b of this.view.subtree(op.blockId)) {
          const l = this.locks.get(b.id);
          if (l && !b.deleted) return l;
        }
        continue;
      }
      const l = this.locks.get(op.blockId);
      if (l) return l;
    }
    return null;
  }

  /**
   * The view as diffRows sees it: `rows()` answers with the engine's own rows (equal by
   * value to the view's, and already computed) or the given ones, everything else is the
   * view itself.
   * @param {import('./types.js').Row[]} [given]
   * @returns {DocModel}
   */
  diffModel(given) {
    const view = this.view;
    const rows = given ?? this.viewRows.get(view);
    /** Methods bound to the view once, not per call (diff calls `get` per row). */
    const bound = new Map();
    return new Proxy(view, {
      get(target, key) {
        if (key === 'rows') return () => rows;
        const v = Reflect.get(target, key, target);
        if (typeof v !== 'function') return v;
        let f = bound.get(key);
        if (!f) bound.set(key, (f = v.bind(target)));
        return f;
      },
    });
  }

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

  /**
   * Applies own ops to the view (only these: no rebuild), records the undo step with each
   * op's inverse taken against the view just before it, queues and persists them.
   * @param {Op[]} ops @param {string} step @param {boolean} record
   * @returns {EditResult}
   */
  applyLocal(ops, step, record) {
    const ctx = this.opContext();
    /** @type {Op[]} */
    const inverse = [];
    /** Blocks whose rows changed in place; null: the rows must be recomputed. @type {string[]|null} */
    let inPlace = [];
    for (const op of ops) {
      // Each inverse against the view just before its op; undo runs them last-first.
      if (record) inverse.unshift(...inverseOps(this.view, op, newOpId));
      const before = 'blockId' in op ? this.view.get(op.blockId) : undefined;
      const { effects } = this.view.applyOp(op, ctx);
      if (inPlace) {
        const ids = changedInPlace(op, before, effects);
        if (ids) inPlace.push(...ids);
        else inPlace = null;
      }
    }
    if (inPlace) this.viewRows.patch(this.view, inPlace);
    else {
      // Inserted bullets were not shown before (Enter, paste): no lookup among the old rows.
      const inserted = new Set(ops.flatMap((op) => (op.kind === 'insert' ? [op.blockId] : [])));
      this.viewRows.invalidate((id) => inserted.has(id));
    }
    if (record) this.history.record({ kind: step, forward: ops, inverse, at: ctx.now });
    this.noteInput(ops);
    this.enqueue(ops);
    this.emit();
    return { ok: true, ops };
  }

  /** @param {'undo'|'redo'} which */
  undoRedo(which) {
    if (this.role === 'viewer') return { done: false, skipped: [] };
    const held = (/** @type {string} */ id) => this.locks.has(id);
    const { ops, skipped } = which === 'undo'
      ? this.history.undo(this.view, held, newOpId)
      : this.history.redo(this.view, held, newOpId);
    if (skipped.length) {
      this.noteNotice(skipped.length === 1
        ? `One ${which} step was skipped: someone else changed or holds that bullet.`
        : `${skipped.length} ${which} steps were skipped: someone else changed or holds those bullets.`);
    }
    if (ops.length) this.applyLocal(ops, which, false);
    else this.emit();
    return { done: ops.length > 0, skipped };
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

  /** Queues ops (merging typing into the last unsent text op) and writes them to disk. @param {Op[]} ops */
  enqueue(ops) {
    this.persistItems(this.outbox.add(ops));
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
        // Not on this device: still send it (the server is the other safe place).
        for (const i of items) i.saveFailed = true;
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

  /** A lease request: at once, not throttled. */
  requestSoon() {
    this.syncSoon(0);
  }

  /** One exchange now (or right after the one in flight). */
  async syncNow() {
    return this.sending.run();
  }

  /** An exchange is under way. */
  get inFlight() {
    return this.sending.inFlight;
  }

  /**
   * One exchange (SendLoop calls it, one at a time): the snapshot first if there is no
   * confirmed state yet, the `leave` of adopted tabs, then /sync with up to `limit` queued ops
   * and the hold list, its reply applied. A failure is read here (failed) and handed back.
   * @param {number} limit
   * @returns {Promise<import('./send-loop.js').Failure|null>}
   */
  async exchange(limit) {
    /** @type {QueueItem[]} */
    let batch = [];
    try {
      if (!this.loaded) await this.reloadSnapshot();
      await this.leaveAdopted();
      batch = this.outbox.sendable().slice(0, limit);
      for (const i of batch) {
        i.inFlight = true;
        i.sent = true;
      }
      const reply = /** @type {SyncReply} */ (await this.post('sync', this.syncBody(batch), false));
      if (this.closed) return null;
      this.netDown = false;
      this.synced = true;
      await this.applyReply(reply);
      this.wakeAfterExchange();
      return null;
    } catch (e) {
      return this.failed(e, batch);
    } finally {
      for (const i of batch) i.inFlight = false;
    }
  }

  /**
   * Ends the sessions of the tabs whose queues were adopted (their leases go with them)
   * before their ops are sent under this client. A refusal (the ID is not ours to end) is not
   * retried: at worst an op becomes a conflict copy, no text is lost. Network failures throw,
   * and the exchange is retried as a whole.
   */
  async leaveAdopted() {
    for (const owner of [...this.adoptedFrom]) {
      try {
        await this.post('leave', { clientId: owner }, false);
      } catch (e) {
        if (!(e instanceof ApiError) || e.offline || e.status >= 500) throw e;
      }
      this.adoptedFrom.delete(owner);
    }
  }

  /**
   * What a failed exchange means, with its effects here (stop, drop an op, a notice); the
   * send loop bends its schedule by the answer.
   * @param {unknown} e
   * @param {QueueItem[]} batch
   * @returns {import('./send-loop.js').Failure}
   */
  failed(e, batch) {
    if (e instanceof ApiError && e.offline) {
      this.netDown = true;
      return 'backoff';
    }
    if (!(e instanceof ApiError)) {
      // A bug of ours, not the network: say so loudly, but keep retrying (the queue is safe).
      console.error('docsync engine: sync failed', e);
      return 'backoff';
    }
    this.netDown = false;
    if (e.status === 401 || e.status === 403 || e.status === 404) {
      this.stopSending(e);
      return 'stop';
    }
    if (e.code === 'document_full' || e.code === 'write_budget') {
      // A budget, not a bad op: the text stays queued (on this device) and is sent again
      // later, when the budget refilled or the document has room.
      this.noteNotice(`Not saved to the server yet: ${e.message}. Your text is kept on this device.`);
      return 'backoff';
    }
    if ((e.status === 400 || e.status === 413) && batch.length > 0) {
      // One op makes the whole request invalid: find it by sending one at a time.
      if (batch.length > 1) return 'split';
      // This op can never be accepted; keeping it would block every op after it.
      this.outbox.rebaseNext(batch[0], { version: baseVersionOf(batch[0].rec.op) });
      this.outbox.drop(batch);
      this.rebuildView();
      this.noteNotice(`A change could not be saved: ${e.message}`);
      return 'now';
    }
    return 'backoff';
  }

  /** No access any more (401/403/404): the queue is kept, nothing is sent. @param {ApiError} e */
  stopSending(e) {
    this.stopped = true;
    this.error = { status: e.status, code: e.code, message: e.message };
    this.clearTimers();
    this.stopLadder();
  }

  /** @param {QueueItem[]} batch */
  syncBody(batch) {
    /** @type {Record<string, any>} */
    const body = { clientId: this.clientId, lastSeq: this.confirmed.lastSeq };
    if (batch.length) body.ops = batch.map((i) => i.rec.op);
    if (this.mode === 'full') body.leases = { hold: this.holdList() };
    return body;
  }

  /**
   * POSTs JSON to /api/v1/docs/{id}/{what}. Failures throw ApiError (http.js): status 0 when
   * there was no answer, else the server's status, code and message.
   * @param {string} what @param {unknown} body @param {boolean} keepalive
   */
  async post(what, body, keepalive) {
    return this.request('POST', `/api/v1/docs/${encodeURIComponent(this.docId)}/${what}`, body, keepalive);
  }

  /**
   * @param {string} method @param {string} path @param {unknown} body @param {boolean} keepalive
   * @returns {Promise<any>}
   */
  async request(method, path, body, keepalive) {
    return requestJson(this.fetchFn, this.url(path), { method, body, headers: this.headers, keepalive });
  }

  /** @param {string} path */
  url(path) {
    return this.baseUrl ? new URL(path, this.baseUrl).toString() : path;
  }

  /**
   * Sends everything unanswered plus `hold: []` with keepalive (the page may be frozen or
   * killed next). Exempt from the one-in-flight rule: a duplicate is harmless (same opIds).
   * The reply is not used; the next normal sync gets the same results.
   */
  sendKeepalive() {
    if (this.stopped || this.closed || !this.opened) return;
    // Adopted ops wait for their old sessions' `leave` (leaveAdopted), which a keepalive
    // request cannot order before them: they stay on disk for the next start.
    const items = this.adoptedFrom.size ? [] : this.outbox.sendable();
    /** @type {Op[]} */
    const ops = [];
    let size = 200;
    for (const i of items) {
      const n = JSON.stringify(i.rec.op).length + 1;
      if (size + n > KEEPALIVE_BODY_LIMIT || ops.length >= MAX_OPS_PER_SYNC) break;
      size += n;
      ops.push(i.rec.op);
      i.sent = true;
    }
    if (ops.length === 0 && (this.mode !== 'full' || this.leases.size === 0)) return;
    /** @type {Record<string, any>} */
    const body = { clientId: this.clientId, lastSeq: this.confirmed.lastSeq, ops };
    if (this.mode === 'full') body.leases = { hold: [] };
    this.post('sync', body, true).catch(() => {});
  }

  // ---------------------------------------------------------------- replies

  /**
   * A /sync reply: op results, standing, leases, log entries (or a snapshot reload on
   * `resync` or a gap); confirmed state and queue are persisted together (confirmed.js).
   * @param {SyncReply} reply
   */
  async applyReply(reply) {
    for (const why of this.outbox.applyResults(reply.results ?? [])) this.noteNotice(`A change was not applied: ${why}.`);
    this.applyMeta(reply);
    this.leaseSeq = reply.leaseSeq;
    if (this.mode === 'full') this.setLocks(reply.leases?.others ?? []);
    const fresh = (reply.ops ?? []).filter((e) => e.seq > this.confirmed.lastSeq);
    if (reply.resync || (fresh.length && fresh[0].seq !== this.confirmed.lastSeq + 1)) {
      // Ahead of the server, behind compaction, or a gap: start again from a snapshot.
      await this.reloadSnapshot();
      return;
    }
    this.applyEntries(fresh);
    this.ladder?.noteCursor(this.confirmed.lastSeq, this.leaseSeq);
    if (reply.hasMore) this.sending.again();
  }

  /** Role, mode, sharing, sessions, icon of a reply or snapshot, and what follows from them. @param {Partial<SyncReply>|Snapshot} r */
  applyMeta(r) {
    this.afterMeta(this.confirmed.meta(r));
  }

  /** @param {import('./confirmed.js').MetaChange} change */
  afterMeta(change) {
    if (change.iconChanged) this.viewStale = true;
    if (!change.modeChanged) return;
    if (this.mode === 'full') {
      // Someone else opened it or it was shared: leases and wake-ups from now on.
      this.startLadder();
      if (this.leases.size > 0) this.sending.again();
    } else {
      this.stopLadder();
      this.others.clear();
    }
  }

  /** Others' leases as `locks`. @param {import('./types.js').LeaseOfOther[]} others */
  setLocks(others) {
    // Queued ops re-apply against leases (a lock can turn an edit into a conflict copy).
    if (this.others.set(others, this.clientId, this.user.userId)) this.viewStale = true;
  }

  /** Who holds which bullet, other than this tab. @returns {Map<string, Lock>} */
  get locks() {
    return this.others.map;
  }

  /** Log entries contiguous with lastSeq onto the confirmed state; the view follows. @param {LogEntry[]} entries */
  applyEntries(entries) {
    this.confirmed.applyEntries(entries, this.outbox);
    if (entries.length || this.viewStale) this.rebuildView();
  }

  /**
   * GET the snapshot: the confirmed state is replaced, the queue kept on top. Throws like
   * `request`; the exchange that called it is retried.
   */
  async reloadSnapshot() {
    const early = this.earlySnapshot;
    this.earlySnapshot = null;
    const q = `?clientId=${encodeURIComponent(this.clientId)}`;
    /** @type {Snapshot} */
    const snap = (early && early.clientId === this.clientId ? await early.promise.catch(() => null) : null) ??
      (await this.request('GET', `/api/v1/docs/${encodeURIComponent(this.docId)}/snapshot${q}`, undefined, false));
    if (this.closed) return;
    this.netDown = false;
    this.afterMeta(this.confirmed.replace(snap, this.outbox, afterPaint));
    if (this.mode === 'full') this.setLocks(snap.leases?.others ?? []);
    this.rebuildView();
    this.ladder?.noteCursor(this.confirmed.lastSeq, Math.max(0, this.leaseSeq));
    if (this.mode === 'full') this.startLadder();
    this.emit();
  }

  /** view = confirmed + queue, by the server's rules. */
  rebuildView() {
    const v = this.confirmed.model.clone();
    const ctx = this.opContext();
    for (const i of this.queue) v.applyOp(i.rec.op, ctx);
    // A block the old view did not show is certainly a new row.
    const old = this.view;
    this.view = v;
    this.viewRows.invalidate((id) => {
      const b = old.get(id);
      return !b || b.deleted;
    });
    this.viewStale = false;
  }

  // ---------------------------------------------------------------- wake-ups

  /**
   * A wake-up (PROTOCOL §4). Entries that came with it are applied without a /sync only if
   * they start exactly at lastSeq + 1, run without a gap, are well-formed, the confirmed
   * state is loaded and no exchange is in flight (its reply is applied against lastSeq). A
   * wake-up during an exchange is kept and pulls after it only if it announced more than
   * the reply brought (so a writer does not pull its own change a second time). Anything
   * else — a gap, messages out of order, a lost message, a reader behind, a duplicate that
   * starts at or below lastSeq — pulls as usual when the head is ahead of lastSeq or the
   * lease news is new. Entries ending before headSeq (partial) are applied and the rest
   * pulled. A stopped engine (403/404) or a closed one ignores wake-ups.
   * @param {Wake} w
   */
  onWake(w) {
    if (this.closed || this.stopped) return;
    if (this.sending.inFlight) {
      // The exchange under way may bring this change already (a writer's own wake-up comes
      // while its /sync is still out): decide once its reply is applied (wakeAfterExchange).
      this.sending.noteWake(w);
      return;
    }
    const last = this.confirmed.lastSeq;
    const entries = w.entries ?? [];
    if (entries.length && this.loaded && entries[0]?.seq === last + 1 && isContiguous(entries)) {
      // Small change delivered with the wake-up: no /sync needed for the content.
      this.applyEntries(entries);
      this.ladder?.noteCursor(this.confirmed.lastSeq, this.leaseSeq);
      this.emit();
      const leaseNews = w.leaseSeq !== undefined && w.leaseSeq !== this.leaseSeq;
      const behind = w.headSeq !== undefined && w.headSeq > this.confirmed.lastSeq;
      if (leaseNews || behind) this.syncSoon(0);
      return;
    }
    if (w.headSeq === undefined || w.headSeq > last || (w.leaseSeq !== undefined && w.leaseSeq !== this.leaseSeq)) {
      this.syncSoon(0);
    }
  }

  /**
   * After a successful exchange: a wake-up that came during it pulls again only if it
   * announced more than the reply brought (a later head, other lease news, or an unknown
   * head: "anything may have happened").
   */
  wakeAfterExchange() {
    const w = this.sending.takeWake();
    if (!w) return;
    if (w.headSeq > this.confirmed.lastSeq || (w.leaseSeq !== undefined && w.leaseSeq !== this.leaseSeq)) {
      this.sending.again();
    }
  }

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
    if (!this.hasTransport || this.ladder?.trying === 'interval') return INTERVAL_EVERY_MS;
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

  /** @param {string} message */
  setNotice(message) {
    this.noteNotice(message);
    this.emit();
  }

  /** A new notice (shown with the next state), counted in noticeSeq. @param {string} message */
  noteNotice(message) {
    this.notice = message;
    this.noticeSeq++;
  }

  /** @param {unknown} e */
  setStorageError(e) {
    const err = /** @type {any} */ (e);
    const name = err?.name ? `${err.name}: ` : '';
    this.storageError = `Could not save on this device (${name}${err?.message ?? String(e)})`;
    this.emit();
  }

  /** @returns {Stage} */
  stage() {
    if (this.browserOffline || this.netDown) return 'offline';
    // Private mode runs no wake-up channel; its health is that of its syncs.
    if (this.mode === 'private') return this.synced ? 'live' : 'connecting';
    if (!this.hasTransport) return 'interval';
    return this.ladder ? this.ladder.stage : 'connecting';
  }

  /** @returns {EngineState} */
  buildState() {
    const stage = this.stage();
    return {
      docId: this.docId,
      title: this.view.title,
      titleVersion: this.view.titleVersion,
      icon: this.view.icon,
      role: this.role,
      mode: this.mode,
      shared: this.shared,
      sessions: this.sessions,
      people: this.confirmed.people,
      rows: this.viewRows.get(this.view),
      locks: this.locks,
      lastSeq: this.confirmed.lastSeq,
      stage,
      stageLabel: STAGE_LABELS[stage],
      pending: this.outbox.pending(),
      unsaved: this.outbox.unsaved(),
      loaded: this.loaded,
      synced: this.synced,
      error: this.error,
      notice: this.notice,
      noticeSeq: this.noticeSeq,
      storageError: this.storageError,
    };
  }

  emit() {
    this.state = this.buildState();
    for (const fn of this.listeners) fn(this.state);
  }
}

/** Well-formed entries with seqs n, n+1, n+2 … (anything else is pulled instead). @param {LogEntry[]} entries */
function isContiguous(entries) {
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    if (!e || typeof e.seq !== 'number' || typeof e.opId !== 'string' || !Array.isArray(e.effects)) return false;
    if (i > 0 && e.seq !== entries[i - 1].seq + 1) return false;
  }
  return true;
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
