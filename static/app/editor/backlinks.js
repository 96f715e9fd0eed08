// "Linked from": the bullets of other documents that link to this one ([[doc_…]]), under the
// outline. The server lists only documents the reader may read; the panel asks again when
// the page comes back into view (someone may have linked meanwhile).

import { make } from './row-view.js';
import { shownText } from './markdown.js';

/** @typedef {{docId: string, docTitle: string, blockId: string, content: string}} Backlink */

export class BacklinksPanel {
  #loading = false;
  /** @type {Backlink[]} what is drawn */
  #links = [];

  /** @param {Document} doc @param {() => Promise<Backlink[]>} load */
  constructor(doc, load) {
    this.doc = doc;
    this.load = load;
    this.el = make(doc, 'section', 'ed-backlinks');
    this.el.id = 'backlinks';
    this.el.setAttribute('aria-label', 'Linked from');
    this.el.hidden = true;
  }

  /** Asks the server and draws the list (hidden when nothing links here, or offline). */
  async refresh() {
    if (this.#loading) return;
    this.#loading = true;
    try {
      this.draw(await this.load());
    } catch {
      // offline or no access: keep what is shown
    } finally {
      this.#loading = false;
    }
  }

  /** Draws the same list again (the titles its links show have changed). */
  redraw() {
    if (this.#links.length) this.draw(this.#links);
  }

  /** @param {Backlink[]} links */
  draw(links) {
    this.#links = links;
    this.el.textContent = '';
    this.el.hidden = links.length === 0;
    if (!links.length) return;
    this.el.append(make(this.doc, 'h2', 'ed-backlinks-title', `Linked from ${links.length === 1 ? '1 bullet' : `${links.length} bullets`}`));
    const list = make(this.doc, 'ul', 'ed-backlinks-list');
    for (const l of links) {
      const li = make(this.doc, 'li', 'ed-backlink');
      const a = make(this.doc, 'a', 'ed-backlink-link');
      a.href = `/d/${encodeURIComponent(l.docId)}#${encodeURIComponent(l.blockId)}`;
      a.append(make(this.doc, 'span', 'ed-backlink-doc', l.docTitle.trim() || 'Untitled'), make(this.doc, 'span', 'ed-backlink-text', preview(l.content)));
      li.append(a);
      list.append(li);
    }
    this.el.append(list);
  }
}

/** A bullet's text for the list: as shown (links by their text or title), one line, at most 140 characters. @param {string} s */
function preview(s) {
  const one = shownText(s).replace(/\s+/g, ' ').trim();
  return one.length > 140 ? `${one.slice(0, 139)}…` : one;
}
