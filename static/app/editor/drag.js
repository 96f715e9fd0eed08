// Moving a bullet by its handle with pointer events (mouse, pen and touch alike): a press on
// the handle starts, 5 px of movement makes it a drag, release drops it before, after or
// into the bullet under the pointer. A press and release without movement is a click on the
// bullet: it folds or unfolds it. The result goes through the editor's one write path.
//
// Invariants: at most one drag at a time, tied to its pointer id; the dragged row stays drawn
// (pinned in the OutlineView) until the drag ends; nothing is written before the drop.

import { dropRow } from './outline-ops.js';
import { make } from './row-view.js';

/** @typedef {import('./row-view.js').RowView} RowView */
/** @typedef {import('./outline-ops.js').OpResult} OpResult */
/** @typedef {import('../../engine/types.js').FlatRow} FlatRow */
/** @typedef {{id: string, where: 'before'|'after'|'into'}} DropTarget */

/**
 * @typedef {{
 *   view: import('./outline-view.js').OutlineView,
 *   chrome: import('./chrome.js').EditorChrome,
 *   canEdit: () => boolean,
 *   rows: () => FlatRow[],
 *   commit: (r: OpResult|null) => boolean,
 *   lockedBy: (id: string) => string|null,
 *   onClickBullet: (v: RowView) => void,
 * }} DragDeps
 */

export class DragController {
  /** @type {{id: string, v: RowView, x: number, y: number, pid: number, started: boolean, target: DropTarget|null, ghost: HTMLElement|null}|null} */
  #drag = null;

  /** @param {DragDeps} deps */
  constructor(deps) {
    this.d = deps;
  }

  get active() {
    return this.#drag != null;
  }

  /** A press on a bullet's handle. @param {PointerEvent} e @param {RowView} v */
  start(e, v) {
    if (e.button !== 0 || !v.row) return;
    e.preventDefault();
    this.#drag = { id: v.row.id, v, x: e.clientX, y: e.clientY, pid: e.pointerId, started: false, target: null, ghost: null };
    this.d.view.pin(v.row.id);
    try {
      v.el.setPointerCapture(e.pointerId);
    } catch {
      /* capture is a nicety */
    }
  }

  /** @param {PointerEvent} e */
  move(e) {
    const drag = this.#drag;
    if (!drag || e.pointerId !== drag.pid) return;
    const { chrome, view } = this.d;
    if (!drag.started) {
      if (Math.hypot(e.clientX - drag.x, e.clientY - drag.y) < 5) return;
      if (!this.d.canEdit()) return;
      if (drag.v.lock) {
        chrome.showNotice(`Can't move it: ${drag.v.lock} is editing that bullet right now.`);
        this.#end();
        return;
      }
      drag.started = true;
      drag.v.el.classList.add('is-dragging');
      chrome.editor.classList.add('is-dragging');
      const g = make(chrome.doc, 'div', 'ed-ghost', drag.v.row?.content || ' ');
      chrome.editor.append(g);
      drag.ghost = g;
    }
    e.preventDefault();
    if (drag.ghost) drag.ghost.style.transform = `translate(${e.clientX + 12}px, ${e.clientY + 8}px)`;
    // auto-scroll near the edges
    const win = view.win;
    const edge = 48;
    if (e.clientY < edge) win.scrollBy(0, -12);
    else if (e.clientY > win.innerHeight - edge) win.scrollBy(0, 12);
    drag.target = this.#targetAt(e.clientX, e.clientY);
    const t = drag.target && view.view(drag.target.id);
    const line = chrome.dropLine;
    if (!t || !drag.target) {
      line.hidden = true;
      return;
    }
    const r = t.el.getBoundingClientRect();
    const tr = t.text.getBoundingClientRect();
    const base = chrome.main.getBoundingClientRect();
    const indentPx = drag.target.where === 'into' ? 28 : 0;
    line.hidden = false;
    line.style.top = `${(drag.target.where === 'before' ? r.top : r.bottom) - base.top - 1}px`;
    line.style.left = `${tr.left - base.left + indentPx - 14}px`;
    line.style.width = `${Math.max(40, chrome.outline.getBoundingClientRect().right - tr.left - indentPx + 14)}px`;
  }

  /**
   * Which row the pointer is over and where the bullet would go.
   * @param {number} x @param {number} y
   * @returns {DropTarget|null}
   */
  #targetAt(x, y) {
    const drag = this.#drag;
    if (!drag) return null;
    const { view, chrome } = this.d;
    const hit = chrome.doc.elementFromPoint(Math.max(x, chrome.outline.getBoundingClientRect().left + 40), y);
    const v = hit ? view.viewOf(hit) : null;
    if (!v || !v.row || v.row.id === drag.id) return null;
    const r = v.el.getBoundingClientRect();
    const rel = (y - r.top) / Math.max(1, r.height);
    /** @type {'before'|'after'|'into'} */
    let where = rel < 0.3 ? 'before' : rel > 0.7 ? 'after' : 'into';
    // below an expanded parent, "after" would land far down (after its children): go in first
    if (where === 'after' && v.row.hasChildren && !v.row.collapsed) where = 'into';
    return { id: v.row.id, where };
  }

  /** pointerup (drop) or pointercancel (abandon). @param {PointerEvent} e */
  finish(e) {
    const d = this.#drag;
    if (!d || e.pointerId !== d.pid) return;
    this.#end();
    if (!d.started) {
      // a click on the bullet
      if (e.type === 'pointerup' && d.v.row) this.d.onClickBullet(d.v);
      return;
    }
    if (e.type !== 'pointerup' || !d.target) return;
    this.d.commit(dropRow(this.d.rows(), d.id, d.target.id, d.target.where, { lockedBy: this.d.lockedBy }));
  }

  #end() {
    const d = this.#drag;
    this.#drag = null;
    this.d.view.pin(null);
    const { chrome } = this.d;
    chrome.dropLine.hidden = true;
    if (!d) return;
    d.ghost?.remove();
    d.v.el.classList.remove('is-dragging');
    chrome.editor.classList.remove('is-dragging');
  }
}

