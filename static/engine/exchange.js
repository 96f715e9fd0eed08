// What one exchange with the server says, and what its failure means (PROTOCOL §7 "Sending"):
// the snapshot first when nothing is confirmed yet, the `leave` of adopted tabs, then /sync
// with a batch of the queue and the hold list; the keepalive request of a page going away.
// Owns the stop: after a 401/403/404 nothing more is sent and the queue stays on the device.
// When to exchange is SendLoop's; applying a reply is the engine's.
// Invariants: a batch taken from the outbox is handed back (`landed`) whatever happens; an op
// the server can never accept is dropped alone (found by splitting), never its neighbours.

import { ApiError } from './http.js';
import { baseVersionOf } from './outbox.js';
import { MAX_OPS_PER_SYNC, KEEPALIVE_BODY_LIMIT } from './send-loop.js';

/** @typedef {import('./types.js').SyncReply} SyncReply */
/** @typedef {import('./types.js').EngineState} EngineState */
/** @typedef {import('./outbox.js').QueueItem} QueueItem */
/** @typedef {import('./send-loop.js').Failure} Failure */

/**
 * @typedef {object} ExchangeDeps
 * @property {import('./doc-api.js').DocApi} api
 * @property {import('./outbox.js').Outbox} outbox
 * @property {import('./tab-claim.js').TabClaim} claim
 * @property {import('./link.js').Link} link
 * @property {import('./notices.js').Notices} notices
 * @property {() => string} clientId
 * @property {() => number} lastSeq
 * @property {() => boolean} full leases and wake-ups are on (the document is shared or open twice)
 * @property {() => string[]} holdList
 * @property {() => boolean} holdsLeases
 * @property {() => boolean} loaded
 * @property {() => boolean} closed
 * @property {() => Promise<void>} reloadSnapshot
 * @property {(reply: SyncReply) => Promise<void>} applyReply
 * @property {() => void} dropped an op was dropped from the queue: the view follows
 * @property {() => void} stopped no access any more: timers and wake-ups end
 */

export class Exchange {
  /** @type {ExchangeDeps} */
  #o;

  /** @param {ExchangeDeps} o */
  constructor(o) {
    this.#o = o;
    /** Sending stopped (401/403/404): the queue is kept. */
    this.stopped = false;
    /** @type {EngineState['error']} */
    this.error = null;
  }

  /**
   * One exchange (SendLoop calls it, one at a time) with up to `limit` queued ops; null when
   * it went through, else the failure as read here (with its effects done).
   * @param {number} limit
   * @returns {Promise<Failure|null>}
   */
  async run(limit) {
    const o = this.#o;
    /** @type {QueueItem[]} */
    let batch = [];
    try {
      if (!o.loaded()) await o.reloadSnapshot();
      await o.claim.leaveAdopted(
        (owner) => o.api.leave(owner, false),
        (e) => e instanceof ApiError && !e.offline && e.status < 500,
      );
      batch = o.outbox.takeForSending(limit);
      const reply = await o.api.sync(this.#body(batch), false);
      if (o.closed()) return null;
      o.link.exchanged();
      await o.applyReply(reply);
      return null;
    } catch (e) {
      return this.#failed(e, batch);
    } finally {
      o.outbox.landed(batch);
    }
  }

  /**
   * Sends everything unanswered plus `hold: []` with keepalive (the page may be frozen or
   * killed next). Exempt from the one-in-flight rule: a duplicate is harmless (same opIds).
   * The reply is not used; the next normal sync gets the same results.
   * @param {boolean} active the engine is open and not closed
   */
  keepalive(active) {
    const o = this.#o;
    if (this.stopped || !active) return;
    // Adopted ops wait for their old sessions' `leave` (leaveAdopted), which a keepalive
    // request cannot order before them: they stay on disk for the next start.
    let size = 200;
    let count = 0;
    const ops = o.claim.hasAdopted
      ? []
      : o.outbox.takeForKeepalive((op) => {
          const n = JSON.stringify(op).length + 1;
          if (size + n > KEEPALIVE_BODY_LIMIT || count >= MAX_OPS_PER_SYNC) return false;
          size += n;
          count++;
          return true;
        });
    if (ops.length === 0 && (!o.full() || !o.holdsLeases())) return;
    /** @type {Record<string, any>} */
    const body = { clientId: o.clientId(), lastSeq: o.lastSeq(), ops };
    if (o.full()) body.leases = { hold: [] };
    o.api.sync(body, true).catch(() => {});
  }

  /** @param {QueueItem[]} batch */
  #body(batch) {
    const o = this.#o;
    /** @type {Record<string, any>} */
    const body = { clientId: o.clientId(), lastSeq: o.lastSeq() };
    if (batch.length) body.ops = batch.map((i) => i.rec.op);
    if (o.full()) body.leases = { hold: o.holdList() };
    return body;
  }

  /**
   * What a failed exchange means, with its effects here (stop, drop an op, a notice); the
   * send loop bends its schedule by the answer.
   * @param {unknown} e @param {QueueItem[]} batch @returns {Failure}
   */
  #failed(e, batch) {
    const o = this.#o;
    if (e instanceof ApiError && e.offline) {
      o.link.lost();
      return 'backoff';
    }
    if (!(e instanceof ApiError)) {
      // A bug of ours, not the network: say so loudly, but keep retrying (the queue is safe).
      console.error('docsync engine: sync failed', e);
      return 'backoff';
    }
    o.link.reached();
    if (e.status === 401 || e.status === 403 || e.status === 404) {
      this.stopped = true;
      this.error = { status: e.status, code: e.code, message: e.message };
      o.stopped();
      return 'stop';
    }
    if (e.code === 'document_full' || e.code === 'write_budget') {
      // A budget, not a bad op: the text stays queued (on this device) and is sent again
      // later, when the budget refilled or the document has room.
      o.notices.note(`Not saved to the server yet: ${e.message}. Your text is kept on this device.`);
      return 'backoff';
    }
    if ((e.status === 400 || e.status === 413) && batch.length > 0) {
      // One op makes the whole request invalid: find it by sending one at a time.
      if (batch.length > 1) return 'split';
      if (e.status === 400 && !/\bops\[/.test(e.message)) {
        // The request was refused, not this op (the server names an op's field `ops[i]…`):
        // dropping the op would lose text for nothing. Keep it and try again later.
        o.notices.note(`The server refused a request: ${e.message}. Your text is kept on this device.`);
        return 'backoff';
      }
      // This op can never be accepted; keeping it would block every op after it.
      o.outbox.rebaseNext(batch[0], { version: baseVersionOf(batch[0].rec.op) });
      o.outbox.drop(batch);
      o.dropped();
      o.notices.note(`A change could not be saved: ${e.message}`);
      return 'now';
    }
    return 'backoff';
  }
}
