// A selection of whole bullets (Shift+↑/↓, Shift+click): from an anchor bullet to a head
// bullet among the rows shown, each with its children. It holds only the two ids; what they
// cover is computed from the rows shown at the time, so a redraw or a colleague's edit never
// leaves it pointing at rows that moved.
//
// Invariant: either both ids are set (a selection exists) or neither is.

import { blockRange } from './outline-ops.js';

/** @typedef {import('../../engine/types.js').Row} Row */

export class BlockSelection {
  /** @type {string|null} */
  #anchor = null;
  /** @type {string|null} */
  #head = null;

  get active() {
    return this.#anchor != null;
  }
  get anchor() {
    return this.#anchor;
  }
  get head() {
    return this.#head;
  }

  /** Starts a selection of one bullet (or extends it when one exists). @param {string} id */
  start(id) {
    if (this.#anchor == null) this.#anchor = id;
    this.#head = id;
  }

  /** @param {string} anchor @param {string} head */
  set(anchor, head) {
    this.#anchor = anchor;
    this.#head = head;
  }

  clear() {
    const had = this.#anchor != null;
    this.#anchor = null;
    this.#head = null;
    return had;
  }

  /**
   * What the selection covers among the shown rows: every row drawn as selected, and the
   * roots an edit acts on. Empty when its bullets are no longer shown.
   * @param {Row[]} shown @param {(id: string) => number} indexOf
   * @returns {{ids: Set<string>, roots: Row[]}}
   */
  cover(shown, indexOf) {
    if (this.#anchor == null || this.#head == null) return { ids: new Set(), roots: [] };
    const a = indexOf(this.#anchor);
    const h = indexOf(this.#head);
    if (a < 0 || h < 0) return { ids: new Set(), roots: [] };
    const { from, to, roots } = blockRange(shown, a, h);
    const ids = new Set();
    for (let k = from; k < to; k++) ids.add(shown[k].id);
    return { ids, roots };
  }
}
