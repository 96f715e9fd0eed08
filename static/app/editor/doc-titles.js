// The documents this person can read, asked once per page (again on demand): their titles for
// `[[doc_…]]` links (markdown.js draws them) and the choices of the `[[` picker. Owns the one
// request in flight; a failed request is forgotten, so the next need asks again.

import { setLinkTitles } from './markdown.js';

/** @typedef {import('../../engine/types.js').Row} Row */
/** @typedef {{docId: string, title: string}} DocTitle */

export class DocTitles {
  /** @type {Map<string, string>} */
  #titles = new Map();
  /** @type {Promise<DocTitle[]>|null} */
  #loading = null;
  /** @type {import('../api.js').Api} */
  #api;
  /** @type {() => Row[]} */
  #rows;
  /** @type {() => void} */
  #redraw;

  /**
   * @param {import('../api.js').Api} api
   * @param {() => Row[]} rows the rows shown (is any link worth a title?)
   * @param {() => void} redraw links were drawn before their titles came (rows, breadcrumbs, backlinks)
   */
  constructor(api, rows, redraw) {
    this.#api = api;
    this.#rows = rows;
    this.#redraw = redraw;
  }

  /** Whether any bullet links to a document (their titles are worth fetching). */
  linked() {
    return this.#rows().some((r) => r.content.includes('[[doc_'));
  }

  /** @param {boolean} [fresh] ask the server again @returns {Promise<DocTitle[]>} */
  load(fresh = false) {
    if (fresh) this.#loading = null;
    // quiet401: an ended session is the editor's to say ("Signed out"), not a jump to /login
    this.#loading ??= this.#api.get('/docs', { quiet401: true }).then((r) => {
      const list = /** @type {DocTitle[]} */ ((r?.documents ?? []).map((/** @type {any} */ d) => ({ docId: d.docId, title: d.title ?? '' })));
      for (const d of list) this.#titles.set(d.docId, d.title);
      setLinkTitles((id) => this.#titles.get(id) ?? null);
      // links may be drawn outside the rows too (breadcrumbs, "Linked from")
      this.#redraw();
      return list;
    }).catch((e) => {
      this.#loading = null;
      throw e;
    });
    return this.#loading;
  }
}
