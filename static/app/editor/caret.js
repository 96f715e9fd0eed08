// Caret and selection helpers for one contenteditable line: character offsets in its text,
// whether the caret sits on the first or last visual (wrapped) line, and placing the caret at
// a screen x on a line so ↑/↓ keep the column.

/**
 * The selection inside `el` as character offsets, or null when it is elsewhere.
 * @param {HTMLElement} el
 * @returns {{start: number, end: number}|null}
 */
export function getSelectionOffsets(el) {
  const sel = el.ownerDocument.getSelection();
  if (!sel || sel.rangeCount === 0) return null;
  const r = sel.getRangeAt(0);
  if (!el.contains(r.startContainer) || !el.contains(r.endContainer)) return null;
  return { start: offsetOf(el, r.startContainer, r.startOffset), end: offsetOf(el, r.endContainer, r.endOffset) };
}

/** @param {HTMLElement} el @param {Node} node @param {number} offset */
export function offsetOf(el, node, offset) {
  const pre = el.ownerDocument.createRange();
  pre.selectNodeContents(el);
  pre.setEnd(node, offset);
  return pre.toString().length;
}

/**
 * The DOM position of a character offset inside `el`.
 * @param {HTMLElement} el @param {number} offset
 * @returns {[Node, number]}
 */
function positionOf(el, offset) {
  const walker = el.ownerDocument.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  let left = Math.max(0, offset);
  /** @type {Text|null} */
  let lastText = null;
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const t = /** @type {Text} */ (n);
    if (left <= t.data.length) return [t, left];
    left -= t.data.length;
    lastText = t;
  }
  return lastText ? [lastText, lastText.data.length] : [el, 0];
}

/**
 * @param {HTMLElement} el @param {number} start @param {number} [end]
 */
export function setSelectionOffsets(el, start, end = start) {
  const sel = el.ownerDocument.getSelection();
  if (!sel) return;
  const r = el.ownerDocument.createRange();
  const [sn, so] = positionOf(el, start);
  r.setStart(sn, so);
  if (end !== start) {
    const [en, eo] = positionOf(el, end);
    r.setEnd(en, eo);
  } else r.collapse(true);
  sel.removeAllRanges();
  sel.addRange(r);
}

/** @param {HTMLElement} el */
function lineBox(el) {
  const cs = getComputedStyle(el);
  const rect = el.getBoundingClientRect();
  const lh = parseFloat(cs.lineHeight) || parseFloat(cs.fontSize) * 1.5 || 20;
  const top = rect.top + (parseFloat(cs.paddingTop) || 0) + (parseFloat(cs.borderTopWidth) || 0);
  const bottom = rect.bottom - (parseFloat(cs.paddingBottom) || 0) - (parseFloat(cs.borderBottomWidth) || 0);
  return { rect, lh, top, bottom };
}

/**
 * The caret's screen rectangle (collapsed selection at its focus).
 * @param {HTMLElement} el
 * @returns {DOMRect|null}
 */
export function caretRect(el) {
  const sel = el.ownerDocument.getSelection();
  if (!sel || sel.rangeCount === 0 || !el.contains(sel.focusNode)) return null;
  const r = el.ownerDocument.createRange();
  r.setStart(/** @type {Node} */ (sel.focusNode), sel.focusOffset);
  r.collapse(true);
  const rects = r.getClientRects();
  if (rects.length) return rects[rects.length - 1];
  return null;
}

/**
 * Where the caret is, vertically: on the first visual line, the last, both (one line) or
 * neither. With no measurable caret (empty line) it counts as both.
 * @param {HTMLElement} el
 */
export function caretLine(el) {
  const c = caretRect(el);
  if (!c || c.height === 0) return { first: true, last: true, x: null };
  const { lh, top, bottom } = lineBox(el);
  const mid = (c.top + c.bottom) / 2;
  return { first: mid < top + lh, last: mid > bottom - lh, x: c.left };
}

/**
 * Puts the caret on the first or last visual line of `el` as near as possible to screen `x`.
 * `el` must be focused and laid out (scrolled into view).
 * @param {HTMLElement} el @param {number} x @param {'first'|'last'} line
 */
export function placeCaretAtX(el, x, line) {
  const { rect, lh, top, bottom } = lineBox(el);
  const y = line === 'first' ? top + lh / 2 : bottom - lh / 2;
  const cx = Math.max(rect.left + 1, Math.min(x, rect.right - 1));
  const doc = /** @type {Document & {caretPositionFromPoint?: (x: number, y: number) => {offsetNode: Node, offset: number}|null}} */ (el.ownerDocument);
  /** @type {[Node, number]|null} */
  let pos = null;
  if (typeof doc.caretPositionFromPoint === 'function') {
    const p = doc.caretPositionFromPoint(cx, y);
    if (p) pos = [p.offsetNode, p.offset];
  } else if (typeof doc.caretRangeFromPoint === 'function') {
    const r = doc.caretRangeFromPoint(cx, y);
    if (r) pos = [r.startContainer, r.startOffset];
  }
  const text = el.textContent ?? '';
  if (pos && el.contains(pos[0])) setSelectionOffsets(el, offsetOf(el, pos[0], pos[1]));
  else setSelectionOffsets(el, line === 'first' ? 0 : text.length);
}

/**
 * The character offset (in the rendered text of `el`) under a screen point, or null.
 * @param {HTMLElement} el @param {number} x @param {number} y
 */
export function offsetAtPoint(el, x, y) {
  const doc = /** @type {Document & {caretPositionFromPoint?: (x: number, y: number) => {offsetNode: Node, offset: number}|null}} */ (el.ownerDocument);
  /** @type {[Node, number]|null} */
  let pos = null;
  if (typeof doc.caretPositionFromPoint === 'function') {
    const p = doc.caretPositionFromPoint(x, y);
    if (p) pos = [p.offsetNode, p.offset];
  } else if (typeof doc.caretRangeFromPoint === 'function') {
    const r = doc.caretRangeFromPoint(x, y);
    if (r) pos = [r.startContainer, r.startOffset];
  }
  if (!pos || !el.contains(pos[0])) return null;
  return offsetOf(el, pos[0], pos[1]);
}
