// The heights of the outline's rows, measured where drawn and estimated elsewhere, with the
// prefix sums the windowing needs (where row i starts, which row is at a given y).
//
// Invariant: `tops` holds the prefix sums for exactly the list last passed in (by identity)
// and the heights known at that time; a new list or a new measurement recomputes them.

/** @typedef {import('../../engine/types.js').Row} Row */

/** A row's height before it was ever drawn (px), from its type and length. @param {Row} r */
export function estimateHeight(r) {
  const base = r.type === 'h1' ? 42 : r.type === 'h2' ? 36 : r.type === 'h3' ? 30 : 24;
  const code = r.type === 'code';
  const lines = code ? r.content.split('\n').length : Math.max(1, Math.ceil(r.content.length / 90));
  return base + (lines - 1) * (code ? 22 : 24) + (code ? 22 : 0) + (r.conflictOf ? 30 : 0);
}

export class RowHeights {
  /** measured heights by block id (px) */
  #known = new Map();
  /** prefix sums over `#of` */
  #tops = new Float64Array(1);
  /** @type {Row[]|null} */
  #of = null;
  #dirty = true;

  /** Records a drawn row's height. @param {string} id @param {number} h */
  record(id, h) {
    if (h > 0 && this.#known.get(id) !== h) {
      this.#known.set(id, h);
      this.#dirty = true;
    }
  }

  /**
   * A new list with the same ids in the same order as the last one (typing): the sums stay.
   * @param {Row[]} before @param {Row[]} rows
   */
  carryOver(before, rows) {
    if (this.#of === before) this.#of = rows;
  }

  /** @param {Row[]} rows */
  #ensure(rows) {
    if (this.#of === rows && !this.#dirty) return;
    if (this.#tops.length < rows.length + 1) this.#tops = new Float64Array(rows.length + 1);
    let acc = 0;
    for (let i = 0; i < rows.length; i++) {
      this.#tops[i] = acc;
      acc += this.#known.get(rows[i].id) ?? estimateHeight(rows[i]);
    }
    this.#tops[rows.length] = acc;
    this.#of = rows;
    this.#dirty = false;
  }

  /** Where row i starts (px from the outline's top). @param {Row[]} rows @param {number} i */
  top(rows, i) {
    this.#ensure(rows);
    return this.#tops[i];
  }

  /** The height of rows [from, to). @param {Row[]} rows @param {number} from @param {number} to */
  span(rows, from, to) {
    this.#ensure(rows);
    return this.#tops[to] - this.#tops[from];
  }

  /** First index whose row ends below `y`. @param {Row[]} rows @param {number} y */
  indexAt(rows, y) {
    this.#ensure(rows);
    let lo = 0;
    let hi = rows.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#tops[mid + 1] <= y) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
