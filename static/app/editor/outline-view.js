// The outline as drawn: which rows are shown (collapsed children left out, only the zoomed
// bullet's subtree when zoomed), their RowViews keyed by block id, and — above WINDOW_MIN
// shown rows — only the rows near the viewport plus spacers standing in for the others.
// Pure DOM: it never edits the document; the InputController asks it where things are.
//
// Invariants: `#shown` is the list of rows the reader sees, in order, and `#index` answers
// each of their ids with its position (shown-index.js); every drawn RowView is for a shown
// row and sits in document order among the spacers; the row being edited, the caret's next
// target and a dragged row are drawn wherever they are; the focused field keeps its focus
// and caret across a redraw.

import { indexOfId, subtreeEnd, visibleRows } from './outline-ops.js';
import { RowView, make } from './row-view.js';
import { RowHeights } from './row-heights.js';
import { ShownIndex, spliceBetween } from './shown-index.js';
import { getSelectionOffsets, placeCaretAtX, setSelectionOffsets } from './caret.js';
import { whenIdle } from '../ui/dom.js';

/** @typedef {import('../../engine/types.js').Row} Row */
/** @typedef {import('../../engine/types.js').Lock} Lock */
/** @typedef {{rows: Row[], locks: Map<string, Lock>, role: string|null}} ViewState */
/** @typedef {{offset?: number, x?: number, line?: 'first'|'last'}} Where */

/** Above this many shown rows only those near the viewport are drawn. */
export const WINDOW_MIN = 400;
/** Splices of the row index after which it is rebuilt when idle (it rebuilds itself at 32). */
const COMPACT_AFTER_SPLICES = 12;
/** A scroll event this soon after the view scrolled to show a row is that scroll's. */
const OWN_SCROLL_MS = 100;

/**
 * The rows a reader sees: collapsed children left out; when zoomed, only the zoomed bullet's
 * descendants (its own collapsed flag ignored), drawn from depth `base`.
 * @param {Row[]} rows @param {string|null} zoom @param {boolean} [hideDone] leave out completed todos
 * @returns {{rows: Row[], base: number, found: boolean}}
 */
export function shownRows(rows, zoom, hideDone = false) {
  /** @param {Row[]} list */
  const shown = (list) => {
    const v = hideDone ? withoutDone(list) : list;
    // Nothing folded (the usual big document): the list itself, not a copy of 50,000 rows
    // after every keystroke (the engine never changes a list it handed out).
    return v.some((r) => r.collapsed) ? visibleRows(v) : v;
  };
  if (!zoom) return { rows: shown(rows), base: 0, found: true };
  const i = indexOfId(rows, zoom);
  if (i < 0) return { rows: [], base: 0, found: false };
  return { rows: shown(rows.slice(i + 1, subtreeEnd(rows, i))), base: rows[i].depth + 1, found: true };
}

/** Rows without completed todos (and what is under them). @param {Row[]} rows */
function withoutDone(rows) {
  /** @type {Row[]} */
  const out = [];
  let skipBelow = Infinity;
  for (const r of rows) {
    if (r.depth > skipBelow) continue;
    skipBelow = Infinity;
    if (r.type === 'todo' && r.checked) {
      skipBelow = r.depth;
      continue;
    }
    out.push(r);
  }
  return out;
}

export class OutlineView {
  /** @type {Map<string, RowView>} */
  #views = new Map();
  /** @type {Row[]} */
  #shown = [];
  #index = new ShownIndex();
  #compacting = false;
  /** a draw of the screens around the viewport is due when idle (after a jump) */
  #widening = false;
  /** when this view last scrolled the page itself to show the caret's row (`reveal`) */
  #revealedAt = -Infinity;
  #base = 0;
  /** @type {Row[]|null} the engine's list `#shown` was made from */
  #shownOf = null;
  /** @type {string|null} */
  #zoom = null;
  #zoomFound = true;
  #hideDone = false;
  /** @type {HTMLElement[]} */
  #spacers = [];
  #heights = new RowHeights();
  /**
   * The whole document's shown rows, their index and heights, kept while zoomed into a
   * bullet: zooming back out then indexes nothing again (at 50,000 rows the index and the
   * heights of every row were most of a zoom out's script).
   * @type {{shown: Row[], shownOf: Row[]|null, index: ShownIndex, heights: RowHeights}|null}
   */
  #whole = null;
  #drawnFrom = 0;
  #drawnTo = 0;
  /** @type {ViewState|null} */
  #state = null;
  #editable = false;
  /** what the last draw drew from (a redraw is needed when any differs) */
  /** @type {Row[]|null} */
  #drawnRows = null;
  /** @type {Map<string, Lock>|null} */
  #drawnLocks = null;
  /** @type {boolean|null} */
  #drawnEditable = null;
  /** @type {Set<string>} */
  #selected = new Set();
  /** @type {import('./outline-ops.js').Caret|null} caret to place once the row exists */
  #pendingFocus = null;
  #reconciling = false;
  /** @type {string|null} a row drawn wherever it is (being dragged) */
  #pinned = null;
  /** @type {string|null} id of the row whose text field has focus */
  focusedId = null;
  /** @type {HTMLElement|null} the one read-only field Tab stops at (roving tab stop) */
  #tabStop = null;
  /** @type {string|null} the bullet that holds the outline's tab stop (the last focused) */
  #stopId = null;

