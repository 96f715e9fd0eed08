// Keys typed into a document's first screen before it is editable. The first screen is drawn
// read-only from what this device kept of it (first-screen.js) while the whole copy is read:
// a few hundred ms, seconds on a slow phone or a busy machine. A person who clicks a bullet
// and types at once lost those keys. They are held instead: kept in localStorage as they
// come (so a tab closed before the editor took over keeps them too) and typed again, in
// order, into the same bullet once the editor has the rows — by this page, or after a close
// by the next page that opens the document on this device. Each held key is typed once: the
// page that takes them removes them.

import { getSelectionOffsets, setSelectionOffsets } from './caret.js';

/**
 * A key held, with the bullet it was typed in and, for the first key typed there, where the
 * caret was (the click's place; null: the end).
 * @typedef {{id: string, key: string, shift: boolean, offset: number|null}} HeldKey
 */
/** @typedef {Pick<Storage, 'getItem'|'setItem'|'removeItem'>} StorageLike */

/**
 * Keys held besides single characters: what fast typing right after opening is made of. Not
 * Tab: in the read-only rows it moves the focus on, as it should for someone going through
 * the page by keyboard (held, it would indent a bullet once the editor had it).
 */
const KEYS = new Set(['Enter', 'Backspace', 'Delete', 'Home', 'End']);
/** Frames a structure key's render may take before the next key is typed anyway. */
const SETTLE_FRAMES = 10;

/** @param {string} userId @param {string} docId */
const keyOf = (userId, docId) => `docsync:typeahead:${userId}:${docId}`;

/** @param {unknown} k @returns {k is HeldKey} */
const isHeld = (k) => {
  const h = /** @type {any} */ (k);
  return !!h && typeof h.id === 'string' && typeof h.key === 'string' && typeof h.shift === 'boolean'
    && (h.offset === null || Number.isInteger(h.offset));
};

/** The held keys of one document on this device, by the page that held them. */
export class HeldKeys {
  /** @type {HeldKey[]} */
  #mine = [];
  /** this page's keys are not (all) in storage: take them from memory */
  #unstored = false;

  /**
   * @param {StorageLike|null} storage @param {string} userId @param {string} docId
   * @param {string} page a name for this page, never used again (a reload is another page)
   */
  constructor(storage, userId, docId, page) {
    this.storage = storage;
    this.key = keyOf(userId, docId);
    this.page = page;
  }

  /** @returns {Record<string, HeldKey[]>} */
  #read() {
    try {
      const raw = this.storage?.getItem(this.key);
      const v = raw ? JSON.parse(raw) : null;
      if (!v || typeof v !== 'object' || Array.isArray(v)) return {};
      /** @type {Record<string, HeldKey[]>} */
      const out = {};
      for (const [page, keys] of Object.entries(v)) {
        if (Array.isArray(keys)) out[page] = keys.filter(isHeld);
      }
      return out;
    } catch {
      return {};
    }
  }

  /** @param {HeldKey} k */
  add(k) {
    this.#mine.push(k);
    if (!this.storage) {
      this.#unstored = true;
      return;
    }
    try {
      const all = this.#read();
      all[this.page] = this.#mine;
      this.storage.setItem(this.key, JSON.stringify(all));
    } catch {
      this.#unstored = true; // full or refused: this page still has them
    }
  }

  /** True when this page holds keys. */
  get holding() {
    return this.#mine.length > 0;
  }

  /**
   * Every held key of the document — other pages' first (typed earlier), this page's last —
   * removed from storage. This page's own are left out when another page took them already.
   * @returns {HeldKey[]}
   */
  take() {
    const all = this.#read();
    try {
      this.storage?.removeItem(this.key);
    } catch {
      // nothing to do: each key is still typed only here
    }
    /** @type {HeldKey[]} */
    const out = [];
    for (const [page, keys] of Object.entries(all)) if (page !== this.page) out.push(...keys);
    if (all[this.page] || this.#unstored) out.push(...this.#mine);
    this.#mine = [];
    this.#unstored = false;
    return out;
  }
}

