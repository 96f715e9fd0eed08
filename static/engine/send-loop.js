// The send loop: one /sync (or snapshot) at a time with a batch from the outbox, its
// failures classified into backoff, offline, stop or one-op-at-a-time, and the keepalive send
// of a page going away. Invariants: at most one request in flight (a wish meanwhile sets
// `syncAgain`); ops go in queue order; an op put on the wire once is frozen (`sent`).

import { NetworkError, HttpError } from './http.js';

/** @typedef {import('./engine.js').DocSyncEngine} Engine */
/** @typedef {import('./types.js').Op} Op */
/** @typedef {import('./types.js').SyncReply} SyncReply */
/** @typedef {import('./outbox.js').QueueItem} QueueItem */

/**
 * Sending is leading edge, then throttled (PROTOCOL §7, amended): a stored change goes out at
 * once when no /sync is in flight and the last one left at least this long ago; changes made
 * meanwhile wait and go together, this long after the previous send. A continuous typist
 * costs at most ~10 /sync a second, and a colleague sees a keystroke one round trip later.
 */
export const THROTTLE_MS = 100;
export const BACKOFF_FIRST_MS = 1000;
export const BACKOFF_MAX_MS = 30_000;
/** Ops per /sync: under the server's 500 and its 2 MiB body limit for normal text. */
export const MAX_OPS_PER_SYNC = 200;
/** Browsers refuse keepalive bodies over 64 KiB in total. */
export const KEEPALIVE_BODY_LIMIT = 60_000;

/**
 * One exchange now: the snapshot first if there is no confirmed state yet, then /sync
 * with queued ops and the hold list. Only one runs at a time; a call meanwhile asks for
 * another run right after.
 * @param {Engine} eng
 */
export async function syncNow(eng) {
  if (eng.closed || eng.stopped || !eng.opened) return;
  if (eng.inFlight) {
    eng.syncAgain = true;
    return;
  }
  if (eng.sendTimer) {
    globalThis.clearTimeout(eng.sendTimer);
    eng.sendTimer = null;
    eng.sendDue = Infinity;
  }
  eng.syncAgain = false;
  eng.inFlight = true;
  /** @type {QueueItem[]} */
  let batch = [];
  /** @type {number|null} ms until the retry, null: no retry (stopped) */
  let retryIn = -1;
  try {
    if (!eng.loaded) await eng.reloadSnapshot();
    await leaveAdopted(eng);
    batch = eng.outbox.sendable().slice(0, eng.batchLimit);
    for (const i of batch) {
      i.inFlight = true;
      i.sent = true;
    }
    eng.lastSendAt = eng.now();
    const reply = /** @type {SyncReply} */ (await eng.post('sync', eng.syncBody(batch), false));
    if (eng.closed) return;
    eng.netDown = false;
    eng.synced = true;
    eng.backoffMs = 0;
    eng.retryAt = 0;
    eng.batchLimit = MAX_OPS_PER_SYNC;
    await eng.applyReply(reply);
    eng.wakeAfterExchange();
  } catch (e) {
    // The retry pulls anyway.
    eng.wakeInFlight = null;
    retryIn = eng.onRequestError(e, batch);
  } finally {
    for (const i of batch) i.inFlight = false;
    eng.inFlight = false;
  }
  if (eng.closed) return;
  if (retryIn === null || eng.stopped) {
    eng.emit();
    return;
  }
  if (retryIn >= 0) {
    eng.retryAt = eng.now() + retryIn;
    eng.armSend(retryIn);
  } else if (eng.syncAgain || eng.outbox.sendable().length > 0) {
    // Ops typed during the request, hasMore, or a lease asked for meanwhile: go again.
    eng.syncSoon(eng.syncAgain && eng.outbox.sendable().length === 0 ? 0 : eng.throttleDelay());
  }
  eng.restartPeriodic();
  eng.emit();
}

/**
 * Ends the sessions of the tabs whose queues were adopted (their leases go with them) before
 * their ops are sent under this client. A refusal (the ID is not ours to end) is not retried:
 * at worst an op becomes a conflict copy, and no text is lost. Network failures throw, and
 * the exchange is retried as a whole.
 * @param {Engine} eng
 */
