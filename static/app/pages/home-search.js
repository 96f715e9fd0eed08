// The home page's search and tags: what the main column shows instead of the document list
// (a search's hits, or a tag's bullets), the tag list, and which tag is open. Owns that
// view, its debounce and the order of its answers: an answer older than the newest
// question is dropped, so results never jump back to an earlier query.

import { describeError, seg } from '../api.js';
import { h, replaceChildren } from '../ui/dom.js';
import { icon } from '../ui/icons.js';
import { emptyState, errorBox, highlight } from '../ui/states.js';
import { displayTitle, snippet, docHref } from './home-model.js';

/** @typedef {{docId: string, docTitle: string, blockId: string, content: string}} BlockHit */
/** @typedef {{kind: 'search', q: string}|{kind: 'tag', tag: string}} SearchView */

export class HomeSearch {
  /**
   * @param {{api: import('../api.js').Api, input: HTMLInputElement, main: HTMLElement,
   *   tagsBox: HTMLElement, destroyed: () => boolean, onViewChange: () => void,
   *   showList: () => void}} o
   */
  constructor(o) {
    this.o = o;
    /** What the main column shows instead of the list; null: the list. @type {SearchView|null} */
    this.view = null;
    this.timer = 0;
    this.seq = 0;
  }

  /** The input changed: search after a pause in typing. */
  typed() {
    clearTimeout(this.timer);
    this.timer = window.setTimeout(() => void this.run(false), 250);
  }

  /** Searches for the input's words (`immediate`: also when they did not change). @param {boolean} immediate */
  async run(immediate) {
    clearTimeout(this.timer);
    const q = this.o.input.value.trim();
    if (!q) {
      this.close();
      return;
    }
    const v = this.view;
    if (!immediate && v?.kind === 'search' && v.q === q) return;
    this.setView({ kind: 'search', q });
    const seq = ++this.seq;
    this.showResults(`Results for “${q}”`, null, q);
    try {
      const r = await this.o.api.get(`/search?q=${seg(q)}`);
      if (this.o.destroyed() || seq !== this.seq) return;
      this.showResults(`Results for “${q}”`, r.results ?? [], q);
    } catch (e) {
      if (this.o.destroyed() || seq !== this.seq) return;
      replaceChildren(this.o.main, this.header(`Results for “${q}”`), errorBox(describeError(e), () => void this.run(true)));
    }
  }

  /** Shows the bullets carrying `tag`. @param {string} tag */
  async openTag(tag) {
    this.setView({ kind: 'tag', tag });
    this.o.input.value = '';
    const seq = ++this.seq;
    this.showResults(`#${tag}`, null, '');
    this.markTag(tag);
    try {
      const r = await this.o.api.get(`/tags/${seg(tag)}`);
      if (this.o.destroyed() || seq !== this.seq) return;
      this.showResults(`#${r.tag ?? tag}`, r.blocks ?? [], `#${r.tag ?? tag}`);
    } catch (e) {
      if (this.o.destroyed() || seq !== this.seq) return;
      replaceChildren(this.o.main, this.header(`#${tag}`), errorBox(describeError(e), () => void this.openTag(tag)));
    }
  }

  /** Back to the document list. */
  close() {
    this.setView(null);
    this.seq++;
    this.markTag(null);
    this.o.showList();
  }

  /** @param {SearchView|null} v */
  setView(v) {
    this.view = v;
    this.o.onViewChange();
  }

  /** @param {string} title */
  header(title) {
    const { input } = this.o;
    return h('div', { class: 'results-head' },
      h('h2', { class: 'section-title', id: 'results-title' }, title),
      h('button', { type: 'button', class: 'link-btn', id: 'close-results', onclick: () => { input.value = ''; this.close(); input.focus(); } }, '← All documents'));
  }

  /**
   * @param {string} title
   * @param {BlockHit[]|null} hits null while loading
   * @param {string} q words to highlight
   */
  showResults(title, hits, q) {
    const { main } = this.o;
    if (!hits) {
      replaceChildren(main, this.header(title), h('p', { class: 'muted loading', 'aria-busy': 'true' }, 'Searching…'));
      return;
    }
    if (!hits.length) {
      replaceChildren(main, this.header(title), emptyState(icon('search', { size: 28 }), 'Nothing found',
        this.view?.kind === 'tag' ? 'No bullet you can read carries this tag any more.' : 'No bullet matches these words. Try fewer or different words.'));
      return;
    }
    replaceChildren(main, this.header(title),
      h('p', { class: 'muted small', role: 'status' }, `${hits.length}${hits.length >= 100 ? '+' : ''} bullet${hits.length === 1 ? '' : 's'}`),
      h('ul', { class: 'results', role: 'list', 'aria-labelledby': 'results-title' }, hits.map((hit) =>
        h('li', null, h('a', { href: docHref(hit.docId, hit.blockId), class: 'result-link', dataset: { resultDoc: hit.docId, blockId: hit.blockId } },
          h('span', { class: 'result-text' }, highlight(snippet(hit.content, q), q)),
          h('span', { class: 'result-doc' }, icon('doc', { size: 14 }), displayTitle(hit.docTitle)))))));
  }

  /** The tag list (a tag's button opens it, or closes it when open). @param {{tag: string, blocks: number, documents: number}[]} tags */
  renderTags(tags) {
    const { tagsBox } = this.o;
    if (!tags.length) {
      replaceChildren(tagsBox, h('p', { class: 'muted small' }, 'No tags yet. Type #something in any bullet to tag it.'));
      return;
    }
    replaceChildren(tagsBox, h('ul', { class: 'tag-list', role: 'list' }, tags.map((t) =>
      h('li', null, h('button', {
        type: 'button', class: 'tag', dataset: { tag: t.tag }, 'aria-pressed': 'false', title: `#${t.tag}`,
        'aria-label': `#${t.tag}: ${t.blocks} bullet${t.blocks === 1 ? '' : 's'} in ${t.documents} document${t.documents === 1 ? '' : 's'}`,
        onclick: () => {
          const v = this.view;
          if (v?.kind === 'tag' && v.tag === t.tag) this.close();
          else void this.openTag(t.tag);
        },
      }, h('span', null, `#${t.tag}`), h('span', { class: 'count' }, String(t.blocks)))))));
    const v = this.view;
    if (v?.kind === 'tag') this.markTag(v.tag);
  }

  /** @param {string|null} tag */
  markTag(tag) {
    for (const b of this.o.tagsBox.querySelectorAll('button.tag')) {
      b.setAttribute('aria-pressed', String(b instanceof HTMLElement && b.dataset.tag === tag));
    }
  }

  destroy() {
    clearTimeout(this.timer);
  }
}
