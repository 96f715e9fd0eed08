// This tab's claim on its client ID, and the queues of tabs that are gone (Web Locks).
// Invariants: while the engine runs it holds `docsync:client:<clientId>`, so no other tab
// adopts its queue; a queue is moved to this client only under its old owner's lock, taken
// with ifAvailable, so each one is adopted exactly once; the sessions of adopted tabs are
// ended (`leave`) before their ops go out under this client.

import { newClientId } from './ids.js';
import { readJournal, clearJournal, journalOwners } from './journal.js';

/** @typedef {import('./store.js').DocStore} DocStore */
/** @typedef {import('./store.js').QueueRecord} QueueRecord */
/** @typedef {import('./store.js').LockManagerLike} LockManagerLike */

/** How long a reloaded tab waits for its own clientId's lock before taking a fresh one. */
export const RELOAD_LOCK_WAIT_MS = 2_000;
/**
 * An orphaned queue whose tab let go of its lock is adopted this long after: a reloading tab
 * takes its own queue back within RELOAD_LOCK_WAIT_MS, and must (its user types on it next).
 */
export const ADOPT_GRACE_MS = RELOAD_LOCK_WAIT_MS + 500;

/**
 * @typedef {{
 *   docId: string, store: DocStore, storage: import('./journal.js').StorageLike | null,
 *   locks: LockManagerLike | null, clientId: () => string,
 *   adopt: (records: QueueRecord[]) => void, adoptedLate: () => void,
 *   closed: () => boolean, onStorageError: (e: unknown) => void,
 * }} TabClaimOptions
 */

export class TabClaim {
  /** @param {TabClaimOptions} o */
  constructor(o) {
    this.o = o;
    /** Null where Web Locks are missing or unusable: then nothing is adopted. */
    this.locks = o.locks;
    /** Lets go of this tab's own lock. */
    this.release = () => {};
    /** Ends the waits for orphaned queues' locks. */
    this.waits = new AbortController();
    /** Client IDs whose lock this tab waits for, to adopt their queue. @type {Set<string>} */
    this.watching = new Set();
    /**
     * Client IDs whose queue was adopted: the server hears `leave` for each before their ops
     * go out, so the gone tab's leases (its new bullets, its focused one) do not turn our
     * own text into conflict copies against ourselves. @type {Set<string>}
     */
    this.adoptedFrom = new Set();
  }

  /** Adopted ops wait for their old sessions' `leave`. */
  get hasAdopted() {
    return this.adoptedFrom.size > 0;
  }

  /**
   * Takes the lock of `clientId` for the tab's life and returns the client ID this tab
   * holds: `clientId`, or a fresh one when a live tab already holds it (a duplicated tab
   * copies sessionStorage; sharing a queue would break exactly-once).
   * @param {string} clientId
   * @returns {Promise<string>}
   */
  async take(clientId) {
    const api = this.locks;
    if (!api) return clientId;
    let id = clientId;
    for (let attempt = 0; attempt < 3; attempt++) {
      let got = await this.hold(api, id);
      // A reloaded tab keeps its clientId (sessionStorage), but the page being replaced may
      // not have let go of the lock yet (its release reaches the lock manager late). Taking
      // a fresh clientId at once would strand that page's queue — the user's offline typing
      // — until some later reload. So wait a little for our own clientId first, taking it
      // the moment it is free; only a tab that still holds it after that is a live duplicate.
      if (got === 'taken' && attempt === 0) got = await this.holdWithin(api, id, RELOAD_LOCK_WAIT_MS);
      if (got === 'held') return id;
      if (got === 'broken') {
        // Web Locks unusable here: keep our clientId (and its queue) and adopt nothing,
        // since adoption could not be made exactly-once.
        this.locks = null;
        return id;
      }
      id = newClientId();
    }
    return id;
  }

  /**
   * @param {LockManagerLike} api @param {string} clientId
   * @returns {Promise<'held'|'taken'|'broken'>}
   */
  hold(api, clientId) {
    return new Promise((resolve) => {
      api
        .request(`docsync:client:${clientId}`, { ifAvailable: true }, (lock) => {
          if (!lock) {
            resolve('taken');
            return undefined;
          }
          resolve('held');
          return new Promise((release) => {
            this.release = () => release(undefined);
          });
        })
        .catch(() => resolve('broken'));
    });
  }

