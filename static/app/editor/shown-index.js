// Where each shown row is: block id → position in the list of shown rows.
//
// An edit changes one stretch of that list (Enter inserts a row, Tab moves a subtree, a
// paste adds a few): giving every one of 50,000 rows its new position costs more than the
// rest of the edit. So the index is a map of positions in an older list (the base) plus the
// splices made since, and a lookup walks the few splices. The base is rebuilt only when it
// is missing (a list unrelated to the last) or the splices pile up, best when idle.
//
// Invariant: `get(id)` is the position of `id` in the list last passed in (`reset` or
// `splice`), or undefined when it is not in it.

/** @typedef {{id: string}} Keyed */
/** @typedef {{at: number, removed: number, added: Map<string, number>}} Splice */

/** Splices after which a lookup rebuilds the base instead of walking them all. */
const MAX_SPLICES = 32;
/** A splice adding more rows than this rebuilds the base (a lookup in it is a map anyway). */
const MAX_ADDED = 2000;

export class ShownIndex {
  /** @type {Keyed[]} */
  #rows = [];
  /** @type {Map<string, number>|null} positions in the list the splices start from */
  #base = null;
  /** @type {Splice[]} */
  #splices = [];

  /** A list not made from the last one by a splice. @param {Keyed[]} rows */
  reset(rows) {
    this.#rows = rows;
    this.#base = null;
    this.#splices = [];
  }

  /**
   * `rows` is the last list with its rows [at, at + removed) replaced by rows[at, at + added).
   * @param {Keyed[]} rows @param {number} at @param {number} removed @param {number} added
   */
  splice(rows, at, removed, added) {
    if (!this.#base || this.#splices.length >= MAX_SPLICES || added > MAX_ADDED) {
      this.reset(rows);
      return;
    }
    /** @type {Map<string, number>} */
    const ids = new Map();
    for (let k = 0; k < added; k++) ids.set(rows[at + k].id, k);
    this.#splices.push({ at, removed, added: ids });
    this.#rows = rows;
  }

  /** Splices a lookup walks (0 right after a rebuild). */
  get pending() {
    return this.#splices.length;
  }

  /** Builds the base from the current list now (an idle moment), so lookups walk nothing. */
  rebuild() {
    /** @type {Map<string, number>} */
    const base = new Map();
    const rows = this.#rows;
    for (let i = 0; i < rows.length; i++) base.set(rows[i].id, i);
    this.#base = base;
    this.#splices = [];
  }

  /** @param {string} id @returns {number|undefined} */
  get(id) {
    if (!this.#base) this.rebuild();
    let pos = /** @type {Map<string, number>} */ (this.#base).get(id);
    for (const s of this.#splices) {
      const k = s.added.get(id);
      if (k !== undefined) pos = s.at + k;
      else if (pos === undefined || pos < s.at) continue;
      else if (pos >= s.at + s.removed) pos += s.added.size - s.removed;
      else pos = undefined;
    }
    return pos;
  }

  /** @param {string} id */
  has(id) {
    return this.get(id) !== undefined;
  }
}

/**
 * How `next` differs from `before`: the longest common start and end by id, and what lies
 * between them. `same` when the ids are the same in the same order.
 * @param {Keyed[]} before @param {Keyed[]} next
 * @returns {{same: boolean, at: number, removed: number, added: number}}
 */
export function spliceBetween(before, next) {
  const m = before.length;
  const n = next.length;
  let at = 0;
  while (at < m && at < n && (before[at] === next[at] || before[at].id === next[at].id)) at++;
  let tail = 0;
  while (tail < m - at && tail < n - at && (before[m - 1 - tail] === next[n - 1 - tail] || before[m - 1 - tail].id === next[n - 1 - tail].id)) tail++;
  const removed = m - at - tail;
  const added = n - at - tail;
  return { same: removed === 0 && added === 0, at, removed, added };
}
