// One drawn bullet: its DOM and what it last drew. A RowView changes only its own elements;
// the OutlineView decides which rows are drawn, in which order, and when to update them.
//
// Invariant: `row` is the Row the elements show (null before the first update; `stale`:
// draw everything again at the next update — `row` stays, a field being typed in still
// knows its bullet); `raw` says the text field holds the row's raw text (true while it is edited, and
// for text without markdown), otherwise `tokens` are the rendered tokens it shows.

import { fillInline, parseInline } from './markdown.js';
import { setSelectionOffsets } from './caret.js';

/** @typedef {import('../../engine/types.js').Row} Row */

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {Document} doc @param {K} tag @param {string} [cls] @param {string} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
export function make(doc, tag, cls, text) {
  const e = doc.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

/**
 * Sets a field's raw text. A trailing line break gets a <br> after it so the browser draws
 * (and lets the caret into) the empty last line; <br> adds nothing to textContent.
 * @param {HTMLElement} e @param {string} text
 */
export function setRawText(e, text) {
  e.textContent = text;
  if (text.endsWith('\n')) e.append(e.ownerDocument.createElement('br'));
}

/**
 * Value equality of two rows (the engine keeps the same Row object for an unchanged row, but
 * a list rebuilt elsewhere may hold equal copies; comparing fields keeps redraws to rows that
 * really changed).
 * @param {Row|null} a @param {Row} b
 */
export function sameRow(a, b) {
  if (a === b) return true;
  return (
    !!a &&
    a.id === b.id &&
    a.depth === b.depth &&
    a.content === b.content &&
    a.type === b.type &&
    a.checked === b.checked &&
    a.collapsed === b.collapsed &&
    a.hasChildren === b.hasChildren &&
    a.language === b.language &&
    a.conflictOf === b.conflictOf &&
    a.conflictResolved === b.conflictResolved &&
    (a.conflictAuthor?.name ?? null) === (b.conflictAuthor?.name ?? null)
  );
}

/**
 * @typedef {{
 *   lock: string|null, editable: boolean, viewer: boolean,
 *   depthBase: number, typing: boolean
 * }} RowLook
 * `editable`: the document may be edited here; `viewer`: the conflict buttons are hidden;
 * `depthBase`: the depth drawn at the left edge (a zoomed bullet's children start there);
 * `typing`: the field holds text the engine has not been given yet (never written over).
 */

export class RowView {
  /** @param {Document} doc */
  constructor(doc) {
    this.doc = doc;
    this.el = make(doc, 'div', 'row');
    this.el.setAttribute('role', 'treeitem');
    const handle = make(doc, 'span', 'row-handle');
    handle.setAttribute('aria-hidden', 'true');
    this.text = make(doc, 'div', 'row-text');
    this.text.spellcheck = true;
    this.el.append(handle, this.text);
    /** @type {Row|null} */
    this.row = null;
    /** Everything is drawn again at the next update (the row itself may not have changed). */
    this.stale = false;
    /** @type {string|null} */
    this.lock = null;
    this.editable = false;
    this.raw = true;
    /** @type {import('./markdown.js').Token[]|null} */
    this.tokens = null;
    this.depth = -1;
    /** @type {HTMLButtonElement|null} */
    this.toggle = null;
    /** @type {HTMLInputElement|null} */
    this.check = null;
    /** @type {HTMLElement|null} */
    this.lockEl = null;
    /** @type {HTMLElement|null} */
    this.conflict = null;
    /** @type {HTMLInputElement|null} */
    this.lang = null;
  }

  /** @returns {string} */
  get id() {
    return /** @type {Row} */ (this.row).id;
  }

  /** Whether `update` would change anything. @param {Row} r @param {RowLook} look */
  differs(r, look) {
    return (
      this.stale ||
      this.lock !== look.lock ||
      this.editable !== (look.editable && look.lock == null) ||
      this.depth !== r.depth - look.depthBase ||
      (this.row !== r && !sameRow(this.row, r))
    );
  }

  /** @param {Row} r @param {RowLook} look */
  update(r, look) {
    const { lock, editable } = look;
    const prev = this.stale ? null : this.row;
    this.stale = false;
    const e = this.el;
    const d = this.doc;
    if (!prev) e.dataset.blockId = r.id;
    const depth = r.depth - look.depthBase;
    if (this.depth !== depth) {
      this.depth = depth;
      e.setAttribute('aria-level', String(depth + 1));
      e.style.setProperty('--depth', String(depth));
    }
    if (!prev || prev.hasChildren !== r.hasChildren || prev.collapsed !== r.collapsed) {
      if (r.hasChildren) {
        e.setAttribute('aria-expanded', String(!r.collapsed));
        if (!this.toggle) {
          this.toggle = make(d, 'button', 'row-toggle');
          this.toggle.type = 'button';
          this.toggle.tabIndex = -1;
          e.prepend(this.toggle);
        }
        this.toggle.setAttribute('aria-label', r.collapsed ? 'Expand' : 'Collapse');
      } else {
        e.removeAttribute('aria-expanded');
        this.toggle?.remove();
        this.toggle = null;
      }
      e.classList.toggle('is-collapsed', r.hasChildren && r.collapsed);
    }
    if (!prev || prev.type !== r.type) e.dataset.type = r.type;
    e.classList.toggle('is-checked', r.type === 'todo' && r.checked);
    this.#drawCheck(r, editable && lock == null);
    this.#drawLock(lock);
    this.#drawConflict(r, editable, look.viewer);
    this.#drawLanguage(r, editable && lock == null);
    const canType = editable && lock == null;
    if (!prev || this.editable !== canType || this.lock !== lock) {
      if (canType) {
        this.text.setAttribute('contenteditable', 'plaintext-only');
        // One tab stop for the whole outline (OutlineView.moveTabStop): Tab inside a bullet
        // indents, so a tab stop per bullet would make the outline a trap for the keyboard.
        if (this.text.tabIndex !== 0) this.text.tabIndex = -1;
        this.text.removeAttribute('aria-readonly');
      } else {
        // focusable by arrow keys and clicks; the outline keeps one tab stop (OutlineView)
        this.text.removeAttribute('contenteditable');
        if (this.text.tabIndex !== 0) this.text.tabIndex = -1;
        this.text.setAttribute('aria-readonly', 'true');
      }
      this.text.setAttribute('role', 'textbox');
      this.text.setAttribute('aria-multiline', 'true'); // Shift+Enter adds line breaks
    }
    const focused = d.activeElement === this.text;
    if (focused && canType) {
      const cur = this.text.textContent ?? '';
      // the field may be ahead of the engine (typing not handed over yet): never go back
      if (cur !== r.content && !look.typing) this.#replaceFocusedText(r.content);
      this.raw = true;
      this.tokens = null;
    } else if (!prev || prev.content !== r.content || prev.type !== r.type || (focused && !canType)) {
      this.drawText(r.content, r.type);
    }
    this.row = r;
    this.lock = lock;
    this.editable = canType;
  }

  /** @param {Row} r @param {boolean} canChange */
  #drawCheck(r, canChange) {
    if (r.type === 'todo') {
      if (!this.check) {
        this.check = make(this.doc, 'input', 'row-check');
        this.check.type = 'checkbox';
        this.check.setAttribute('aria-label', 'Done');
        this.text.before(this.check);
      }
      this.check.checked = r.checked;
      this.check.disabled = !canChange;
    } else if (this.check) {
      this.check.remove();
      this.check = null;
    }
  }

  /** @param {string|null} lock */
  #drawLock(lock) {
    const e = this.el;
    if (lock != null) {
      e.dataset.locked = 'true';
      if (!this.lockEl) {
        this.lockEl = make(this.doc, 'span', 'row-lock');
        e.append(this.lockEl);
      }
      if (this.lockEl.textContent !== lock) {
        this.lockEl.textContent = lock;
        this.lockEl.title = `${lock} is editing this bullet`;
      }
    } else if (this.lockEl || e.dataset.locked) {
      delete e.dataset.locked;
      this.lockEl?.remove();
      this.lockEl = null;
    }
  }

  /** @param {Row} r @param {boolean} editable @param {boolean} viewer */
  #drawConflict(r, editable, viewer) {
    const e = this.el;
    if (r.conflictOf && !r.conflictResolved) {
      e.dataset.conflictOf = r.conflictOf;
      const who = r.conflictAuthor?.name || 'someone';
      const label = r.conflictOf === 'title' ? `Conflict copy of the title by ${who}` : `Conflict copy by ${who}`;
      if (!this.conflict) {
        this.conflict = make(this.doc, 'div', 'row-conflict');
        const lab = make(this.doc, 'span', 'row-conflict-label');
        const acc = make(this.doc, 'button', 'conflict-accept', 'Accept');
        acc.type = 'button';
        acc.title = 'Replace the original with this text';
        const dis = make(this.doc, 'button', 'conflict-discard', 'Discard');
        dis.type = 'button';
        dis.title = 'Delete this copy';
        this.conflict.append(lab, acc, dis);
        e.append(this.conflict);
      }
      const lab = /** @type {HTMLElement} */ (this.conflict.firstChild);
      if (lab.textContent !== label) lab.textContent = label;
      for (const b of this.conflict.querySelectorAll('button')) {
        b.disabled = !editable;
        b.hidden = viewer;
      }
    } else {
      if (e.dataset.conflictOf) delete e.dataset.conflictOf;
      if (r.conflictOf) e.dataset.conflictOf = r.conflictOf; // resolved: keep the marker, no buttons
      this.conflict?.remove();
      this.conflict = null;
    }
    e.classList.toggle('is-conflict', !!r.conflictOf && !r.conflictResolved);
  }

  /** @param {Row} r @param {boolean} canChange */
  #drawLanguage(r, canChange) {
    if (r.type === 'code') {
      if (!this.lang) {
        this.lang = make(this.doc, 'input', 'row-lang');
        this.lang.placeholder = 'language';
        this.lang.setAttribute('aria-label', 'Code language');
        this.lang.spellcheck = false;
        this.el.append(this.lang);
      }
      if (this.doc.activeElement !== this.lang) this.lang.value = r.language ?? '';
      this.lang.readOnly = !canChange;
    } else if (this.lang) {
      this.lang.remove();
      this.lang = null;
    }
  }

  /**
   * Rendered markdown into a row that is not being edited (code blocks stay raw).
   * @param {string} content @param {string} type
   */
  drawText(content, type) {
    if (type === 'code') {
      setRawText(this.text, content);
      this.tokens = null;
      this.raw = true;
      return;
    }
    const tokens = parseInline(content);
    fillInline(this.text, tokens);
    const flat = tokens.length <= 1 && (tokens.length === 0 || tokens[0].kind === 'text');
    this.tokens = flat ? null : tokens;
    this.raw = flat;
  }

  /** Shows the raw text in a row that is about to be edited. */
  showRaw() {
    if (this.raw || !this.row) return;
    setRawText(this.text, this.row.content);
    this.raw = true;
    this.tokens = null;
  }

  /** @param {boolean} on */
  setSelected(on) {
    if (this.el.classList.contains('is-selected') !== on) {
      this.el.classList.toggle('is-selected', on);
      this.el.setAttribute('aria-selected', String(on));
    }
  }

  /**
   * The engine changed the text of the row being edited (undo, redo): set it and put the caret
   * at the end of what changed.
   * @param {string} next
   */
  #replaceFocusedText(next) {
    const cur = this.text.textContent ?? '';
    let a = 0;
    while (a < cur.length && a < next.length && cur[a] === next[a]) a++;
    let b = 0;
    while (b < cur.length - a && b < next.length - a && cur[cur.length - 1 - b] === next[next.length - 1 - b]) b++;
    setRawText(this.text, next);
    setSelectionOffsets(this.text, next.length - b);
  }
}
