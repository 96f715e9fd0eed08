// The home page's lists drawn: folders (folded, selected, with their menus), my documents and
// those shared with me, a page at a time, the recently opened ones, and the offline list of
// what this device has. Owns the open-conflict counts shown beside documents; the lists'
// state is HomeLists' (home-state.js); what an action does is home.js's. Redrawing keeps
// the focused control focused.

import { recentDocs } from '../recent.js';
import { h, replaceChildren } from '../ui/dom.js';
import { icon } from '../ui/icons.js';
import { menuButton } from '../ui/menu.js';
import { DOC_PAGE } from './home-state.js';
import { roleLabel, viaLabel, relativeTime, displayTitle, docHref } from './home-model.js';
import { emptyState } from '../ui/states.js';

/** @typedef {import('./home-model.js').DocSummary} DocSummary */
/** @typedef {import('./home-model.js').FolderInfo} FolderInfo */
/** @typedef {import('./home-model.js').FolderNode} FolderNode */

/**
 * @typedef {object} TreeActions
 * @property {(folderId?: string|null) => void} createDoc
 * @property {(parentId: string|null) => void} createFolder
 * @property {(what: 'rename'|'move'|'delete', f: FolderInfo) => void} folderAction
 * @property {(f: FolderInfo) => void} shareFolder
 * @property {(d: DocSummary) => void} shareDoc
 * @property {(d: DocSummary) => void} renameDoc
 * @property {(d: DocSummary) => void} setIcon
 * @property {(d: DocSummary) => void} moveDoc
 * @property {(d: DocSummary) => void} deleteDoc
 */

/**
 * @typedef {object} TreeDeps
 * @property {import('./home-state.js').HomeLists} lists
 * @property {string} meId
 * @property {HTMLElement} main where the lists go
 * @property {HTMLElement} recentBox
 * @property {HTMLElement} target "new documents go into …"
 * @property {HTMLButtonElement} newDoc
 * @property {() => boolean} searching a search or tag is shown instead of the lists
 * @property {TreeActions} act
 */

export class HomeTree {
  /** @type {TreeDeps} */
  #o;
  /** @type {Map<string, number>} open conflict copies per document */
  #conflicts = new Map();

  /** @param {TreeDeps} o */
  constructor(o) {
    this.#o = o;
  }

