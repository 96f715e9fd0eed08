// The editor's panels that the first bullets do not need, loaded on first use: find, the
// document's history and versions, a bullet's history, the conflict review, the backlinks,
// the keys help. Owns the find bar and the backlinks panel once made; after `close` nothing
// more is opened (a module still loading finds the page gone and stops).

import { newOpId } from '../../engine/ids.js';

/** @typedef {import('../../engine/types.js').Row} Row */
/** @typedef {import('../../engine/engine.js').DocSyncEngine} DocSyncEngine */

/**
 * @typedef {object} PanelsDeps
 * @property {string} docId
 * @property {string} clientId
 * @property {import('../api.js').Api} api
 * @property {DocSyncEngine} engine
 * @property {import('./chrome.js').EditorChrome} chrome
 * @property {import('./find-highlights.js').FindHighlights} hits
 * @property {() => boolean} canEdit
 * @property {() => boolean} roleKnown the server said the role (history writes need it)
 * @property {() => boolean} bulletGuest the user sees only bullets shared with them (versions are the document's: they may not name one)
 * @property {() => string|null} caretBullet the focused bullet, else the last one focused
 * @property {() => void} refocus the caret back into the outline (find closed)
 * @property {(id: string) => void} reveal
 * @property {() => void} linkTitles the titles of linked documents are wanted (backlinks that link on)
 */

export class Panels {
  /** @type {PanelsDeps} */
  #o;
  #closed = false;
  /** @type {import('./find-bar.js').FindBar|null} */
  #find = null;
  /** @type {import('./backlinks.js').BacklinksPanel|null} */
  #backlinks = null;

  /** @param {PanelsDeps} o */
  constructor(o) {
    this.#o = o;
  }

  #rows() {
    return /** @type {Row[]} */ (this.#o.engine.state.rows);
  }

  /** What find looks for while its bar is open ('' none). */
  get findQuery() {
    return this.#find?.query ?? '';
  }

  async openFind() {
    if (!this.#find) {
      const { FindBar } = await import('./find-bar.js');
      if (this.#closed) return;
      const hits = this.#o.hits;
      this.#find ??= new FindBar(document, {
        rows: () => this.#rows(),
        show: (id, q) => hits.show(id, q),
        clear: () => hits.clear(),
        onClose: () => this.#o.refocus(),
      });
      this.#o.chrome.main.insertBefore(this.#find.el, this.#o.chrome.crumbs);
    }
    this.#find.show();
  }

  openKeysHelp() {
    return import('./keys-help.js').then((m) => m.openKeysHelp());
  }

  async openHistory() {
    const { openHistoryPanel } = await import('../history/history-panel.js');
    if (this.#closed) return;
    const o = this.#o;
    openHistoryPanel({
      api: o.api, docId: o.docId, clientId: o.clientId, canEdit: o.canEdit() && o.roleKnown(),
      bulletGuest: o.bulletGuest(),
      onRestored: (summary) => {
        o.chrome.showNotice(summary);
        // The restore's entries are in the log now: fetch them at once rather than at the
        // next wake-up, which a document nobody else has open gets only every 30 s.
        void o.engine.syncNow();
      },
    });
  }

  /** The history of the bullet with the caret (else the first one shown). */
  async openBulletHistory() {
    const o = this.#o;
    const id = o.caretBullet() ?? this.#rows()[0]?.id;
    if (!id) {
      o.chrome.showNotice('Put the caret into a bullet to see its history.');
      return;
    }
    const { openBulletHistory } = await import('../history/bullet-history.js');
    if (this.#closed) return;
    const row = () => this.#rows().find((r) => r.id === id) ?? null;
    openBulletHistory({
      api: o.api, docId: o.docId, blockId: id, canEdit: o.canEdit() && o.roleKnown(),
      current: () => row()?.content ?? null,
      restoreText: (text) => {
        /** @type {import('../../engine/types.js').Op} */
        const op = { opId: newOpId(), kind: 'set_content', blockId: id, content: text, baseVersion: row()?.version ?? 0 };
        return o.engine.submitOps([op], { step: 'restore' });
      },
    });
  }

  async openConflicts() {
    const { openConflictReview } = await import('../history/conflict-review.js');
    if (this.#closed) return;
    const { engine } = this.#o;
    openConflictReview({
      rows: () => this.#rows(),
      title: () => engine.state.title,
      canEdit: this.#o.canEdit(),
      subscribe: (fn) => engine.subscribe(() => fn()),
      accept: (id) => engine.acceptConflict(id),
      discard: (id) => engine.discardConflict(id),
      keep: (id) => engine.keepConflict(id),
      reveal: (id) => this.#o.reveal(id),
    });
  }

  /** The documents linking here, below the outline (made on first use). */
  async refreshBacklinks() {
    if (!this.#backlinks) {
      const { BacklinksPanel } = await import('./backlinks.js');
      if (this.#closed) return;
      const { api, docId, chrome } = this.#o;
      this.#backlinks ??= new BacklinksPanel(document, async () => {
        const r = await api.get(`/docs/${encodeURIComponent(docId)}/backlinks`, { quiet401: true });
        /** @type {import('./backlinks.js').Backlink[]} */
        const links = r?.backlinks ?? [];
        if (links.some((l) => l.content.includes('[[doc_'))) this.#o.linkTitles();
        return links;
      });
      chrome.main.insertBefore(this.#backlinks.el, chrome.dropLine);
    }
    await this.#backlinks.refresh();
  }

  /** Titles of linked documents came: the previews show them. */
  redrawBacklinks() {
    this.#backlinks?.redraw();
  }

  close() {
    this.#closed = true;
    this.#find?.close();
  }
}
