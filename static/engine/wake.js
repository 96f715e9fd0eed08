// What a wake-up (PROTOCOL §4) asks of an engine that is not exchanging with the server.
// Pure: the engine applies what this returns. Entries that came with the wake-up are applied
// without a /sync only if they start exactly at lastSeq + 1, run without a gap, are
// well-formed and the confirmed state is loaded; anything else — a gap, messages out of
// order, a lost message, a reader behind, a duplicate at or below lastSeq — pulls when the
// head is ahead of lastSeq or the lease news is new. Entries ending before headSeq (partial)
// are applied and the rest pulled. A bullet guest's wake-up (PROTOCOL §10) carries `since`
// and one `view` entry that brings its view from exactly that cursor: applied only at
// lastSeq === since (a tab that is elsewhere pulls, or has it already).

/** @typedef {import('./types.js').LogEntry} LogEntry */
/** @typedef {import('./transport.js').Wake} Wake */

/**
 * @param {Wake} w
 * @param {{lastSeq: number, leaseSeq: number, loaded: boolean}} at what this tab has
 * @returns {{entries: LogEntry[]|null, pull: (lastSeq: number) => boolean}} the entries to
 *   apply (null: none), and whether to pull once they are applied (given the new lastSeq)
 */
export function readWake(w, at) {
  const entries = w.entries ?? [];
  const leaseNews = w.leaseSeq !== undefined && w.leaseSeq !== at.leaseSeq;
  if (w.since !== undefined) {
    const fits = at.loaded && w.since === at.lastSeq && entries.length === 1 && isContiguous(entries) && entries[0].seq > at.lastSeq;
    if (fits) return { entries, pull: (last) => leaseNews || (w.headSeq !== undefined && w.headSeq > last) };
    const pull = w.headSeq === undefined || w.headSeq > at.lastSeq || leaseNews;
    return { entries: null, pull: () => pull };
  }
  if (entries.length && at.loaded && entries[0]?.seq === at.lastSeq + 1 && isContiguous(entries)) {
    // Small change delivered with the wake-up: no /sync needed for the content.
    return { entries, pull: (last) => leaseNews || (w.headSeq !== undefined && w.headSeq > last) };
  }
  const pull = w.headSeq === undefined || w.headSeq > at.lastSeq || leaseNews;
  return { entries: null, pull: () => pull };
}

/**
 * A wake-up that came while an exchange was under way pulls again after it only if it
 * announced more than the reply brought: a later head, other lease news, or an unknown head
 * ("anything may have happened": the send loop keeps it as an infinite head).
 * @param {{headSeq: number, leaseSeq?: number}} w @param {number} lastSeq @param {number} leaseSeq
 */
export function pullsAfterExchange(w, lastSeq, leaseSeq) {
  return w.headSeq > lastSeq || (w.leaseSeq !== undefined && w.leaseSeq !== leaseSeq);
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