  /**
   * Waits up to `ms` for the lock, held from the moment it is free.
   * @param {LockManagerLike} api @param {string} clientId @param {number} ms
   * @returns {Promise<'held'|'taken'|'broken'>}
   */
  holdWithin(api, clientId, ms) {
    return new Promise((resolve) => {
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), ms);
      api
        .request(`docsync:client:${clientId}`, { signal: abort.signal }, () => {
          clearTimeout(timer);
          resolve('held');
          return new Promise((release) => {
            this.release = () => release(undefined);
          });
        })
        .catch((/** @type {any} */ e) => {
          clearTimeout(timer);
          resolve(e?.name === 'AbortError' ? 'taken' : 'broken');
        });
    });
  }

  /**
   * Queues (and journals) of this document left by tabs that are gone — their client lock is
   * free — move to this client's queue. A queue whose tab still holds its lock is watched:
   * when that tab goes (closed, crashed, discarded), its queue is adopted then, not at some
   * later start.
   */
  async adoptOrphans() {
    const api = this.locks;
    if (!api) return;
    const { docId, store, storage } = this.o;
    try {
      const owners = new Set([...(await store.queueOwners(docId)), ...journalOwners(storage, docId)]);
      for (const owner of owners) {
        if (owner === this.o.clientId()) continue;
        if (!(await this.adoptFrom(api, owner))) this.watch(api, owner);
      }
    } catch (e) {
      this.o.onStorageError(e);
    }
  }

  /**
   * Takes `owner`'s queue and journal if its lock is free. false: a live tab holds it.
   * @param {LockManagerLike} api @param {string} owner
   */
  async adoptFrom(api, owner) {
    const { docId, store, storage } = this.o;
    const moved = await api.request(`docsync:client:${owner}`, { ifAvailable: true }, async (lock) => {
      if (!lock) return null;
      const taken = await store.takeQueue(docId, owner, this.o.clientId(), readJournal(storage, docId, owner));
      clearJournal(storage, docId, owner);
      return taken;
    });
    if (moved === null) return false;
    this.o.adopt(/** @type {QueueRecord[]} */ (moved));
    if (moved.length) this.adoptedFrom.add(owner);
    return true;
  }

  /**
   * Waits for a live tab's lock to be let go, then (after ADOPT_GRACE_MS, in which a
   * reloading tab takes its own queue back) adopts its queue and says so (`adoptedLate`).
   * @param {LockManagerLike} api @param {string} owner
   */
  watch(api, owner) {
    if (this.watching.has(owner) || this.o.closed()) return;
    this.watching.add(owner);
    api
      .request(`docsync:client:${owner}`, { signal: this.waits.signal }, async () => {})
      .then(() => new Promise((r) => setTimeout(r, ADOPT_GRACE_MS)))
      .then(async () => {
        if (this.o.closed()) return;
        this.watching.delete(owner);
        if (!(await this.adoptFrom(api, owner))) {
          this.watch(api, owner);
          return;
        }
        if (!this.o.closed()) this.o.adoptedLate();
      })
      .catch((e) => {
        this.watching.delete(owner);
        if (/** @type {any} */ (e)?.name !== 'AbortError') this.o.onStorageError(e);
      });
  }

  /**
   * Ends the sessions of the tabs whose queues were adopted (their leases go with them)
   * before their ops are sent under this client. `refused` tells a final answer (not
   * retried: at worst an op becomes a conflict copy, no text is lost) from a failure that
   * throws again, for the exchange to be retried as a whole.
   * @param {(clientId: string) => Promise<unknown>} leave
   * @param {(e: unknown) => boolean} refused
   */
  async leaveAdopted(leave, refused) {
    for (const owner of [...this.adoptedFrom]) {
      try {
        await leave(owner);
      } catch (e) {
        if (!refused(e)) throw e;
      }
      this.adoptedFrom.delete(owner);
    }
  }

  /** The engine closes: no more waiting for others' locks, and our own is let go. */
  close() {
    this.waits.abort();
    this.release();
  }
}
