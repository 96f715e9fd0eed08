// A row of structure buttons above a phone's keyboard: a phone keyboard has no Tab, no
// Alt+Shift+arrows, no Ctrl+Enter and no Ctrl+Z, so without it the tree cannot be edited —
// or an edit undone, or a bullet with children deleted — on a phone.
// Shown on touch screens only (coarse pointer) while a bullet is being edited; the buttons
// act on pointerdown and never take the focus, so the keyboard stays up and the caret stays.
//
// Invariant: the bar sits on top of the visual viewport's bottom edge (above the keyboard),
// following `visualViewport` resizes and scrolls.

import { make } from './row-view.js';

/** @typedef {'indent'|'outdent'|'moveUp'|'moveDown'|'toggleTodo'|'zoomIn'|'zoomOut'|'undo'|'delete'} ToolbarCommand */

/** @type {[ToolbarCommand, string, string][]} [command, label, glyph] */
const BUTTONS = [
  ['outdent', 'Outdent', '⇤'],
  ['indent', 'Indent', '⇥'],
  ['moveUp', 'Move up', '↑'],
  ['moveDown', 'Move down', '↓'],
  ['toggleTodo', 'Todo / done', '☑'],
  ['zoomIn', 'Zoom into the bullet', '⤢'],
  ['zoomOut', 'Zoom out', '⤡'],
  ['undo', 'Undo', '↶'],
  ['delete', 'Delete the bullet', '⌫'],
];

export class TouchToolbar {
  /** @param {Document} doc @param {(cmd: ToolbarCommand) => void} run */
  constructor(doc, run) {
    this.doc = doc;
    this.win = /** @type {Window} */ (doc.defaultView);
    this.el = make(doc, 'div', 'ed-touchbar');
    this.el.id = 'touch-toolbar';
    this.el.setAttribute('role', 'toolbar');
    this.el.setAttribute('aria-label', 'Bullet structure');
    this.el.hidden = true;
    for (const [cmd, label, glyph] of BUTTONS) {
      const b = make(doc, 'button', 'ed-touchbar-btn', glyph);
      b.type = 'button';
      b.dataset.cmd = cmd;
      b.setAttribute('aria-label', label);
      b.title = label;
      // pointerdown, not click: a click would move the focus out of the bullet first
      b.addEventListener('pointerdown', (e) => {
        e.preventDefault();
        run(cmd);
      });
      // keyboard users (a phone with a keyboard attached) still get a click
      b.addEventListener('click', (e) => {
        if (e.detail === 0) run(cmd);
      });
      this.el.append(b);
    }
    this.place = this.place.bind(this);
  }

  /** True on a touch screen (the bar is for phones and tablets). */
  get wanted() {
    return this.win.matchMedia?.('(pointer: coarse)').matches ?? false;
  }

  /** Shown while editing a bullet, on touch screens. @param {boolean} editing */
  show(editing) {
    const on = editing && this.wanted;
    if (this.el.hidden === !on) return;
    this.el.hidden = !on;
    if (on) this.place();
  }

  /** Keeps the bar on the visual viewport's bottom edge (above the on-screen keyboard). */
  place() {
    const vv = this.win.visualViewport;
    if (!vv || this.el.hidden) return;
    const bottom = this.win.innerHeight - (vv.offsetTop + vv.height);
    this.el.style.bottom = `${Math.max(0, bottom)}px`;
  }

  attach() {
    const vv = this.win.visualViewport;
    vv?.addEventListener('resize', this.place);
    vv?.addEventListener('scroll', this.place);
    return () => {
      vv?.removeEventListener('resize', this.place);
      vv?.removeEventListener('scroll', this.place);
    };
  }
}
