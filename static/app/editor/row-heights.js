// The heights of the outline's rows, measured where drawn and estimated elsewhere, with the
// prefix sums the windowing needs (where row i starts, which row is at a given y).
//
// Invariant: `#h` holds a height for each row of `#of` (measured, else estimated) and, once
// `#ensure` ran, `#tops` its prefix sums; a splice or a measurement moves only the heights
// after the first changed position (float additions, no lookups), a new list looks them up.

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
  /** the height of each row of `#of` by position, and their prefix sums (`#tops[i]`: row i's top) */
  #h = new Float64Array(0);
  #tops = new Float64Array(1);
  /** @type {Row[]|null} */
  #of = null;
  /** the first position whose top may be wrong (Infinity: all right) */
  #staleFrom = Infinity;

  /**
   * Records a drawn row's height; `at` is its position in the list last used, when known.
   * @param {string} id @param {number} h @param {number} [at]
   */
  record(id, h, at) {
    if (h <= 0 || this.#known.get(id) === h) return;
    this.#known.set(id, h);
    if (at !== undefined && this.#of && this.#of[at]?.id === id) {
      this.#h[at] = h;
      this.#staleFrom = Math.min(this.#staleFrom, at);
    } else this.#of = null;
  }

  /**
   * A new list with the same ids in the same order as the last one (typing): the sums stay.
   * @param {Row[]} before @param {Row[]} rows
   */
  carryOver(before, rows) {
    if (this.#of === before) this.#of = rows;
  }

  /**
   * `rows` is `before` with rows [at, at + removed) replaced by rows[at, at + added): the
   * heights around the stretch are moved, not looked up again (O(rows) in copies only).
   * @param {Row[]} before @param {Row[]} rows @param {number} at @param {number} removed @param {number} added
   */
  splice(before, rows, at, removed, added) {
    if (this.#of !== before) return;
    let h = this.#h;
    if (h.length < rows.length) {
      const grown = new Float64Array(2 * rows.length);
      grown.set(h.subarray(0, before.length));
      h = grown;
    }
    if (removed !== added) h.copyWithin(at + added, at + removed, before.length);
    for (let k = at; k < at + added; k++) h[k] = this.#known.get(rows[k].id) ?? estimateHeight(rows[k]);
    this.#h = h;
    this.#of = rows;
    this.#staleFrom = Math.min(this.#staleFrom, at);
  }

  /** @param {Row[]} rows */
  #ensure(rows) {
    const n = rows.length;
    if (this.#tops.length < n + 1) {
      this.#tops = new Float64Array(2 * n + 1);
      this.#staleFrom = 0;
    }
    if (this.#of !== rows) {
      if (this.#h.length < n) this.#h = new Float64Array(2 * n);
      for (let i = 0; i < n; i++) this.#h[i] = this.#known.get(rows[i].id) ?? estimateHeight(rows[i]);
      this.#of = rows;
      this.#staleFrom = 0;
    }
    if (this.#staleFrom >= n + 1) return;
    const tops = this.#tops;
    const h = this.#h;
    let i = Math.min(this.#staleFrom, n);
    let acc = i === 0 ? 0 : tops[i - 1] + h[i - 1];
    for (; i < n; i++) {
      tops[i] = acc;
      acc += h[i];
    }
    tops[n] = acc;
    this.#staleFrom = Infinity;
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
