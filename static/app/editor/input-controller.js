// What a person does in the editor, turned into edits: keys, typing, paste and copy, focus,
// clicks, Shift-selections of whole bullets and drags. Every edit is built with the pure
// helpers of outline-ops.js from the engine's current rows and goes through `commit`, the
// one write path (the engine's new state comes back through the page's render). The DOM is
// only read here (where the caret is, which row was hit); the OutlineView draws.
//
// Invariants: typed text is handed to the engine before any other edit is built (flush
// first); an edit while zoomed never moves a bullet out of the zoomed bullet; a selection
// of bullets and a caret in a bullet are never both active (the outline element holds
// focus while bullets are selected).

import { commandFor } from './keys.js';
import { renderedToRaw } from './markdown.js';
import {
  deleteMany,
  detectShortcut,
  foldAll,
  indent,
  indentMany,
  indexOfId,
  insertItemsAfter,
  mergeBackward,
  mergeForward,
  moveDown,
  moveMany,
  moveUp,
  outdent,
  outdentMany,
  pasteItems,
  pasteText,
  setCollapsed,
  setContent,
  setProps,
  splitRow,
  subtreeEnd,
  toggleTodo,
  toggleTodoMany,
  withProps,
} from './outline-ops.js';
import { fromHtml, fromMarkdown, toHtml, toMarkdown } from './outline-io.js';
import { caretLine, getSelectionOffsets, offsetAtPoint, setSelectionOffsets } from './caret.js';
import { setRawText } from './row-view.js';
import { TypingBuffer } from './typing-buffer.js';
import { BlockSelection } from './block-selection.js';
import { DragController } from './drag.js';

/** @typedef {import('../../engine/types.js').EngineState} EngineState */
/** @typedef {import('../../engine/types.js').FlatRow} FlatRow */
/** @typedef {import('../../engine/types.js').Row} Row */
/** @typedef {import('./outline-ops.js').OpResult} OpResult */
/** @typedef {import('./row-view.js').RowView} RowView */

/**
 * The engine calls the controller makes (DocSyncEngine has them all).
 * @typedef {{
 *   state: EngineState,
 *   commitRows(rows: FlatRow[], o: {step: string}): import('../../engine/types.js').EditResult,
 *   undo(): {skipped?: unknown[]}|null|undefined|void,
 *   redo(): unknown,
 *   newBlockId(): string,
 *   focus(id: string|null): void,
 *   setTitle(t: string): void,
 *   noteTyping(id: string, text: string): void,
 *   setFolds(changes: Iterable<[string, boolean]>): void,
 *   acceptConflict(id: string): {ok: boolean, message?: string}|null|undefined,
 *   discardConflict(id: string): {ok: boolean, message?: string}|null|undefined,
 * }} EditorEngine
 */

/**
 * @typedef {{
 *   engine: EditorEngine,
 *   view: import('./outline-view.js').OutlineView,
 *   chrome: import('./chrome.js').EditorChrome,
 *   state: () => EngineState|null,
 *   canEdit: () => boolean,
 *   render: () => void,
 *   zoom: (id: string|null) => void,
 *   openFind: () => void,
 *   openHelp: () => void,
 *   picker?: import('./link-picker.js').LinkPicker,
 * }} ControllerDeps
 */

/** Keys that only modify the next one (Shift before Shift+Tab). */
const MODIFIER_KEYS = new Set(['Shift', 'Control', 'Alt', 'Meta', 'AltGraph']);

export class InputController {
  /** @type {number|null} the x to keep while moving with ↑/↓ */
  #goalX = null;
  /**
   * The bullet Escape was pressed in: it keeps the focus but is read, not edited (markdown
   * drawn, links open), and its next Tab / Shift+Tab moves the focus out of the outline.
   * @type {string|null}
   */
  #escaped = null;
  #composing = false;
  selection = new BlockSelection();

  /** @param {ControllerDeps} deps */
  constructor(deps) {
    this.d = deps;
    this.typing = new TypingBuffer((v) => this.#commitTyping(v));
    this.drag = new DragController({
      view: deps.view,
      chrome: deps.chrome,
      canEdit: deps.canEdit,
      rows: () => this.rows(),
      commit: (r) => this.commit(r),
      lockedBy: this.lockedBy,
      onClickBullet: (v) => v.row && deps.zoom(v.row.id),
    });
    /** @type {[EventTarget, string, (e: any) => void][]} */
    this.listeners = [];
  }

  /** @param {string} id */
  lockedBy = (id) => this.d.state()?.locks.get(id)?.name ?? null;
  #opts = () => ({ lockedBy: this.lockedBy, newId: () => this.d.engine.newBlockId() });

  /** The engine's current rows, with typed text handed over first. */
  rows() {
    this.typing.flush();
    return /** @type {FlatRow[]} */ (this.d.engine.state?.rows ?? this.d.state()?.rows ?? []);
  }

  /** @param {string|null} msg */
  #notice(msg) {
    this.d.chrome.showNotice(msg);
  }