  /**
   * @param {HTMLElement} outline the element the rows go in
   * @param {{bottomInset?: () => number, isTyping?: (id: string) => boolean}} [opts]
   *   `bottomInset`: px at the bottom of the window covered by the editor's footer;
   *   `isTyping`: the row's field holds text the engine has not been given yet
   */
  constructor(outline, opts = {}) {
    this.outline = outline;
    this.doc = outline.ownerDocument;
    this.win = /** @type {Window} */ (this.doc.defaultView);
    this.bottomInset = opts.bottomInset ?? (() => 0);
    this.isTyping = opts.isTyping ?? (() => false);
  }

  /** Rows the reader sees, in order. */
  get rows() {
    return this.#shown;
  }
  /** The zoomed bullet's id, or null for the whole document. */
  get zoom() {
    return this.#zoom;
  }
  /** False when zoomed into a bullet the document does not have (any more). */
  get zoomFound() {
    return this.#zoomFound;
  }
  /** A caret waits to be put into a row the next render draws (after a structure edit). */
  get focusPending() {
    return this.#pendingFocus !== null;
  }
  /** Depth of the rows drawn at the left edge. */
  get base() {
    return this.#base;
  }
  /** True while the DOM is rearranged (focus events then are not the user's). */
  get reconciling() {
    return this.#reconciling;
  }
  get windowed() {
    return this.#shown.length > WINDOW_MIN;
  }

  /** @param {string} id */
  indexOf(id) {
    return this.#index.get(id) ?? -1;
  }

  /** The drawn view of a row (null when not drawn). @param {string} id */
  view(id) {
    return this.#views.get(id) ?? null;
  }

  /** Every drawn row's view, in no particular order (about a screenful when windowed). */
  drawnViews() {
    return this.#views.values();
  }

