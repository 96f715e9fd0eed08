// The device copy's change records: what a save of the confirmed state changed, kept as one
// small record beside the buckets instead of a read-modify-write of every bucket it touches.
// A paste of 100 bullets lands in most of a 50,000-bullet document's 196 hashed buckets, and
// rewriting them (JSON of ~256 blocks each, read, parsed, written) took ≈ 40 ms of the main
// thread per save; its change record is one JSON text of 100 blocks. Each later save folds
// the entries of a few buckets into them (`foldPlan`), so the records stay few and small.
//
// Invariants: a document's state is its buckets with its change records applied in key
// order, each record's removals before its upserts (as one save removes, then upserts); an
// entry leaves a record only in the transaction that wrote it into its bucket.
//
// Pure functions: the store (store.js) does the IndexedDB reads and writes.

/** @typedef {import('./types.js').Block} Block */

/**
 * A change record as stored: `{up, rm}` (blocks upserted, IDs removed) as one JSON text.
 * @typedef {{up: Block[], rm: string[]}} Change
 */

/** @param {Block[]} up @param {string[]} rm @returns {string} */
export function changeRecord(up, rm) {
  return JSON.stringify({ up, rm });
}

/** @param {unknown} v @returns {Change} */
export function readChange(v) {
  return typeof v === 'string' ? JSON.parse(v) : { up: [], rm: [] };
}

/**
 * The blocks of the buckets with the change records applied, in order. Blocks come out in
 * no particular order (the model sorts siblings when it loads them).
 * @param {Block[]} blocks from the buckets @param {Change[]} changes in key order
 * @returns {Block[]}
 */
export function applyChanges(blocks, changes) {
  if (!changes.length) return blocks;
  /** @type {Map<string, Block|null>} the latest word on each ID the records mention */
  const latest = new Map();
  for (const c of changes) {
    for (const id of c.rm) latest.set(id, null);
    for (const b of c.up) latest.set(b.id, b);
  }
  /** @type {Block[]} */
  const out = [];
  for (const b of blocks) {
    if (!latest.has(b.id)) out.push(b);
  }
  for (const b of latest.values()) if (b) out.push(b);
  return out;
}

/**
 * Which buckets the next fold writes — up to `max` of them, those the oldest entries are in,
 * so old records empty first — and what that fold does to a bucket and to the records.
 * @param {Change[]} changes in key order
 * @param {(id: string) => number} bucketOf
 * @param {number} max
 */
export function foldPlan(changes, bucketOf, max) {
  /** @type {Set<number>} */
  const pick = new Set();
  outer: for (const c of changes) {
    for (const id of [...c.rm, ...c.up.map((b) => b.id)]) {
      if (pick.size >= max && !pick.has(bucketOf(id))) break outer;
      pick.add(bucketOf(id));
    }
  }
  return {
    buckets: [...pick],
    /**
     * A picked bucket's blocks with every record's entries for it applied, in order.
     * @param {number} i @param {Block[]} blocks
     */
    fold(i, blocks) {
      const byId = new Map(blocks.map((b) => [b.id, b]));
      for (const c of changes) {
        for (const id of c.rm) if (bucketOf(id) === i) byId.delete(id);
        for (const b of c.up) if (bucketOf(b.id) === i) byId.set(b.id, b);
      }
      return [...byId.values()];
    },
    /**
     * Each record without the picked buckets' entries: null when it is left empty, the
     * same object when nothing of it was folded.
     * @returns {(Change|null)[]}
     */
    rest() {
      return changes.map((c) => {
        const up = c.up.filter((b) => !pick.has(bucketOf(b.id)));
        const rm = c.rm.filter((id) => !pick.has(bucketOf(id)));
        if (!up.length && !rm.length) return null;
        return up.length === c.up.length && rm.length === c.rm.length ? c : { up, rm };
      });
    },
  };
}

/** How many entries (upserts and removals) the records hold. @param {Change[]} changes */
export function entriesOf(changes) {
  let n = 0;
  for (const c of changes) n += c.up.length + c.rm.length;
  return n;
}