  // ---- the one write path ---------------------------------------------------------------------

  /**
   * Hands an edit to the engine. A refusal (a lock, a viewer, a move out of the zoomed bullet)
   * is said in the notice line and changes nothing.
   * @param {OpResult|null} result
   * @returns {boolean}
   */
  commit(result) {
    this.typing.flush();
    if (!result) return false;
    if (!result.ok) {
      this.#notice(result.message);
      return false;
    }
    // Folds are this person's view: applied for a viewer too, and never an edit.
    if (result.folds?.length) this.d.engine.setFolds(result.folds);
    if (result.step === 'fold') {
      this.d.render();
      return true;
    }
    if (!this.d.canEdit()) return false;
    const zoom = this.d.view.zoom;
    if (zoom && !staysInside(result.rows, zoom, this.d.view.rows.map((r) => r.id))) {
      this.#notice('That would move the bullet out of the one you zoomed into — zoom out first (Alt+←).');
      return false;
    }
    const r = this.d.engine.commitRows(result.rows, { step: result.step });
    if (!r.ok) {
      this.#notice(r.message);
      this.d.view.invalidate();
      this.d.render();
      return false;
    }
    if (result.focus) this.d.view.focusAfterRender(result.focus);
    this.d.render();
    return true;
  }

  undo() {
    this.typing.flush();
    const r = this.d.engine.undo();
    if (r && r.skipped && r.skipped.length && !this.d.state()?.notice) {
      this.#notice('Some changes could not be undone because someone else changed those bullets.');
    }
    this.d.render();
  }

  redo() {
    this.typing.flush();
    this.d.engine.redo();
    this.d.render();
  }

