// `[[` in a bullet opens a list of the documents the user can read; typing filters it, ↑/↓
// choose, Enter or a click puts `[[doc_…]]` in place of `[[` and the typed words (shown as
// the target's title). It owns the popup and the list of documents; the text edit itself
// goes through the InputController (`insert`).
//
// Invariants: open only while the text before the caret is `[[` plus a query without `]`
// or a line break; the popup never takes the focus (the caret stays in the bullet).

import { make } from './row-view.js';
import { getSelectionOffsets } from './caret.js';

/** @typedef {import('./row-view.js').RowView} RowView */
/** @typedef {{docId: string, title: string}} DocChoice */

/** The query after an unfinished `[[` right before the caret, or null. @param {string} before */
export function openLinkQuery(before) {
  const m = /\[\[([^\]\n[]{0,60})$/.exec(before);
  return m ? m[1] : null;
}

/**
 * Documents matching a query (every word in the title, case-insensitive), best first: titles
 * starting with the query, then the rest in the given order; at most `limit`.
 * @param {DocChoice[]} docs @param {string} query @param {string} exclude this document
 */
export function matchDocs(docs, query, exclude, limit = 8) {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const q = query.trim().toLowerCase();
  const hits = docs.filter((d) => d.docId !== exclude && words.every((w) => d.title.toLowerCase().includes(w)));
  const starts = hits.filter((d) => q && d.title.toLowerCase().startsWith(q));
  const rest = hits.filter((d) => !starts.includes(d));
  return [...starts, ...rest].slice(0, limit);
}

export class LinkPicker {
  /** @type {DocChoice[]} */
  #docs = [];
  /** @type {DocChoice[]} */
  #shown = [];
  #at = 0;
  /** @type {{view: RowView, from: number, to: number}|null} where `[[query` is */
  #target = null;

  /**
   * @param {Document} doc
   * @param {{docId: string, docs: (fresh: boolean) => Promise<DocChoice[]>,
   *   insert: (v: RowView, from: number, to: number, text: string) => void}} deps
   */
  constructor(doc, deps) {
    this.doc = doc;
    this.deps = deps;
    this.el = make(doc, 'div', 'ed-linkpicker');
    this.el.id = 'link-picker';
    this.el.setAttribute('role', 'listbox');
    this.el.setAttribute('aria-label', 'Link to a document');
    this.el.hidden = true;
    this.el.addEventListener('pointerdown', (e) => {
      e.preventDefault(); // keep the caret in the bullet
      const item = /** @type {Element} */ (e.target).closest('[data-doc-id]');
      const i = item ? this.#shown.findIndex((d) => d.docId === /** @type {HTMLElement} */ (item).dataset.docId) : -1;
      if (i >= 0) this.#choose(i);
    });
  }

  get open() {
    return !this.el.hidden;
  }

  /** After typing in a bullet: open, filter or close. @param {RowView} v */
  async update(v) {
    const sel = getSelectionOffsets(v.text);
    const text = v.text.textContent ?? '';
    const query = sel && sel.start === sel.end ? openLinkQuery(text.slice(0, sel.start)) : null;
    if (query == null) {
      this.close();
      return;
    }
    const opening = !this.#target;
    this.#target = { view: v, from: sel ? sel.start - query.length - 2 : 0, to: sel ? sel.start : 0 };
    // each new `[[` asks for the list again (documents made or shared since)
    if (opening || !this.#docs.length) this.#docs = await this.deps.docs(opening).catch(() => this.#docs);
    if (!this.#target) return; // closed meanwhile
    this.#shown = matchDocs(this.#docs, query, this.deps.docId);
    this.#at = 0;
    this.#draw(query);
  }

  /** Keys while open: ↑/↓ choose, Enter/Tab take, Escape closes. @param {KeyboardEvent} e @returns {boolean} handled */
  onKey(e) {
    if (!this.open) return false;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      if (this.#shown.length) this.#at = (this.#at + (e.key === 'ArrowDown' ? 1 : -1) + this.#shown.length) % this.#shown.length;
      this.#mark();
      return true;
    }
    if (e.key === 'Enter' || e.key === 'Tab') {
      if (!this.#shown.length) {
        this.close();
        return false;
      }
      e.preventDefault();
      this.#choose(this.#at);
      return true;
    }
    if (e.key === 'Escape') {
      e.preventDefault();
      this.close();
      return true;
    }
    return false;
  }

  close() {
    this.#target = null;
    if (!this.el.hidden) this.el.hidden = true;
  }

  /** @param {number} i */
  #choose(i) {
    const t = this.#target;
    const d = this.#shown[i];
    this.close();
    if (t && d) this.deps.insert(t.view, t.from, t.to, `[[${d.docId}]]`);
  }

  /** @param {string} query */
  #draw(query) {
    const t = this.#target;
    if (!t) return;
    this.el.textContent = '';
    if (!this.#shown.length) {
      this.el.append(make(this.doc, 'div', 'ed-linkpicker-empty', query ? `No document called “${query}”` : 'No other documents yet'));
    }
    this.#shown.forEach((d, k) => {
      const item = make(this.doc, 'div', 'ed-linkpicker-item', d.title.trim() || 'Untitled');
      item.setAttribute('role', 'option');
      item.dataset.docId = d.docId;
      item.id = `link-option-${k}`;
      this.el.append(item);
    });
    this.#mark();
    // under the caret's line, inside the editor's column
    const r = t.view.text.getBoundingClientRect();
    const host = /** @type {HTMLElement} */ (this.el.offsetParent ?? this.el.parentElement);
    const base = host ? host.getBoundingClientRect() : { left: 0, top: 0 };
    this.el.style.left = `${Math.max(0, r.left - base.left)}px`;
    this.el.style.top = `${r.bottom - base.top + 4}px`;
    this.el.hidden = false;
  }

  #mark() {
    [...this.el.querySelectorAll('[role=option]')].forEach((e, k) => e.setAttribute('aria-selected', String(k === this.#at)));
  }
}
