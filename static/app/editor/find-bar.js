// The editor's own find (Ctrl+F): it searches every bullet of the document — collapsed ones,
// ones outside the zoomed bullet and ones the windowing has not drawn — and steps through the
// hits, asking the page to show each one (scroll, or zoom to its parent when it is hidden).
//
// Invariants: the hit list is computed from the engine's rows of the moment of the query
// (a change to the document recomputes it on the next step); the bar never edits anything.
// The page highlights the words in the rows drawn at any moment (also after scrolling).

import { make } from './row-view.js';

/** @typedef {import('../../engine/types.js').Row} Row */

/**
 * Indices of the rows whose text contains the query (case-insensitive; every word of the
 * query must occur).
 * @param {{content: string}[]} rows @param {string} query
 * @returns {number[]}
 */
export function findMatches(rows, query) {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return [];
  /** @type {number[]} */
  const out = [];
  for (let i = 0; i < rows.length; i++) {
    const text = rows[i].content.toLowerCase();
    let all = true;
    for (const w of words) {
      if (!text.includes(w)) {
        all = false;
        break;
      }
    }
    if (all) out.push(i);
  }
  return out;
}

/**
 * @typedef {{
 *   rows: () => Row[],
 *   show: (id: string, query: string) => void,
 *   clear: () => void,
 *   onClose: () => void,
 * }} FindDeps
 */

export class FindBar {
  /** @type {Row[]|null} */
  #of = null;
  /** @type {number[]} */
  #hits = [];
  #at = -1;
  #query = '';

  /** @param {Document} doc @param {FindDeps} deps */
  constructor(doc, deps) {
    this.deps = deps;
    this.el = make(doc, 'div', 'ed-find');
    this.el.id = 'find-bar';
    this.el.setAttribute('role', 'search');
    this.el.hidden = true;
    this.input = make(doc, 'input', 'ed-find-input');
    this.input.type = 'search';
    this.input.id = 'find-input';
    this.input.placeholder = 'Find in this document';
    this.input.setAttribute('aria-label', 'Find in this document');
    this.count = make(doc, 'span', 'ed-find-count');
    this.count.id = 'find-count';
    this.count.setAttribute('aria-live', 'polite');
    const prev = make(doc, 'button', 'ed-find-btn', '↑');
    prev.type = 'button';
    prev.setAttribute('aria-label', 'Previous match');
    prev.title = 'Previous match (Shift+Enter)';
    const next = make(doc, 'button', 'ed-find-btn', '↓');
    next.type = 'button';
    next.setAttribute('aria-label', 'Next match');
    next.title = 'Next match (Enter)';
    const close = make(doc, 'button', 'ed-find-btn', '✕');
    close.type = 'button';
    close.setAttribute('aria-label', 'Close find');
    this.el.append(this.input, this.count, prev, next, close);
    this.input.addEventListener('input', () => this.search(this.input.value));
    this.input.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') {
        e.preventDefault();
        this.step(e.shiftKey ? -1 : 1);
      } else if (e.key === 'Escape') {
        e.preventDefault();
        e.stopPropagation();
        this.close();
      }
    });
    prev.addEventListener('click', () => this.step(-1));
    next.addEventListener('click', () => this.step(1));
    close.addEventListener('click', () => this.close());
  }

  get open() {
    return !this.el.hidden;
  }

  /** The query being shown ('' when none). */
  get query() {
    return this.el.hidden ? '' : this.#query;
  }

  /** Opens (or focuses) the bar with the query selected. @param {string} [query] */
  show(query) {
    this.el.hidden = false;
    if (query) this.input.value = query;
    this.input.focus();
    this.input.select();
    if (this.input.value) this.search(this.input.value);
  }

  close() {
    if (this.el.hidden) return;
    this.el.hidden = true;
    this.#hits = [];
    this.#at = -1;
    this.deps.clear();
    this.deps.onClose();
  }

  /** Runs a query and shows the first hit. @param {string} q */
  search(q) {
    this.#query = q;
    this.#of = this.deps.rows();
    this.#hits = findMatches(this.#of, q);
    this.#at = -1;
    if (this.#hits.length) this.step(1);
    else {
      this.deps.clear();
      this.#label();
    }
  }

  /** The next (+1) or previous (-1) hit. @param {number} dir */
  step(dir) {
    const rows = this.deps.rows();
    if (rows !== this.#of) {
      // the document changed: find again, staying near the hit we were on
      const was = this.#of && this.#at >= 0 ? this.#of[this.#hits[this.#at]]?.id : null;
      this.#of = rows;
      this.#hits = findMatches(rows, this.#query);
      const k = was ? this.#hits.findIndex((i) => rows[i].id === was) : -1;
      this.#at = k >= 0 ? k : -1;
    }
    if (!this.#hits.length) {
      this.#label();
      return;
    }
    this.#at = (this.#at + dir + this.#hits.length) % this.#hits.length;
    this.deps.show(rows[this.#hits[this.#at]].id, this.#query);
    this.#label();
  }

  #label() {
    const n = this.#hits.length;
    this.count.textContent = !this.#query.trim() ? '' : n === 0 ? 'No matches' : `${this.#at + 1} of ${n}`;
  }
}
