// Find's marks in the outline: the current hit scrolled to (zooming out to its parent when
// it is hidden — collapsed, or outside the zoomed bullet) and every word of the query
// highlighted in the drawn rows with the CSS Custom Highlight API (Chromium; elsewhere the
// current hit's outline only). Owns nothing but those marks.

import { ancestorIndices, indexOfId } from './outline-ops.js';

/** @typedef {import('../../engine/types.js').Row} Row */

const HIGHLIGHT = 'docsync-find';

export class FindHighlights {
  /**
   * @param {{view: import('./outline-view.js').OutlineView, outline: HTMLElement,
   *   rows: () => Row[], zoomTo: (id: string|null) => void}} o
   */
  constructor(o) {
    this.o = o;
  }

  /** Shows the hit `id` of query `q`. @param {string} id @param {string} q */
  show(id, q) {
    const { view } = this.o;
    if (view.indexOf(id) < 0) {
      const all = this.o.rows();
      const i = indexOfId(all, id);
      const [p] = i >= 0 ? ancestorIndices(all, i) : [];
      const parent = p != null ? all[p].id : null;
      if (view.zoom !== parent) this.o.zoomTo(parent);
      if (view.indexOf(id) < 0 && parent == null) return;
    }
    const v = view.scrollTo(id);
    this.unmarkCurrent();
    this.mark(q);
    if (v) v.el.classList.add('is-current-hit');
  }

  clear() {
    this.unmarkCurrent();
    // @ts-ignore CSS Custom Highlight API (Chromium); a no-op elsewhere
    globalThis.CSS?.highlights?.delete(HIGHLIGHT);
  }

  /** Highlights the query's words in the drawn rows (again after a redraw). @param {string} q */
  mark(q) {
    // @ts-ignore CSS Custom Highlight API (Chromium); a no-op elsewhere
    const registry = globalThis.CSS?.highlights;
    registry?.delete(HIGHLIGHT);
    // @ts-ignore
    const HighlightCtor = globalThis.Highlight;
    if (!registry || !HighlightCtor) return;
    const words = q.toLowerCase().split(/\s+/).filter(Boolean);
    const ranges = [];
    // only the drawn rows: a windowed outline of 50,000 rows draws about a screenful
    for (const v of this.o.view.drawnViews()) {
      const walker = document.createTreeWalker(v.text, NodeFilter.SHOW_TEXT);
      for (let n = walker.nextNode(); n; n = walker.nextNode()) {
        const t = (n.textContent ?? '').toLowerCase();
        for (const w of words) {
          for (let at = t.indexOf(w); at >= 0; at = t.indexOf(w, at + w.length)) {
            const range = document.createRange();
            range.setStart(n, at);
            range.setEnd(n, at + w.length);
            ranges.push(range);
          }
        }
      }
    }
    registry.set(HIGHLIGHT, new HighlightCtor(...ranges));
  }

  unmarkCurrent() {
    for (const e of this.o.outline.querySelectorAll('.is-current-hit')) e.classList.remove('is-current-hit');
  }
}