  /** Open conflict copies (GET /conflicts); drawn beside their documents. @param {{docId: string}[]} list */
  setConflicts(list) {
    this.#conflicts.clear();
    for (const c of list) this.#conflicts.set(c.docId, (this.#conflicts.get(c.docId) ?? 0) + 1);
    if (this.#conflicts.size) this.render();
  }

  /** The last few documents opened on this device that are still in the list. */
  #renderRecent() {
    const byId = new Map(this.#o.lists.docs.map((d) => [d.docId, d]));
    const recent = recentDocs().filter((r) => byId.has(r.docId)).slice(0, 5);
    this.#o.recentBox.hidden = recent.length === 0;
    replaceChildren(this.#o.recentBox, h('h2', { class: 'section-title', id: 'sec-recent' }, icon('clock', { size: 16 }), 'Recently opened'),
      h('ul', { class: 'recent-list', role: 'list' }, recent.map((r) => {
        const d = /** @type {DocSummary} */ (byId.get(r.docId));
        return h('li', null, h('a', { href: docHref(d.docId), class: 'recent-link', dataset: { recentDoc: d.docId } },
          h('span', { class: 'recent-icon', 'aria-hidden': 'true' }, d.icon ? d.icon : icon('doc', { size: 15 })),
          h('span', { class: `recent-title${d.title.trim() ? '' : ' is-untitled'}` }, displayTitle(d.title))));
      })));
  }

  render() {
    this.#renderRecent();
    if (this.#o.searching()) return;
    const restore = focusSelector(this.#o.main);
    const tree = this.#o.lists.tree;
    this.#updateTarget();
    const bullets = this.#o.lists.bullets;
    if (!this.#o.lists.docs.length && !tree.roots.length && !bullets.length) {
      replaceChildren(this.#o.main, emptyState(icon('doc', { size: 28 }), 'No documents yet',
        'Create your first outline with “New document”, or ask a teammate to share one with you.',
        h('button', { type: 'button', class: 'btn btn-primary', onclick: () => this.#o.act.createDoc() }, icon('plus', { size: 16 }), 'New document')));
      return;
    }
    const mine = tree.loose.filter((d) => d.role === 'owner');
    const shared = tree.loose.filter((d) => d.role !== 'owner');
    /** @type {Node[]} */
    const parts = [];
    if (tree.roots.length) {
      parts.push(h('section', { class: 'doc-section', 'aria-labelledby': 'sec-folders' },
        h('h2', { class: 'section-title', id: 'sec-folders' }, 'Folders'),
        h('ul', { class: 'doc-tree', role: 'list' }, tree.roots.map((n) => this.#folderItem(n)))));
    }
    if (mine.length) {
      parts.push(h('section', { class: 'doc-section', 'aria-labelledby': 'sec-mine' },
        h('h2', { class: 'section-title', id: 'sec-mine' }, tree.roots.length ? 'My documents, not in a folder' : 'My documents'),
        h('ul', { class: 'doc-tree', role: 'list' }, this.#paged('mine', mine))));
    }
    if (shared.length) {
      parts.push(h('section', { class: 'doc-section', 'aria-labelledby': 'sec-shared' },
        h('h2', { class: 'section-title', id: 'sec-shared' }, 'Shared with me'),
        h('ul', { class: 'doc-tree', role: 'list' }, this.#paged('shared', shared))));
    }
    if (bullets.length) {
      parts.push(h('section', { class: 'doc-section', 'aria-labelledby': 'sec-bullets', id: 'shared-bullets' },
        h('h2', { class: 'section-title', id: 'sec-bullets' }, 'Shared with me: bullets'),
        h('ul', { class: 'doc-tree', role: 'list' }, bullets.map((b) => this.#bulletItem(b)))));
    }
    replaceChildren(this.#o.main, ...parts);
    if (restore) /** @type {HTMLElement|null} */ (this.#o.main.querySelector(restore))?.focus();
  }

  /** @param {FolderNode} node @returns {HTMLLIElement} */
  #folderItem(node) {
    const f = node.folder;
    const isCollapsed = this.#o.lists.isCollapsed(f.folderId);
    const isSelected = this.#o.lists.selected === f.folderId;
    const groupId = `folder-group-${f.folderId}`;
    const toggle = h('button', {
      type: 'button', class: 'icon-btn folder-toggle', 'aria-expanded': String(!isCollapsed), 'aria-controls': groupId,
      'aria-label': `${isCollapsed ? 'Expand' : 'Collapse'} folder ${f.name}`,
    }, icon('chevron', { size: 14 }));
    toggle.addEventListener('click', () => {
      this.#o.lists.toggleFolder(f.folderId);
      this.render();
    });
    const select = h('button', {
      type: 'button', class: 'folder-name', 'aria-pressed': String(isSelected),
      title: isSelected ? 'Selected: new documents and folders go here' : 'Select this folder for new documents',
    }, icon('folder', { size: 16 }), h('span', { class: `folder-label${f.known === false ? ' is-unnamed' : ''}` }, f.name), h('span', { class: 'count' }, String(node.total), h('span', { class: 'sr-only' }, node.total === 1 ? ' document' : ' documents')));
    select.addEventListener('click', () => {
      this.#o.lists.select(this.#o.lists.selected === f.folderId ? null : f.folderId);
      this.render();
    });
    const menu = menuButton({
      label: `Actions for folder ${f.name}`,
      items: [
        { label: 'New document here', icon: 'plus', onSelect: () => this.#o.act.createDoc(f.folderId) },
        { label: 'New folder inside', icon: 'folder', onSelect: () => this.#o.act.createFolder(f.folderId) },
        ...(f.ownerId == null || f.ownerId === this.#o.meId
          ? [
            { label: 'Share folder…', icon: /** @type {const} */ ('share'), onSelect: () => this.#o.act.shareFolder(f) },
            { label: 'Rename folder…', icon: /** @type {const} */ ('pencil'), onSelect: () => this.#o.act.folderAction('rename', f) },
            { label: 'Move folder…', icon: /** @type {const} */ ('move'), onSelect: () => this.#o.act.folderAction('move', f) },
            { label: 'Delete folder…', icon: /** @type {const} */ ('trash'), danger: true, onSelect: () => this.#o.act.folderAction('delete', f) },
          ]
          : []),
      ],
    });
    const empty = !node.children.length && !node.docs.length;
    return h('li', { class: `folder${isSelected ? ' is-selected' : ''}`, dataset: { folderId: f.folderId } },
      h('div', { class: 'folder-row' }, toggle, select, menu),
      h('ul', { id: groupId, class: 'doc-tree nested', role: 'list', hidden: isCollapsed },
        node.children.map((c) => this.#folderItem(c)),
        this.#paged(`folder:${f.folderId}`, node.docs),
        empty ? h('li', { class: 'muted small empty-folder' }, 'Empty folder — use its menu to add a document.') : null));
  }

  /**
   * A long list is shown a page at a time (newest first as listed), with "Show N more" at
   * its end: 300 documents are not one endless column.
   * @param {string} key which list (its page count is kept while the page lives)
   * @param {DocSummary[]} list
   * @returns {HTMLLIElement[]}
   */
  #paged(key, list) {
    const { items: page, rest, limit } = this.#o.lists.page(key, list);
    const items = page.map((d) => this.#docItem(d));
    if (rest > 0) {
      const more = h('button', { type: 'button', class: 'btn btn-small show-more', dataset: { list: key } },
        `Show ${Math.min(rest, DOC_PAGE)} more (${rest} not shown)`);
      more.addEventListener('click', () => {
        this.#o.lists.showMore(key);
        this.render();
        /** @type {HTMLElement|null} */ (this.#o.main.querySelectorAll('.doc-tree a.doc-link')[limit] ?? null)?.focus();
      });
      items.push(/** @type {HTMLLIElement} */ (h('li', { class: 'show-more-row' }, more)));
    }
    return items;
  }

  /** @param {DocSummary} d @returns {HTMLLIElement} */
  #docItem(d) {
    const title = displayTitle(d.title);
    const link = h('a', { href: docHref(d.docId), class: 'doc-link', dataset: { docId: d.docId } },
      h('span', { class: 'doc-icon', 'aria-hidden': 'true' }, d.icon ? d.icon : icon('doc', { size: 18 })),
      h('span', { class: 'doc-text' },
        h('span', { class: `doc-title${d.title.trim() ? '' : ' is-untitled'}` }, title),
        h('span', { class: 'doc-meta' },
          h('span', { class: `badge badge-${d.role}` }, roleLabel(d.role)),
          d.via !== 'owner' ? h('span', { class: 'via' }, viaLabel(d.via)) : null,
          this.#conflictBadge(d.docId),
          d.updatedAt ? h('span', { class: 'updated' }, h('time', { datetime: new Date(d.updatedAt).toISOString() }, relativeTime(d.updatedAt))) : null)));
    /** @type {import('../ui/menu.js').MenuItem[]} */
    const items = [];
    if (d.role !== 'viewer') {
      items.push({ label: 'Rename…', icon: 'pencil', className: 'act-rename', onSelect: () => this.#o.act.renameDoc(d) });
      items.push({ label: d.icon ? 'Change icon…' : 'Add icon…', icon: 'smile', className: 'act-icon', onSelect: () => this.#o.act.setIcon(d) });
    }
    if (d.role === 'owner') {
      items.push({ label: 'Share…', icon: 'share', className: 'act-share', onSelect: () => this.#o.act.shareDoc(d) });
      items.push({ label: 'Move to folder…', icon: 'move', className: 'act-move', onSelect: () => this.#o.act.moveDoc(d) });
      items.push({ label: 'Delete…', icon: 'trash', danger: true, className: 'act-delete', onSelect: () => this.#o.act.deleteDoc(d) });
    }
    return h('li', { class: 'doc' }, h('div', { class: 'doc-row' }, link, items.length ? menuButton({ label: `Actions for ${title}`, items }) : null));
  }

  /**
   * A bullet shared with me: opens zoomed into it, so its children are the page's top level
   * and its text the title.
   * @param {import('./home-state.js').SharedBullet} b @returns {HTMLLIElement}
   */
  #bulletItem(b) {
    const href = `/d/${encodeURIComponent(b.docId)}/b/${encodeURIComponent(b.blockId)}`;
    return /** @type {HTMLLIElement} */ (h('li', { class: 'doc' }, h('div', { class: 'doc-row' },
      h('a', { href, class: 'doc-link', dataset: { docId: b.docId, blockId: b.blockId } },
        h('span', { class: 'doc-icon', 'aria-hidden': 'true' }, icon('share', { size: 18 })),
        h('span', { class: 'doc-text' },
          h('span', { class: `doc-title${b.title.trim() ? '' : ' is-untitled'}` }, b.title.trim() || 'Untitled bullet'),
          h('span', { class: 'doc-meta' },
            h('span', { class: `badge badge-${b.role}` }, roleLabel(b.role)),
            h('span', { class: 'via' }, b.deleted ? 'deleted by its owner' : 'one bullet and what is below it'),
            this.#conflictBadge(b.docId)))))));
  }

  /** Open conflicts to review in a document (for a bullet guest: in their part of it). @param {string} docId */
  #conflictBadge(docId) {
    const n = this.#conflicts.get(docId);
    return n ? h('span', { class: 'conflict-count', title: 'Open conflicts to review' }, `${n} ${n === 1 ? 'conflict' : 'conflicts'}`) : null;
  }

  #updateTarget() {
    const f = this.#o.lists.selected ? this.#o.lists.tree.byId.get(this.#o.lists.selected)?.folder : null;
    if (!f) {
      this.#o.lists.select(null);
      replaceChildren(this.#o.target);
      this.#o.target.hidden = true;
      return;
    }
    this.#o.target.hidden = false;
    replaceChildren(this.#o.target, 'New documents and folders go into ', h('strong', null, f.name), ' ',
      h('button', { type: 'button', class: 'link-btn', onclick: () => { this.#o.lists.select(null); this.render(); this.#o.newDoc.focus(); } }, 'Clear'));
  }

  /** Offline: the documents opened on this device. */
  renderOffline() {
    const recent = recentDocs();
    replaceChildren(this.#o.main,
      h('div', { class: 'banner banner-offline', id: 'offline-banner', role: 'status' }, icon('offline', { size: 18 }),
        h('span', null, h('strong', null, 'Offline'), ' — showing documents opened on this device'),
        h('button', { type: 'button', class: 'btn btn-small', onclick: () => location.reload() }, 'Try again')),
      recent.length
        ? h('ul', { class: 'doc-tree', role: 'list' }, recent.map((r) =>
          h('li', { class: 'doc' }, h('div', { class: 'doc-row' }, h('a', { href: docHref(r.docId), class: 'doc-link', dataset: { docId: r.docId } },
            h('span', { class: 'doc-icon', 'aria-hidden': 'true' }, r.icon ? r.icon : icon('doc', { size: 18 })),
            h('span', { class: 'doc-text' },
              h('span', { class: `doc-title${r.title.trim() ? '' : ' is-untitled'}` }, displayTitle(r.title)),
              h('span', { class: 'doc-meta' }, h('span', { class: 'updated' }, `Opened ${relativeTime(r.openedAt)}`))))))))
        : emptyState(icon('offline', { size: 28 }), 'Nothing stored on this device yet',
          'Documents you open while online are kept here for offline use. Reconnect to see all your documents.'));
  }
}

/**
 * A selector that finds the focused control again after the list is re-rendered.
 * @param {HTMLElement} container
 * @returns {string|null}
 */
function focusSelector(container) {
  const a = document.activeElement;
  if (!(a instanceof HTMLElement) || !container.contains(a)) return null;
  const link = a.closest('a[data-doc-id]');
  if (link instanceof HTMLElement) return `a[data-doc-id="${CSS.escape(link.dataset.docId ?? '')}"]`;
  const folder = a.closest('[data-folder-id]');
  if (folder instanceof HTMLElement) {
    const part = ['folder-toggle', 'folder-name', 'menu-trigger'].find((c) => a.classList.contains(c));
    if (part) return `[data-folder-id="${CSS.escape(folder.dataset.folderId ?? '')}"] > .folder-row .${part}`;
  }
  return null;
}