  /** Commits what a field shows (typing), with markdown shortcuts at the line start. @param {RowView} v */
  #commitTyping(v) {
    if (!v.row || !this.d.canEdit()) return;
    const id = v.row.id;
    let content = v.text.textContent ?? '';
    const sel = getSelectionOffsets(v.text);
    const sc = detectShortcut(content, v.row.type);
    if (sc && sel && sel.start >= sc.strip && content.slice(0, sc.strip) !== v.row.content.slice(0, sc.strip)) {
      content = content.slice(sc.strip);
      v.text.textContent = content;
      setSelectionOffsets(v.text, sel.start - sc.strip);
      const next = setProps(this.rows(), id, { ...sc.patch, content });
      this.commit(next && { ok: true, rows: next, step: 'props', focus: null });
      return;
    }
    const next = setContent(/** @type {FlatRow[]} */ (this.d.engine.state?.rows ?? []), id, content);
    if (!next) return;
    const r = this.d.engine.commitRows(next, { step: 'typing' });
    if (!r.ok) {
      this.#notice(r.message);
      this.d.view.invalidate();
      this.d.render();
    }
  }

  /** Inserts text at the caret of a field (line breaks), as typing. @param {RowView} v @param {string} s */
  #insertAtCaret(v, s) {
    const sel = getSelectionOffsets(v.text) ?? { start: 0, end: 0 };
    const cur = v.text.textContent ?? '';
    setRawText(v.text, cur.slice(0, sel.start) + s + cur.slice(sel.end));
    setSelectionOffsets(v.text, sel.start + s.length);
    this.#commitTyping(v);
  }

  /**
   * Replaces `from`..`to` of a field's text (a chosen document link), as typing, with the
   * caret after it.
   * @param {RowView} v @param {number} from @param {number} to @param {string} text
   */
  replaceText(v, from, to, text) {
    if (!v.editable || !v.text.isConnected) return;
    const cur = v.text.textContent ?? '';
    setRawText(v.text, cur.slice(0, from) + text + cur.slice(to));
    setSelectionOffsets(v.text, from + text.length);
    this.#commitTyping(v);
  }

  /** Enter in a row. @param {RowView} v */
  #split(v) {
    const len = (v.text.textContent ?? '').length;
    const sel = getSelectionOffsets(v.text) ?? { start: len, end: len };
    let all = this.rows();
    if (sel.end > sel.start && v.editable) {
      const cur = v.text.textContent ?? '';
      all = /** @type {FlatRow[]} */ (setContent(all, v.id, cur.slice(0, sel.start) + cur.slice(sel.end)) ?? all);
    }
    this.commit(splitRow(all, v.id, v.editable ? sel.start : 0, this.#opts()));
  }

  /** A first bullet in an empty document (or zoomed bullet); else the caret into the first. */
  startFirstRow() {
    const { view } = this.d;
    if (view.rows.length > 0) {
      const first = view.ensure(view.rows[0].id);
      if (first) view.focus(first, { offset: 0 });
      return;
    }
    this.appendRow();
  }

  /** "+ Add a bullet": a new last bullet (of the zoomed bullet, when zoomed). */
  appendRow() {
    const { view } = this.d;
    const all = this.rows();
    const last = view.rows[view.rows.length - 1];
    const lv = last && view.ensure(last.id);
    if (last && last.content === '' && !last.hasChildren && lv && !lv.lock) {
      view.focus(lv, { offset: 0 });
      return;
    }
    const id = this.d.engine.newBlockId();
    const z = view.zoom ? indexOfId(all, view.zoom) : -1;
    const at = z >= 0 ? subtreeEnd(all, z) : all.length;
    const row = withProps({ id, depth: z >= 0 ? all[z].depth + 1 : 0, content: '' });
    const next = [...all.slice(0, at), row, ...all.slice(at)];
    /** @type {[string, boolean][]} */
    const folds = z >= 0 && all[z].collapsed ? [[all[z].id, false]] : [];
    if (folds.length) next[z] = withProps(all[z], { collapsed: false });
    this.commit({ ok: true, rows: next, step: 'insert', focus: { id, offset: 0 }, folds });
  }

  // ---- selection of whole bullets -------------------------------------------------------------

  /** Draws the selection (after it changed, or after the rows did). */
  syncSelection() {
    const { view } = this.d;
    const { ids } = this.selection.cover(view.rows, (id) => view.indexOf(id));
    if (this.selection.active && ids.size === 0) this.selection.clear();
    view.setSelection(ids);
  }

  #roots() {
    const { view } = this.d;
    return this.selection.cover(view.rows, (id) => view.indexOf(id)).roots.map((r) => r.id);
  }

  /** Leaves the caret and selects bullets from `anchor` to `head`. @param {string} anchor @param {string} head */
  select(anchor, head) {
    this.typing.flush();
    this.selection.set(anchor, head);
    const outline = this.d.chrome.outline;
    if (this.d.chrome.doc.activeElement !== outline) {
      outline.tabIndex = -1;
      outline.focus({ preventScroll: true });
    }
    this.syncSelection();
    const v = this.d.view.ensure(head);
    if (v) this.d.view.reveal(v.el);
  }

  /** Clears the selection; `caretTo` puts the caret into that bullet. @param {string|null} [caretTo] */
  clearSelection(caretTo = null) {
    if (!this.selection.clear()) return;
    this.syncSelection();
    const v = caretTo ? this.d.view.ensure(caretTo) : null;
    if (v && v.row) this.d.view.focus(v, { offset: v.row.content.length });
  }

  /** @param {KeyboardEvent} e @returns {boolean} handled */
  #onSelectionKey(e) {
    const { view } = this.d;
    const cmd = commandFor(e);
    const head = this.selection.head;
    if (!head) return false;
    const roots = this.#roots();
    const editable = this.d.canEdit();
    /** @param {OpResult|null} r */
    const act = (r) => {
      e.preventDefault();
      if (!editable) return;
      if (this.commit(r)) this.syncSelection();
    };
    switch (cmd) {
      case 'selectUp':
      case 'selectDown': {
        e.preventDefault();
        const i = view.indexOf(head) + (cmd === 'selectUp' ? -1 : 1);
        const to = view.rows[Math.max(0, Math.min(view.rows.length - 1, i))];
        if (to) this.select(/** @type {string} */ (anchorOf(this.selection, head)), to.id);
        return true;
      }
      case 'up':
      case 'down':
      case 'escape':
        e.preventDefault();
        this.clearSelection(head);
        return true;
      case 'selectAll':
        e.preventDefault();
        if (view.rows.length) this.select(view.rows[0].id, view.rows[view.rows.length - 1].id);
        return true;
      case 'indent':
        act(indentMany(this.rows(), roots, this.#opts()));
        return true;
      case 'outdent':
        act(outdentMany(this.rows(), roots, { ...this.#opts(), minDepth: view.base }));
        return true;
      case 'moveUp':
      case 'moveDown':
        act(moveMany(this.rows(), roots, cmd === 'moveUp', this.#opts()));
        return true;
      case 'toggleTodo':
        act(toggleTodoMany(this.rows(), roots, this.#opts()));
        return true;
      case 'backspace':
      case 'delete': {
        e.preventDefault();
        if (!editable) return true;
        const r = deleteMany(this.rows(), roots, this.#opts());
        if (r && r.ok) this.selection.clear();
        this.commit(r);
        this.syncSelection();
        return true;
      }
      case 'undo':
      case 'redo':
        e.preventDefault();
        if (editable) (cmd === 'undo' ? this.undo() : this.redo());
        this.syncSelection();
        return true;
      case 'zoomIn':
        e.preventDefault();
        this.d.zoom(head);
        return true;
      default:
        return false;
    }
  }

  // ---- clipboard ---------------------------------------------------------------------------------

  /** The selected bullets with everything under them (collapsed children too). */
  #selectedSubtrees() {
    const all = this.rows();
    /** @type {FlatRow[]} */
    const out = [];
    for (const id of this.#roots()) {
      const i = indexOfId(all, id);
      if (i >= 0) out.push(...all.slice(i, subtreeEnd(all, i)));
    }
    return out;
  }

  /** @param {ClipboardEvent} e */
  onCopy = (e) => {
    if (!this.selection.active || !e.clipboardData) return;
    const rows = this.#selectedSubtrees();
    if (!rows.length) return;
    e.preventDefault();
    e.clipboardData.setData('text/plain', toMarkdown(rows));
    e.clipboardData.setData('text/html', toHtml(rows));
  };

  /** @param {ClipboardEvent} e */
  onCut = (e) => {
    if (!this.selection.active || !e.clipboardData) return;
    this.onCopy(e);
    if (!this.d.canEdit()) return;
    const r = deleteMany(this.rows(), this.#roots(), this.#opts());
    if (r && r.ok) this.selection.clear();
    this.commit(r);
    this.syncSelection();
  };

  /**
   * Bullets on the clipboard: HTML lists first (other outliners, word processors), else a
   * Markdown list or indented text. Fewer than two: let the field paste plain text.
   * @param {DataTransfer|null} data
   */
  #clipboardItems(data) {
    const html = data?.getData('text/html') ?? '';
    const text = data?.getData('text/plain') ?? '';
    if (html && /<(ul|ol)[\s>]/i.test(html)) {
      const items = fromHtml(html, new DOMParser());
      if (items.length >= 2 || !/\n/.test(text.trim())) return items;
    }
    return /\n/.test(text.trim()) ? fromMarkdown(text).items : [];
  }

  /** @param {ClipboardEvent} e */
  onPaste = (e) => {
    this.typing.flush();
    if (this.selection.active) {
      e.preventDefault();
      if (!this.d.canEdit()) return;
      const items = this.#clipboardItems(e.clipboardData);
      const text = e.clipboardData?.getData('text/plain') ?? '';
      const list = items.length ? items : text.trim() ? fromMarkdown(text).items : [];
      const roots = this.#roots();
      if (this.commit(insertItemsAfter(this.rows(), roots[roots.length - 1] ?? null, list, this.#opts()))) this.clearSelection();
      return;
    }
    const v = this.d.view.viewOf(e.target);
    if (!v || e.target !== v.text || !v.row || !v.editable || v.row.type === 'code') return; // code: the field pastes as is
    const items = this.#clipboardItems(e.clipboardData);
    if (items.length < 2) return; // one line: the field pastes plain text itself
    e.preventDefault();
    const sel = getSelectionOffsets(v.text) ?? { start: 0, end: 0 };
    this.commit(pasteItems(this.rows(), v.row.id, sel.start, sel.end, items, this.#opts()));
  };

  // ---- keys -------------------------------------------------------------------------------------

  /** @param {KeyboardEvent} e */
  onKeyDown = (e) => {
    this.typing.flush();
    if (e.isComposing) return;
    if (this.d.picker?.onKey(e)) return;
    if (this.selection.active && e.target === this.d.chrome.outline) {
      if (this.#onSelectionKey(e)) return;
    }
    const { view } = this.d;
    const v = view.viewOf(e.target);
    if (!v || e.target !== v.text || !v.row) return;
    const cmd = commandFor(e);
    if (this.#escaped === v.row.id) {
      // Tab is the page's again: the browser moves the focus on (no indent), so the keyboard
      // is never trapped in the outline. Any other key goes on editing.
      if (cmd === 'indent' || cmd === 'outdent') return;
      if (MODIFIER_KEYS.has(e.key)) return;
      if (cmd === 'escape') {
        e.preventDefault();
        return;
      }
      this.#escaped = null;
      if (!v.raw) {
        v.showRaw();
        setSelectionOffsets(v.text, (v.text.textContent ?? '').length);
      }
    }
    if (cmd !== 'up' && cmd !== 'down') this.#goalX = null;
    if (!cmd) {
      if (v.lock && this.d.canEdit() && e.key.length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey) {
        this.#notice(`${v.lock} is editing this bullet — it is read-only until they leave it. Enter adds a bullet below.`);
      }
      return;
    }
    const id = v.row.id;
    const editable = this.d.canEdit();
    const len = (v.text.textContent ?? '').length;
    const sel = getSelectionOffsets(v.text);
    const collapsedAt = (/** @type {number} */ n) => !!sel && sel.start === sel.end && sel.start === n;
    switch (cmd) {
      case 'undo':
      case 'redo':
        e.preventDefault();
        if (editable) (cmd === 'undo' ? this.undo() : this.redo());
        return;
      case 'escape':
        e.preventDefault();
        this.#escaped = id;
        if (v.raw && v.row.type !== 'code') v.drawText(v.text.textContent ?? '', v.row.type);
        return;
      case 'up':
      case 'down': {
        const line = v.editable ? caretLine(v.text) : { first: true, last: true, x: null };
        if (!(cmd === 'up' ? line.first : line.last)) return;
        const target = view.neighbour(id, cmd === 'up' ? -1 : 1);
        e.preventDefault();
        if (this.#goalX == null) this.#goalX = line.x ?? v.text.getBoundingClientRect().left;
        if (!target) {
          const title = this.d.chrome.title;
          if (cmd === 'up' && !view.zoom) {
            title.focus();
            setSelectionOffsets(title, (title.textContent ?? '').length);
          } else setSelectionOffsets(v.text, cmd === 'up' ? 0 : len);
          return;
        }
        view.focus(target, { x: this.#goalX, line: cmd === 'up' ? 'last' : 'first' });
        return;
      }
      case 'left':
      case 'right': {
        if (cmd === 'left' ? !collapsedAt(0) && v.editable : !collapsedAt(len) && v.editable) return;
        const target = view.neighbour(id, cmd === 'left' ? -1 : 1);
        if (!target?.row) return;
        e.preventDefault();
        view.focus(target, { offset: cmd === 'left' ? target.row.content.length : 0 });
        return;
      }
      case 'selectUp':
      case 'selectDown': {
        // inside a bullet's text Shift+arrows select text; at its first/last line they
        // select the whole bullet, then the ones above/below
        const line = v.editable ? caretLine(v.text) : { first: true, last: true, x: null };
        if (!(cmd === 'selectUp' ? line.first : line.last) || (v.editable && sel && sel.start !== sel.end && !(sel.start === 0 && sel.end === len))) return;
        e.preventDefault();
        this.select(id, id);
        return;
      }
      case 'selectAll':
        // the first Ctrl+A selects the bullet's text; the second all bullets
        if (v.editable && !(sel && sel.start === 0 && sel.end === len)) return;
        e.preventDefault();
        if (view.rows.length) this.select(view.rows[0].id, view.rows[view.rows.length - 1].id);
        return;
      case 'zoomIn':
        e.preventDefault();
        this.d.zoom(id);
        return;
      case 'zoomOut':
        e.preventDefault();
        this.zoomOut();
        return;
      case 'find':
        e.preventDefault();
        this.d.openFind();
        return;
    }
    if (!editable) {
      if (cmd === 'split' || cmd === 'newline') e.preventDefault();
      return;
    }
    const opts = this.#opts();
    switch (cmd) {
      case 'split':
        e.preventDefault();
        if (v.row.type === 'code' && v.editable) this.#insertAtCaret(v, '\n');
        else this.#split(v);
        return;
      case 'newline':
        e.preventDefault();
        if (v.row.type === 'code' || !v.editable) this.#split(v);
        else this.#insertAtCaret(v, '\n');
        return;
      case 'toggleTodo':
        e.preventDefault();
        this.commit(toggleTodo(this.rows(), id, opts));
        return;
      case 'indent':
      case 'outdent': {
        e.preventDefault();
        if (cmd === 'outdent' && view.zoom && v.row.depth <= view.base) {
          this.#notice('This bullet is at the top of the one you zoomed into — zoom out (Alt+←) to outdent it.');
          return;
        }
        const off = sel?.start ?? 0;
        if (this.commit((cmd === 'indent' ? indent : outdent)(this.rows(), id, opts))) this.#keepCaret(id, off);
        return;
      }
      case 'moveUp':
      case 'moveDown': {
        e.preventDefault();
        const off = sel?.start ?? 0;
        if (this.commit((cmd === 'moveUp' ? moveUp : moveDown)(this.rows(), id, opts))) this.#keepCaret(id, off);
        return;
      }
      case 'collapse':
      case 'expand':
        e.preventDefault();
        this.commit(setCollapsed(this.rows(), id, cmd === 'collapse'));
        return;
      case 'collapseAll':
      case 'expandAll':
        e.preventDefault();
        this.foldAll(cmd === 'collapseAll');
        return;
      case 'backspace':
        if (v.editable && !collapsedAt(0)) return;
        e.preventDefault();
        if (view.zoom && view.indexOf(id) === 0) return; // nothing above it inside the zoom
        this.commit(mergeBackward(this.rows(), id, opts));
        return;
      case 'delete':
        if (v.editable && !collapsedAt(len)) return;
        e.preventDefault();
        this.commit(mergeForward(this.rows(), id, opts));
        return;
    }
  };

  /**
   * A structure command on the bullet being edited, from a button (the touch toolbar): the
   * same edits as the keys, the caret kept where it was.
   * @param {'indent'|'outdent'|'moveUp'|'moveDown'|'toggleTodo'|'zoomIn'|'zoomOut'|'undo'|'delete'} cmd
   */
  runOnFocused(cmd) {
    const { view } = this.d;
    if (cmd === 'undo') {
      if (this.d.canEdit()) this.undo();
      return;
    }
    if (this.selection.active && cmd === 'delete') {
      const r = deleteMany(this.rows(), this.#roots(), this.#opts());
      if (r && r.ok) this.selection.clear();
      this.commit(r);
      this.syncSelection();
      return;
    }
    if (this.selection.active) {
      const key = { indent: 'Tab', outdent: 'Tab', moveUp: 'ArrowUp', moveDown: 'ArrowDown', toggleTodo: 'Enter' }[/** @type {string} */ (cmd)];
      if (key) {
        const e = new KeyboardEvent('keydown', { key, shiftKey: cmd !== 'indent' && cmd !== 'toggleTodo', altKey: cmd === 'moveUp' || cmd === 'moveDown', ctrlKey: cmd === 'toggleTodo', cancelable: true });
        this.#onSelectionKey(e);
        return;
      }
    }
    const id = view.focusedId;
    if (cmd === 'zoomOut') return this.zoomOut();
    if (!id) {
      this.#notice('Tap a bullet first.');
      return;
    }
    if (cmd === 'zoomIn') return this.d.zoom(id);
    if (!this.d.canEdit()) return;
    if (cmd === 'delete') {
      // the bullet with its children, as Delete on selected bullets does (one undo step)
      this.commit(deleteMany(this.rows(), [id], this.#opts()));
      return;
    }
    const v = view.view(id);
    const off = v ? (getSelectionOffsets(v.text)?.start ?? 0) : 0;
    const row = this.rows().find((r) => r.id === id);
    if (cmd === 'outdent' && view.zoom && row && row.depth <= view.base) {
      this.#notice('This bullet is at the top of the one you zoomed into — zoom out to outdent it.');
      return;
    }
    const edit = { indent, outdent, moveUp, moveDown, toggleTodo }[cmd];
    if (this.commit(edit(this.rows(), id, this.#opts()))) this.#keepCaret(id, off);
  }

  /** Expand or collapse every bullet (inside the zoomed one); `level` shows that many levels. @param {boolean} collapsed @param {number} [level] */
  foldAll(collapsed, level) {
    const r = foldAll(this.rows(), { collapsed, level, within: this.d.view.zoom });
    if (r) this.commit(r);
  }

  /** One level out: to the zoomed bullet's parent (or the whole document). */
  zoomOut() {
    const z = this.d.view.zoom;
    if (!z) return;
    const all = this.rows();
    const i = indexOfId(all, z);
    let parent = null;
    for (let k = i - 1; i > 0 && k >= 0; k--) {
      if (all[k].depth < all[i].depth) {
        parent = all[k].id;
        break;
      }
    }
    this.d.zoom(parent);
  }

  /** After a move the row element may have been re-inserted: keep the caret. @param {string} id @param {number} off */
  #keepCaret(id, off) {
    const { view } = this.d;
    const v = view.ensure(id);
    if (v && this.d.chrome.doc.activeElement !== v.text) view.focus(v, { offset: off });
    else if (v) view.reveal(v.el);
  }

  /** @param {InputEvent} e */
  onBeforeInput = (e) => {
    const t = e.target;
    if (e.inputType === 'historyUndo' || e.inputType === 'historyRedo') {
      e.preventDefault();
      if (!this.d.canEdit()) return;
      if (e.inputType === 'historyUndo') this.undo();
      else this.redo();
      return;
    }
    if (t === this.d.chrome.title) {
      if (e.inputType === 'insertParagraph' || e.inputType === 'insertLineBreak') e.preventDefault();
      return;
    }
    const v = this.d.view.viewOf(t);
    if (!v || t !== v.text || !v.row) return;
    if (e.inputType === 'insertParagraph') {
      // soft keyboards that send no Enter keydown
      e.preventDefault();
      if (v.row.type === 'code') this.#insertAtCaret(v, '\n');
      else this.#split(v);
    }
  };

  /** @param {Event} e */
  onInput = (e) => {
    const title = this.d.chrome.title;
    if (e.target === title) {
      if (this.d.canEdit()) this.d.engine.setTitle((title.textContent ?? '').replace(/\n/g, ' '));
      return;
    }
    const v = this.d.view.viewOf(e.target);
    if (!v || e.target !== v.text || this.#composing) return;
    // Painted now, handed over after the frame: until then the journal holds it, written
    // synchronously here, so a tab that crashes in between still has it at the next start.
    this.typing.note(v);
    if (v.row && this.d.canEdit()) this.d.engine.noteTyping(v.row.id, v.text.textContent ?? '');
    if (v.editable) void this.d.picker?.update(v);
  };

  onCompositionStart = () => {
    this.#composing = true;
  };

  /** IME: the composed text is handed over once, when the composition ends. @param {CompositionEvent} e */
  onCompositionEnd = (e) => {
    this.#composing = false;
    const v = this.d.view.viewOf(e.target);
    if (v && e.target === v.text) {
      if (v.row && this.d.canEdit()) this.d.engine.noteTyping(v.row.id, v.text.textContent ?? '');
      this.typing.note(v);
      this.typing.flush();
    }
  };

  // ---- focus --------------------------------------------------------------------------------------

  /** @param {FocusEvent} e */
  onFocusIn = (e) => {
    const { view, chrome, engine } = this.d;
    if (view.reconciling) return;
    if (e.target === chrome.title) {
      view.focusedId = null;
      this.clearSelection();
      if (this.d.canEdit()) engine.focus('title');
      return;
    }
    const v = view.viewOf(e.target);
    if (!v || e.target !== v.text || !v.row) return;
    if (this.selection.active) {
      this.selection.clear();
      this.syncSelection();
    }
    if (this.#escaped !== v.row.id) this.#escaped = null;
    view.focusedId = v.row.id;
    view.moveTabStop();
    v.el.classList.add('is-focused');
    if (v.editable) {
      if (!v.raw) {
        const off = getSelectionOffsets(v.text);
        const tokens = v.tokens;
        v.showRaw();
        if (off && tokens) setSelectionOffsets(v.text, renderedToRaw(tokens, off.start));
      }
      engine.focus(v.row.id);
    }
  };

  /** @param {FocusEvent} e */
  onFocusOut = (e) => {
    this.typing.flush();
    this.d.picker?.close();
    const { view, chrome } = this.d;
    if (view.reconciling) return;
    const v = view.viewOf(e.target);
    if (v && e.target === v.text) {
      v.el.classList.remove('is-focused');
      // the field's text is what was just handed to the engine (v.row may be a frame behind)
      if (v.row && v.raw) v.drawText(v.editable ? (v.text.textContent ?? '') : v.row.content, v.row.type);
      if (view.focusedId === v.row?.id) view.focusedId = null;
    }
    const to = e.relatedTarget;
    const staysInEditor = to instanceof Node && (to === chrome.title || (chrome.outline.contains(to) && !!view.viewOf(to)));
    if (!staysInEditor && this.d.canEdit()) this.d.engine.focus(null);
  };

  // ---- pointer ------------------------------------------------------------------------------------

  /** Clicking rendered markdown: open links; otherwise put the caret where the click was. @param {PointerEvent} e */
  onPointerDown = (e) => {
    this.#goalX = null;
    const { view } = this.d;
    const t = /** @type {Element} */ (e.target);
    const v = view.viewOf(t);
    if (!v || !v.row) return;
    if (t.closest('.row-handle')) {
      this.drag.start(e, v);
      return;
    }
    if (e.shiftKey && e.button === 0) {
      // Shift+click: whole bullets from the one being edited (or selected) to this one
      const from = this.selection.active ? anchorOf(this.selection, v.row.id) : view.focusedId;
      if (from) {
        e.preventDefault();
        this.select(from, v.row.id);
        return;
      }
    }
    if (this.selection.active) this.clearSelection();
    const escaped = this.#escaped === v.row.id;
    if (!v.text.contains(t) || (this.d.chrome.doc.activeElement === v.text && !escaped)) return;
    const link = t.closest('a');
    if (link && e.button === 0) {
      e.preventDefault();
      return;
    }
    if (escaped) {
      // a click back into the text it was reading: editing again, the caret where clicked
      this.#escaped = null;
      if (v.raw || !v.tokens) return;
      const at = offsetAtPoint(v.text, e.clientX, e.clientY);
      const tokens = v.tokens;
      e.preventDefault();
      v.showRaw();
      setSelectionOffsets(v.text, at == null ? v.row.content.length : renderedToRaw(tokens, at));
      return;
    }
    if (v.raw || !v.editable || e.pointerType !== 'mouse' || e.button !== 0 || !v.tokens) return;
    // the rendered text differs from the raw text: map the click to the raw offset
    const at = offsetAtPoint(v.text, e.clientX, e.clientY);
    const tokens = v.tokens;
    e.preventDefault();
    view.focus(v, { offset: at == null ? v.row.content.length : renderedToRaw(tokens, at) });
  };

  /** @param {PointerEvent} e */
  onPointerMove = (e) => this.drag.move(e);
  /** @param {PointerEvent} e */
  onPointerUp = (e) => this.drag.finish(e);

  /** @param {MouseEvent} e */
  onClick = (e) => {
    const { view, chrome, engine } = this.d;
    const t = /** @type {Element} */ (e.target);
    const v = view.viewOf(t);
    if (!v || !v.row) {
      const s = this.d.state();
      if (t === chrome.empty && this.d.canEdit() && s?.loaded && view.zoomFound && view.rows.length === 0) this.startFirstRow();
      return;
    }
    if (t.closest('.row-toggle')) {
      this.commit(setCollapsed(this.rows(), v.row.id, !v.row.collapsed));
      return;
    }
    if (t === v.check) {
      // The click's own toggle is cancelled (the engine decides); a cancelled click puts the
      // box back as it was *after* this handler — after the redraw — so the box is set again
      // from the bullet once the click is over.
      e.preventDefault();
      const box = v.check;
      const next = setProps(this.rows(), v.row.id, { checked: !v.row.checked });
      if (v.lock) this.#notice(`Can't change it: ${v.lock} is editing that bullet right now.`);
      else this.commit(next && { ok: true, rows: next, step: 'check', focus: null });
      setTimeout(() => {
        if (box.isConnected && v.row) box.checked = v.row.checked;
      }, 0);
      return;
    }
    if (t.closest('.conflict-accept') || t.closest('.conflict-discard')) {
      const r = t.closest('.conflict-accept') ? engine.acceptConflict(v.row.id) : engine.discardConflict(v.row.id);
      if (r && !r.ok) this.#notice(r.message ?? null);
      this.d.render();
      return;
    }
    const link = t.closest('a');
    if (link && v.text.contains(link) && (chrome.doc.activeElement !== v.text || this.#escaped === v.row.id)) {
      const href = link.getAttribute('href') ?? '';
      const external = /^(https?:|mailto:)/i.test(href);
      const win = view.win;
      if (external || e.ctrlKey || e.metaKey) {
        e.preventDefault();
        win.open(href, '_blank', 'noopener');
        return;
      }
      // in-app link (#tag): let the app's router take it; navigate if nobody did
      setTimeout(() => {
        if (!e.defaultPrevented) win.location.assign(href);
      }, 0);
    }
  };

  /** The code language field. @param {Event} e */
  onChange = (e) => {
    const t = e.target;
    if (!(t instanceof HTMLInputElement) || !t.classList.contains('row-lang')) return;
    const v = this.d.view.viewOf(t);
    if (!v || !v.row) return;
    const language = t.value.trim() || null;
    if (language === v.row.language) return;
    const next = setProps(this.rows(), v.row.id, { language });
    this.commit(next && { ok: true, rows: next, step: 'props', focus: null });
  };

  /** @param {KeyboardEvent} e */
  onTitleKey = (e) => {
    const { view, chrome } = this.d;
    const cmd = commandFor(e);
    if (cmd === 'undo' || cmd === 'redo') {
      e.preventDefault();
      if (this.d.canEdit()) (cmd === 'undo' ? this.undo() : this.redo());
      return;
    }
    if (e.key === 'Enter' || cmd === 'down') {
      if (cmd === 'down' && !caretLine(chrome.title).last) return;
      e.preventDefault();
      if (this.d.canEdit() && e.key === 'Enter' && this.rows().length === 0) this.startFirstRow();
      else {
        const first = view.rows[0] && view.ensure(view.rows[0].id);
        if (first) view.focus(first, { offset: 0 });
        else if (this.d.canEdit()) this.startFirstRow();
      }
    }
  };

  /** A title is one line: pasted line breaks become spaces. @param {ClipboardEvent} e */
  onTitlePaste = (e) => {
    const title = this.d.chrome.title;
    const text = e.clipboardData?.getData('text/plain') ?? '';
    if (!/[\r\n]/.test(text)) return;
    e.preventDefault();
    const sel = getSelectionOffsets(title) ?? { start: 0, end: 0 };
    const cur = title.textContent ?? '';
    const ins = text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
    title.textContent = cur.slice(0, sel.start) + ins + cur.slice(sel.end);
    setSelectionOffsets(title, sel.start + ins.length);
    if (this.d.canEdit()) this.d.engine.setTitle(title.textContent ?? '');
  };

  /** Listens on the editor's elements; returns the function that stops it. */
  attach() {
    const { chrome } = this.d;
    const o = chrome.outline;
    /** @type {[EventTarget, string, (e: any) => void][]} */
    const on = [
      [o, 'keydown', this.onKeyDown],
      [o, 'input', this.onInput],
      [o, 'paste', this.onPaste],
      [o, 'copy', this.onCopy],
      [o, 'cut', this.onCut],
      [o, 'change', this.onChange],
      [o, 'compositionstart', this.onCompositionStart],
      [o, 'compositionend', this.onCompositionEnd],
      [o, 'pointerdown', this.onPointerDown],
      [o, 'pointermove', this.onPointerMove],
      [o, 'pointerup', this.onPointerUp],
      [o, 'pointercancel', this.onPointerUp],
      [chrome.editor, 'beforeinput', this.onBeforeInput],
      [chrome.editor, 'focusin', this.onFocusIn],
      [chrome.editor, 'focusout', this.onFocusOut],
      [chrome.editor, 'click', this.onClick],
      [chrome.title, 'input', this.onInput],
      [chrome.title, 'keydown', this.onTitleKey],
      [chrome.title, 'paste', this.onTitlePaste],
      [chrome.add, 'click', () => this.appendRow()],
    ];
    for (const [t, type, fn] of on) t.addEventListener(type, fn);
    return () => {
      this.typing.flush();
      for (const [t, type, fn] of on) t.removeEventListener(type, fn);
    };
  }
}

/**
 * The anchor a selection extends from (its current anchor; `fallback` when none).
 * @param {BlockSelection} sel @param {string} fallback
 */
function anchorOf(sel, fallback) {
  return sel.anchor ?? fallback;
}

/**
 * Whether every bullet shown in the zoomed bullet before an edit is still inside it after
 * (new bullets may come; none may leave).
 * @param {FlatRow[]} rows @param {string} zoom @param {string[]} shownIds
 */
function staysInside(rows, zoom, shownIds) {
  const z = indexOfId(rows, zoom);
  if (z < 0) return false;
  const end = subtreeEnd(rows, z);
  const inside = new Set();
  for (let k = z + 1; k < end; k++) inside.add(rows[k].id);
  const all = new Set(rows.map((r) => r.id));
  return shownIds.every((id) => inside.has(id) || !all.has(id));
}