async function leaveAdopted(eng) {
  for (const owner of [...eng.adoptedFrom]) {
    try {
      await eng.post('leave', { clientId: owner }, false);
    } catch (e) {
      if (!(e instanceof HttpError) || e.status >= 500) throw e;
    }
    eng.adoptedFrom.delete(owner);
  }
}

/**
 * Classifies a failed exchange; returns the delay before the retry, or null when sending
 * stops for good (no access).
 * @param {unknown} e
 * @param {QueueItem[]} batch
 * @returns {number|null}
 * @param {Engine} eng
 */
export function onRequestError(eng, e, batch) {
  if (e instanceof NetworkError) {
    eng.netDown = true;
    return eng.nextBackoff();
  }
  if (!(e instanceof HttpError)) {
    // A bug of ours, not the network: say so loudly, but keep retrying (the queue is safe).
    console.error('docsync engine: sync failed', e);
    return eng.nextBackoff();
  }
  eng.netDown = false;
  if (e.status === 401 || e.status === 403 || e.status === 404) {
    eng.stopSending(e);
    return null;
  }
  if (e.code === 'document_full' || e.code === 'write_budget') {
    // A budget, not a bad op: the text stays queued (on this device) and is sent again
    // later, when the budget refilled or the document has room.
    eng.noteNotice(`Not saved to the server yet: ${e.message}. Your text is kept on this device.`);
    return eng.nextBackoff();
  }
  if ((e.status === 400 || e.status === 413) && batch.length > 0) {
    if (batch.length > 1) {
      // One op makes the whole request invalid: find it by sending one at a time.
      eng.batchLimit = 1;
      return 0;
    }
    // This op can never be accepted; keeping it would block every op after it.
    eng.outbox.rebaseNext(batch[0], { version: /** @type {number} */ (batch[0].rec.op.baseVersion) });
    eng.outbox.drop(batch);
    eng.rebuildView();
    eng.noteNotice(`A change could not be saved: ${e.message}`);
    return 0;
  }
  return eng.nextBackoff();
}

/**
 * 1 s, 2 s, 4 s … at most 30 s (PROTOCOL §7).
 * @param {Engine} eng
 */
export function nextBackoff(eng) {
  eng.backoffMs = eng.backoffMs === 0 ? BACKOFF_FIRST_MS : Math.min(BACKOFF_MAX_MS, eng.backoffMs * 2);
  return eng.backoffMs;
}

/**
 * @param {HttpError} e
 * @param {Engine} eng
 */
export function stopSending(eng, e) {
  eng.stopped = true;
  eng.error = { status: e.status, code: e.code, message: e.message };
  eng.clearTimers();
  eng.stopLadder();
}

/**
 * @param {QueueItem[]} batch
 * @param {Engine} eng
 */
export function syncBody(eng, batch) {
  /** @type {Record<string, any>} */
  const body = { clientId: eng.clientId, lastSeq: eng.confirmed.lastSeq };
  if (batch.length) body.ops = batch.map((i) => i.rec.op);
  if (eng.mode === 'full') body.leases = { hold: eng.holdList() };
  return body;
}

/**
 * Sends everything unanswered plus `hold: []` with keepalive (the page may be frozen or
 * killed next). Exempt from the one-in-flight rule: a duplicate is harmless (same opIds).
 * The reply is not used; the next normal sync gets the same results.
 * @param {Engine} eng
 */
export function sendKeepalive(eng) {
  if (eng.stopped || eng.closed || !eng.opened) return;
  // Adopted ops wait for their old sessions' `leave` (leaveAdopted), which a keepalive
  // request cannot order before them: they stay on disk for the next start.
  const items = eng.adoptedFrom.size ? [] : eng.outbox.sendable();
  /** @type {Op[]} */
  const ops = [];
  let size = 200;
  for (const i of items) {
    const s = JSON.stringify(i.rec.op).length + 1;
    if (size + s > KEEPALIVE_BODY_LIMIT || ops.length >= MAX_OPS_PER_SYNC) break;
    size += s;
    ops.push(i.rec.op);
    i.sent = true;
  }
  if (ops.length === 0 && (eng.mode !== 'full' || eng.leases.size === 0)) return;
  /** @type {Record<string, any>} */
  const body = { clientId: eng.clientId, lastSeq: eng.confirmed.lastSeq, ops };
  if (eng.mode === 'full') body.leases = { hold: [] };
  eng.post('sync', body, true).catch(() => {});
}