/**
 * Holds the keys typed into the read-only rows of `outline` until `stop`.
 * @param {HTMLElement} outline @param {HeldKeys} held @returns {() => void} stop
 */
export function holdKeys(outline, held) {
  /** @param {KeyboardEvent} e */
  const onKey = (e) => {
    if (e.isComposing || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key.length !== 1 && !KEYS.has(e.key)) return;
    const field = /** @type {HTMLElement} */ (e.target);
    if (!field?.classList?.contains('row-text') || field.isContentEditable) return;
    const id = /** @type {HTMLElement|null} */ (field.closest('.row'))?.dataset.blockId;
    if (!id) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    const sel = getSelectionOffsets(field);
    held.add({ id, key: e.key, shift: e.shiftKey, offset: sel ? sel.end : null });
  };
  outline.addEventListener('keydown', onKey, true);
  return () => outline.removeEventListener('keydown', onKey, true);
}

/** @param {Window} win */
const nextFrame = (win) => new Promise((resolve) => win.requestAnimationFrame(() => resolve(undefined)));

/**
 * Types held keys again into the editor's (now editable) rows, as the keyboard would: runs
 * of characters inserted at the caret, Enter, Backspace and Delete through the editor's own
 * key handling. A bullet that is gone meanwhile: its keys go into a new bullet at the end.
 * @param {import('./outline-view.js').OutlineView} view @param {HeldKey[]} keys
 */
export async function typeAgain(view, keys) {
  const doc = view.doc;
  const win = view.win;
  /** The field keys go into now. */
  const field = () => {
    const a = /** @type {HTMLElement|null} */ (doc.activeElement);
    return a && a.classList.contains('row-text') && a.isContentEditable ? a : null;
  };
  /** @param {string} key @param {boolean} shift */
  const press = (key, shift) => {
    const f = field();
    if (!f) return;
    const e = new KeyboardEvent('keydown', { key, shiftKey: shift, bubbles: true, cancelable: true });
    if (!f.dispatchEvent(e)) return;
    // Not taken by the editor: what the browser does with the key in text.
    if (key === 'Backspace') doc.execCommand('delete');
    else if (key === 'Delete') doc.execCommand('forwardDelete');
  };
  const settle = async () => {
    for (let i = 0; i < SETTLE_FRAMES && view.focusPending; i++) await nextFrame(win);
  };
  /** @type {string|null} */
  let heldIn = null;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i];
    if (k.id !== heldIn) {
      // The first key typed in this bullet (or after a click moved to it).
      heldIn = k.id;
      const v = view.ensure(k.id);
      if (v) view.focus(v, { offset: k.offset ?? (v.text.textContent ?? '').length });
      else {
        const rows = view.rows;
        const last = rows.length ? view.ensure(rows[rows.length - 1].id) : null;
        if (!last) return;
        view.focus(last, { offset: (last.text.textContent ?? '').length });
        press('Enter', false);
        await settle();
      }
    }
    if (k.key.length === 1) {
      let run = k.key;
      while (i + 1 < keys.length && keys[i + 1].key.length === 1 && keys[i + 1].id === heldIn) run += keys[++i].key;
      if (field()) doc.execCommand('insertText', false, run);
    } else if (k.key === 'Home' || k.key === 'End') {
      // As the key would: to the start or end of the visual line (a long bullet wraps).
      const f = field();
      const sel = doc.getSelection();
      if (f && sel && typeof sel.modify === 'function') sel.modify('move', k.key === 'Home' ? 'backward' : 'forward', 'lineboundary');
      else if (f) setSelectionOffsets(f, k.key === 'Home' ? 0 : (f.textContent ?? '').length);
    } else {
      press(k.key, k.shift);
      await settle();
    }
  }
}