  /** @param {EventTarget|null} t @returns {RowView|null} */
  viewOf(t) {
    if (!t || !(/** @type {any} */ (t).closest)) return null;
    const rowEl = /** @type {Element} */ (t).closest('.row');
    const id = rowEl ? /** @type {HTMLElement} */ (rowEl).dataset.blockId : undefined;
    return id ? (this.#views.get(id) ?? null) : null;
  }

  /** Zoom into a bullet (null: the whole document). @param {string|null} id */
  setZoom(id) {
    if (id === this.#zoom) return;
    if (this.#zoom === null) {
      this.#whole = { shown: this.#shown, shownOf: this.#shownOf, index: this.#index, heights: this.#heights };
      this.#shown = [];
      this.#index = new ShownIndex();
      this.#heights = new RowHeights();
    } else if (id === null && this.#whole) {
      // Back to the kept whole: the next draw splices only what changed meanwhile.
      ({ shown: this.#shown, shownOf: this.#shownOf, index: this.#index, heights: this.#heights } = this.#whole);
      this.#whole = null;
      this.#zoom = null;
      this.#base = 0;
      this.#zoomFound = true;
      this.#drawnRows = null;
      return;
    }
    this.#zoom = id;
    this.#shownOf = null;
    this.#drawnRows = null;
  }

  /** Leaves completed todos (with what is under them) out. @param {boolean} on */
  setHideCompleted(on) {
    if (on === this.#hideDone) return;
    this.#hideDone = on;
    if (this.#whole) this.#whole.shownOf = null; // its rows are recomputed on the way back
    this.#shownOf = null;
    this.#drawnRows = null;
  }

  /** Marks whole bullets as selected. @param {Set<string>} ids */
  setSelection(ids) {
    this.#selected = ids;
    for (const [id, v] of this.#views) v.setSelected(ids.has(id));
  }

  /** @param {string|null} id */
  pin(id) {
    this.#pinned = id;
  }

  /** Put the caret here once the row is drawn (after a structure edit). @param {import('./outline-ops.js').Caret} c */
  focusAfterRender(c) {
    this.#pendingFocus = c;
  }

  /** Everything is drawn again at the next render (after the engine refused an edit). */
  invalidate() {
    for (const v of this.#views.values()) v.stale = true;
    this.#drawnRows = null;
  }

  /**
   * Draws the state (only what changed since the last draw).
   * @param {ViewState} state @param {boolean} editable
   */
  render(state, editable) {
    this.#state = state;
    this.#editable = editable;
    if (state.rows !== this.#drawnRows || state.locks !== this.#drawnLocks || editable !== this.#drawnEditable) {
      this.#draw(null);
      this.#drawnRows = state.rows;
      this.#drawnLocks = state.locks;
      this.#drawnEditable = editable;
    }
    if (this.#pendingFocus) {
      const v = this.ensure(this.#pendingFocus.id);
      if (v) {
        const { offset } = this.#pendingFocus;
        this.#pendingFocus = null;
        this.focus(v, { offset });
      }
    }
  }

  /**
   * @param {string|null} extraId a row drawn wherever it is
   * @param {boolean} [wide] true: the screens around the viewport too (a scroll must find
   *   rows ahead of it drawn); false: only the screen (a jump's widening is due); unset: as
   *   `#windowIndices` tells a jump
   */
  #draw(extraId, wide) {
    const s = this.#state;
    if (!s) return;
    const doc = this.doc;
    const active = doc.activeElement;
    const activeView = this.focusedId ? this.#views.get(this.focusedId) : undefined;
    const hadFocus = !!activeView && active === activeView.text;
    const caret = hadFocus && activeView ? getSelectionOffsets(activeView.text) : null;
    const oldIndex = this.focusedId != null ? this.indexOf(this.focusedId) : -1;

    if (s.rows !== this.#shownOf) {
      this.#shownOf = s.rows;
      const before = this.#shown;
      const next = shownRows(s.rows, this.#zoom, this.#hideDone);
      this.#shown = next.rows;
      this.#base = next.base;
      this.#zoomFound = next.found;
      // Typing changes no order: the index and the row offsets stay. A structural edit
      // changes one stretch: only it is looked at (50,000 rows are not indexed again).
      const d = spliceBetween(before, next.rows);
      if (d.same) this.#heights.carryOver(before, next.rows);
      else {
        this.#index.splice(next.rows, d.at, d.removed, d.added);
        this.#heights.splice(before, next.rows, d.at, d.removed, d.added);
        this.#compactSoon();
      }
    }
    const shown = this.#shown;
    const want = this.windowed ? this.#windowIndices([this.focusedId, this.#pendingFocus?.id, this.#pinned, extraId], wide) : null;
    /** @type {import('./row-view.js').RowLook} */
    const look = { lock: null, editable: this.#editable, viewer: s.role === 'viewer', depthBase: this.#base, typing: false };

    this.#reconciling = true;
    try {
      // drop rows that are gone, hidden or outside the window
      for (const [id, v] of this.#views) {
        const i = this.#index.get(id);
        if (i === undefined || (want && !want.has(i))) {
          v.el.remove();
          this.#views.delete(id);
        }
      }
      // create or update, then put in order (spacers stand in for the rows not drawn)
      const outline = this.outline;
      const fresh = outline.firstChild === null;
      const frag = fresh ? doc.createDocumentFragment() : null;
      let cursor = outline.firstChild;
      let spacerNo = 0;
      let gapFrom = -1; // first index of the current run of rows not drawn
      /** @param {Node} node */
      const place = (node) => {
        if (frag) frag.append(node);
        else if (node === cursor) cursor = cursor.nextSibling;
        else outline.insertBefore(node, cursor);
      };
      /** @param {number} to */
      const flushGap = (to) => {
        if (gapFrom < 0) return;
        const sp = this.#spacer(spacerNo++);
        const h = `${Math.round(this.#heights.span(shown, gapFrom, to))}px`;
        if (sp.style.height !== h) sp.style.height = h;
        place(sp);
        gapFrom = -1;
      };
      // Only the rows drawn are visited (a window of 50,000 rows is ~100 of them); the rows
      // between two drawn ones are one gap.
      const drawn = want ? [...want].sort((a, b) => a - b) : null;
      const count = drawn ? drawn.length : shown.length;
      let next = 0; // first index not yet drawn or gapped
      for (let k = 0; k < count; k++) {
        const i = drawn ? drawn[k] : k;
        if (i > next) gapFrom = next;
        next = i + 1;
        flushGap(i);
        const r = shown[i];
        let v = this.#views.get(r.id);
        look.lock = s.locks.get(r.id)?.name ?? null;
        look.typing = this.isTyping(r.id);
        if (!v) {
          v = new RowView(doc);
          this.#views.set(r.id, v);
          v.update(r, look);
          if (this.#selected.has(r.id)) v.setSelected(true);
        } else if (v.differs(r, look)) v.update(r, look);
        else v.row = r;
        place(v.el);
      }
      if (next < shown.length) gapFrom = next;
      flushGap(shown.length);
      if (frag) outline.append(frag);
      for (let k = spacerNo; k < this.#spacers.length; k++) this.#spacers[k].remove();
      this.#spacers.length = spacerNo;
    } finally {
      this.#reconciling = false;
    }

    this.moveTabStop();

    if (hadFocus && activeView && doc.activeElement !== activeView.text && activeView.text.isConnected) {
      activeView.text.focus({ preventScroll: true });
      if (caret) setSelectionOffsets(activeView.text, caret.start, caret.end);
    } else if (hadFocus && activeView && !activeView.text.isConnected && !this.#pendingFocus) {
      // the bullet being edited went away (undo of its insert, someone deleted it): stay near
      const near = shown[Math.max(0, Math.min(oldIndex - 1, shown.length - 1))];
      this.focusedId = null;
      if (near) {
        const nv = this.ensure(near.id);
        if (nv) this.focus(nv, { offset: near.content.length });
      }
    }
  }

  /**
   * The outline is one tab stop: the last focused bullet, else the first shown; ↑/↓ move
   * between bullets. Inside an editable bullet Tab indents; after Escape (which leaves the
   * text) Tab and Shift+Tab leave the outline, as they do from a read-only bullet.
   */
  moveTabStop() {
    // The bullet left last keeps the stop: after Escape (a blur), Shift+Tab goes on to the
    // title and the bar instead of into another bullet.
    if (this.focusedId) this.#stopId = this.focusedId;
    const id = this.#stopId && this.#views.has(this.#stopId) ? this.#stopId : this.#shown[0]?.id;
    const next = (id ? this.#views.get(id)?.text : null) ?? null;
    if (this.#tabStop && this.#tabStop !== next) this.#tabStop.tabIndex = -1;
    this.#tabStop = next;
    if (next && next.tabIndex !== 0) next.tabIndex = 0;
  }

  /**
   * Once splices pile up, the index is rebuilt when the browser is idle, so its lookups walk
   * few. Not after every edit: at 50,000 rows a rebuild is a few ms, and an idle moment
   * between two keys of a fast typist is not idle for long (a key arriving during it waits).
   */
  #compactSoon() {
    if (this.#compacting || this.#index.pending < COMPACT_AFTER_SPLICES) return;
    this.#compacting = true;
    whenIdle(this.win, () => {
      this.#compacting = false;
      if (this.#index.pending > 0) this.#index.rebuild();
    }, 2000);
  }

  // ---- windowing ------------------------------------------------------------------------------

  /** @param {number} k */
  #spacer(k) {
    let sp = this.#spacers[k];
    if (!sp) {
      sp = make(this.doc, 'div', 'ed-spacer');
      sp.setAttribute('aria-hidden', 'true');
      this.#spacers[k] = sp;
    }
    return sp;
  }

  /** The range of rows the viewport shows, with `margin` screens each side. @param {number} margin */
  #viewportRange(margin) {
    const top = this.outline.getBoundingClientRect().top;
    const vh = this.win.innerHeight;
    const shown = this.#shown;
    return [this.#heights.indexAt(shown, -top - margin * vh), Math.min(shown.length, this.#heights.indexAt(shown, -top + (1 + margin) * vh) + 1)];
  }

  /**
   * @param {(string|null|undefined)[]} keep ids drawn wherever they are
   * @param {boolean|undefined} wide see `#draw`
   * @returns {Set<number>}
   */
  #windowIndices(keep, wide) {
    // record the heights of the drawn rows (one layout read, before any change)
    for (const [id, v] of this.#views) this.#heights.record(id, v.el.offsetHeight, this.#index.get(id));
    let [a, b] = this.#viewportRange(1);
    let drawn = 0;
    if (wide === undefined) for (let i = a; i < b; i++) if (this.#views.has(this.#shown[i].id)) drawn++;
    if (wide === false || (wide === undefined && drawn * 3 < b - a)) {
      // A jump (the first draw, zooming out, a far hit of find, Ctrl+Home): little of what
      // is drawn is near. Only the screen itself now — a third of the rows to make —, the
      // screens above and below when the page is idle (or at the first scroll, as always).
      [a, b] = this.#viewportRange(0);
      this.#widenSoon();
    }
    this.#drawnFrom = a;
    this.#drawnTo = b;
    const want = new Set();
    for (let i = a; i < b; i++) want.add(i);
    for (const id of keep) {
      const i = id ? this.#index.get(id) : undefined;
      if (i !== undefined) want.add(i);
    }
    return want;
  }

  /** Draws the screens above and below the viewport too, when the page is idle. */
  #widenSoon() {
    if (this.#widening) return;
    this.#widening = true;
    whenIdle(this.win, () => {
      this.#widening = false;
      if (this.windowed && this.#state) this.#draw(null, true);
    }, 300);
  }

  /** After a scroll or resize: redraws when the viewport nears the edge of what is drawn. */
  onScroll() {
    if (!this.windowed || !this.#state) return;
    // The scroll this view just made to show the caret's row (a paste's last bullet, far
    // below): part of the edit's frame, so only the screen now, like a jump's.
    const own = this.win.performance.now() - this.#revealedAt < OWN_SCROLL_MS;
    this.#revealedAt = -Infinity;
    const [a, b] = this.#viewportRange(0.5);
    // Wide, so a scroll finds the rows ahead of it drawn — unless a jump's widening is due
    // (the scroll a jump itself caused: the screens around come when idle, ≤ 300 ms)
    if (a < this.#drawnFrom || b > this.#drawnTo) this.#draw(null, !this.#widening && !own);
  }

  /** The view of a row, drawing it first if it is outside the window. @param {string} id */
  ensure(id) {
    let v = this.#views.get(id);
    if (!v && this.#state && this.#index.has(id)) {
      this.#draw(id);
      v = this.#views.get(id);
    }
    return v ?? null;
  }

  /** The view `delta` shown rows away from a row. @param {string} id @param {number} delta */
  neighbour(id, delta) {
    const i = this.#index.get(id);
    if (i == null) return null;
    const r = this.#shown[i + delta];
    return r ? this.ensure(r.id) : null;
  }

  /** Scrolls a row (drawn or not) into the middle of the screen. @param {string} id */
  scrollTo(id) {
    const i = this.#index.get(id);
    if (i === undefined) return null;
    if (this.windowed) {
      const top = this.outline.getBoundingClientRect().top + this.win.scrollY;
      this.win.scrollTo(0, Math.max(0, top + this.#heights.top(this.#shown, i) - this.win.innerHeight / 2));
      this.#draw(id);
    }
    const v = this.ensure(id);
    v?.el.scrollIntoView?.({ block: 'center' });
    return v;
  }

  /** Focuses a row's field and places the caret. @param {RowView} v @param {Where} where */
  focus(v, where) {
    if (this.doc.activeElement !== v.text) v.text.focus({ preventScroll: true });
    v.showRaw();
    this.reveal(v.el);
    if (v.text.getAttribute('contenteditable') == null) return;
    if (where.x != null && where.line) placeCaretAtX(v.text, where.x, where.line);
    else setSelectionOffsets(v.text, Math.min(where.offset ?? 0, (v.text.textContent ?? '').length));
  }

  /** Scrolls just enough to show an element above the footer. @param {HTMLElement} e */
  reveal(e) {
    const r = e.getBoundingClientRect();
    const limit = this.win.innerHeight - this.bottomInset() - 8;
    if (r.top < 8 || r.bottom > limit) {
      this.#revealedAt = this.win.performance.now();
      e.scrollIntoView?.({ block: 'nearest' });
    }
    const r2 = e.getBoundingClientRect();
    if (r2.bottom > limit) {
      this.#revealedAt = this.win.performance.now();
      this.win.scrollBy(0, r2.bottom - limit);
    }
  }
}
