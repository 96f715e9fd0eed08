// The editor's own find (Ctrl+F): it searches every bullet of the document — collapsed ones,
// ones outside the zoomed bullet and ones the windowing has not drawn — and steps through the
// hits, asking the page to show each one (scroll, or zoom to its parent when it is hidden).
//
// Invariants: the hit list is computed from the engine's rows of the moment of the query
// (a change to the document recomputes it on the next step); the bar never edits anything.
// The page highlights the words in the rows drawn at any moment (also after scrolling).

import { make } from './row-view.js';
import { whenIdle } from '../ui/dom.js';

/** @typedef {import('../../engine/types.js').Row} Row */

/**
 * Each row's text in lower case, kept per Row object: the engine replaces a Row when its
 * bullet changes and keeps it otherwise, so a key in the find box of a 50,000-bullet
 * document lowers no text again (it was ≈ 9 ms a key).
 * @type {WeakMap<object, string>}
 */
const lowered = new WeakMap();

/** @param {{content: string}} row */
function lowerOf(row) {
  let t = lowered.get(row);
  if (t === undefined) {
    t = row.content.toLowerCase();
    lowered.set(row, t);
  }
  return t;
}

/**
 * Indices of the rows whose text contains the query (case-insensitive; every word of the
 * query must occur). With `among`, only those indices are looked at (the hits of a query
 * this one narrows).
 * @param {{content: string}[]} rows @param {string} query @param {number[]} [among]
 * @returns {number[]}
 */
export function findMatches(rows, query, among) {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return [];
  /** @type {number[]} */
  const out = [];
  const n = among ? among.length : rows.length;
  for (let k = 0; k < n; k++) {
    const i = among ? among[k] : k;
    const text = lowerOf(rows[i]);
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
 * Whether every row matching `next` also matches `prev`: each word of `prev` is inside
 * a word of `next` at the same place (typing on: "bul" → "bull", "bullet" → "bullet 9").
 * @param {string} prev @param {string} next
 */
export function narrows(prev, next) {
  const a = prev.toLowerCase().split(/\s+/).filter(Boolean);
  const b = next.toLowerCase().split(/\s+/).filter(Boolean);
  if (!a.length || a.length > b.length) return false;
  return a.every((w, i) => b[i].includes(w));
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
    if (this.el.hidden) this.#prime();
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
    this.#of = null; // the next search looks at every row
    this.#at = -1;
    this.deps.clear();
    this.deps.onClose();
  }

  /**
   * Lowers every row's text once the bar is open, in idle moments of 5,000 rows each (≈ 15 ms
   * for 50,000 bullets in all, once; later openings find most texts kept), so neither the
   * opening nor the first key does it all; a key before then lowers what is left itself.
   */
  #prime() {
    const rows = this.deps.rows();
    const win = this.el.ownerDocument.defaultView;
    let i = 0;
    const step = () => {
      if (this.el.hidden) return;
      const end = Math.min(rows.length, i + 5000);
      for (; i < end; i++) lowerOf(rows[i]);
      if (i < rows.length) whenIdle(win, step, 200);
    };
    whenIdle(win, step, 200);
  }

  /** Runs a query and shows the first hit. @param {string} q */
  search(q) {
    const rows = this.deps.rows();
    // the same rows and a query that only narrows the last one: look among its hits only
    const among = rows === this.#of && narrows(this.#query, q) ? this.#hits : undefined;
    this.#query = q;
    this.#of = rows;
    this.#hits = findMatches(rows, q, among);
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
