// Home: my documents and those shared with me, grouped by folder; create, rename, move,
// delete, share; full-text search and tags. Offline it lists documents opened on this device.

import { ApiError, describeError } from '../api.js';
import { navigate } from '../router.js';
import { recentDocs, forgetDoc, updateRecent } from '../recent.js';
import { h, replaceChildren } from '../ui/dom.js';
import { icon } from '../ui/icons.js';
import { menuButton } from '../ui/menu.js';
import { formDialog } from '../ui/dialog.js';
import { toast } from '../ui/toast.js';
import { openFolderShareDialog } from './share-dialog.js';
import { deleteFolder, moveFolder, renameFolder } from './folder-actions.js';
import { chooseIcon, createDocument, deleteDocument, importDocument, moveDocument, renameDocument } from './doc-actions.js';
import { rememberFolder, knownFolders } from './local-names.js';
import { DOC_PAGE, HomeLists } from './home-state.js';
import { flattenFolders, roleLabel, viaLabel, relativeTime, displayTitle, docHref } from './home-model.js';
import { HomeSearch } from './home-search.js';
import { emptyState, errorBox } from '../ui/states.js';

/** @typedef {import('./home-model.js').DocSummary} DocSummary */
/** @typedef {import('./home-model.js').FolderInfo} FolderInfo */
/** @typedef {import('./home-model.js').FolderNode} FolderNode */

/**
 * Titles of documents listed on the home page, so the shell can label a document it opens
 * (offline list) before the editor reports the title itself.
 * @type {Map<string, {title: string, icon: string|null}>}
 */
export const pendingTitles = new Map();

/**
 * @param {HTMLElement} root
 * @param {{api: import('../api.js').Api, me: import('../session.js').Me, offline: boolean,
 *   openShareDialog: (docId: string, opts?: {title?: string}) => void}} ctx
 */
export function renderHome(root, ctx) {
  const { api, me } = ctx;
  let destroyed = false;
  /** The documents, folders, selection, folding and paging (home-state.js). */
  const lists = new HomeLists();
  /** @type {Map<string, number>} open conflict copies per document */
  const conflictCounts = new Map();

  // ---- skeleton ----
  const search = h('input', {
    id: 'search', type: 'search', class: 'input search-input', placeholder: 'Search all bullets…',
    'aria-label': 'Search all documents', autocomplete: 'off', spellcheck: 'false', enterkeyhint: 'search',
  });
  const searchForm = h('form', { role: 'search', class: 'search', onsubmit: (/** @type {Event} */ ev) => { ev.preventDefault(); void finder.run(true); } },
    icon('search', { size: 16, class: 'search-icon' }), search, h('kbd', { class: 'search-kbd', 'aria-hidden': 'true' }, '/'));
  const newDoc = h('button', { type: 'button', id: 'new-doc', class: 'btn btn-primary' }, icon('plus', { size: 16 }), h('span', null, 'New document'));
  const newFolder = h('button', { type: 'button', id: 'new-folder', class: 'btn' }, icon('folder', { size: 16 }), h('span', null, 'New folder'));
  const trashBtn = h('button', { type: 'button', id: 'open-trash', class: 'btn', title: 'Deleted documents' }, icon('trash', { size: 16 }), h('span', null, 'Trash'));
  const importDoc = h('button', { type: 'button', id: 'import-doc', class: 'btn', title: 'A new document from a Markdown, OPML or text file (Workflowy, Dynalist, Logseq exports)' }, h('span', null, 'Import…'));
  const target = h('p', { class: 'create-target', id: 'create-target', 'aria-live': 'polite' });
  const main = h('div', { class: 'home-main', id: 'home-main' });
  const tagsBox = h('div', { class: 'tags-box', id: 'tags' });
  const recentBox = h('section', { class: 'aside-section', id: 'recent', 'aria-labelledby': 'sec-recent', hidden: true });
  const aside = h('aside', { class: 'home-aside', 'aria-label': 'Recent and tags' },
    recentBox,
    h('section', { class: 'aside-section', 'aria-labelledby': 'sec-tags' },
      h('h2', { class: 'section-title', id: 'sec-tags' }, icon('hash', { size: 16 }), 'Tags'), tagsBox));

  replaceChildren(root, h('section', { class: 'page home' },
    h('div', { class: 'home-head' },
      h('h1', { class: 'page-title' }, 'Documents'),
      h('div', { class: 'toolbar' }, searchForm, h('div', { class: 'toolbar-buttons' }, trashBtn, importDoc, newFolder, newDoc))),
    target,
    h('div', { class: 'home-grid' }, main, aside)));

  newDoc.addEventListener('click', () => createDoc());
  trashBtn.addEventListener('click', async () => {
    const { openTrash } = await import('../history/trash.js');
    openTrash({ api, onRestored: () => void load() });
  });
  newFolder.addEventListener('click', () => createFolder(lists.selected));
  importDoc.addEventListener('click', () => pickImport());
  /** Search and tags, in place of the list (home-search.js). */
  const finder = new HomeSearch({
    api, input: search, main, tagsBox, destroyed: () => destroyed,
    onViewChange: () => syncUrl(), showList: () => renderList(),
  });
  search.addEventListener('input', () => finder.typed());
  search.addEventListener('keydown', (ev) => {
    if (ev.key === 'Escape' && search.value) {
      ev.preventDefault();
      search.value = '';
      finder.close();
    }
  });

  // "/" focuses the search box (as in most web apps), unless typing somewhere already.
  /** @param {KeyboardEvent} ev */
  const onKey = (ev) => {
    if (ev.key !== '/' || ev.ctrlKey || ev.metaKey || ev.altKey || search.disabled) return;
    const t = ev.target;
    if (t instanceof HTMLElement && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    if (document.querySelector('dialog[open]')) return;
    ev.preventDefault();
    search.focus();
    search.select();
  };
  document.addEventListener('keydown', onKey);
  // Back on the tab: refresh the list quietly (new shares, titles changed elsewhere).
  const onVisible = () => {
    if (document.visibilityState === 'visible' && !ctx.offline && !finder.view && !document.querySelector('dialog[open]')) load();
  };
  document.addEventListener('visibilitychange', onVisible);
  search.setAttribute('aria-keyshortcuts', '/');

  if (ctx.offline) renderOffline();
  else {
    load();
    // /?q=words or /?tag=name (back from a result, or a #tag link in the editor).
    const params = new URLSearchParams(location.search);
    const q = params.get('q');
    const tag = params.get('tag');
    if (tag) void finder.openTag(tag.replace(/^#/, ''));
    else if (q) {
      search.value = q;
      void finder.run(true);
    }
  }

  /** Keep the search or tag in the address (replaceState), so Back from a result returns here. */
  function syncUrl() {
    const url = new URL(location.href);
    url.search = '';
    const view = finder.view;
    if (view?.kind === 'search') url.searchParams.set('q', view.q);
    if (view?.kind === 'tag') url.searchParams.set('tag', view.tag);
    if (url.href !== location.href) history.replaceState(history.state, '', url);
  }

  // ---- loading ----
  async function load() {
    if (!lists.docs.length) replaceChildren(main, h('p', { class: 'muted loading', 'aria-busy': 'true' }, 'Loading documents…'));
    try {
      const [list, fl] = await Promise.all([api.get('/docs'), loadFolders()]);
      if (destroyed) return;
      void loadConflicts();
      lists.setAll(list.documents ?? [], fl);
      for (const d of lists.docs) {
        pendingTitles.set(d.docId, { title: d.title, icon: d.icon });
        rememberTitle(d);
      }
      renderList();
    } catch (e) {
      if (destroyed) return;
      // Unreachable (or a proxy's 502/503/504): what this device has is still useful.
      if (e instanceof ApiError && (e.offline || [502, 503, 504].includes(e.status))) renderOffline();
      else replaceChildren(main, errorBox(describeError(e), load));
    }
    loadTags();
  }

  /** Open conflict copies per document, shown beside each document that has any. */
  async function loadConflicts() {
    try {
      const r = await api.get('/conflicts', { quiet401: true });
      conflictCounts.clear();
      for (const c of r.conflicts ?? []) conflictCounts.set(c.docId, (conflictCounts.get(c.docId) ?? 0) + 1);
      if (!destroyed && conflictCounts.size) renderList();
    } catch {
      // offline, or an older server: no counts
    }
  }

  /** Folders: GET /folders when the server has it; otherwise the ones created on this device. */
  async function loadFolders() {
    try {
      const r = await api.get('/folders');
      const list = Array.isArray(r) ? r : r?.folders;
      if (Array.isArray(list)) return /** @type {FolderInfo[]} */ (list);
    } catch (e) {
      if (!(e instanceof ApiError) || (e.status !== 404 && e.status !== 405)) throw e;
    }
    return knownFolders();
  }

  /** @param {DocSummary} d */
  function rememberTitle(d) {
    // Keep titles of recently opened documents fresh for the offline list.
    updateRecent({ docId: d.docId, title: d.title, icon: d.icon });
  }

  async function loadTags() {
    try {
      const r = await api.get('/tags');
      if (destroyed) return;
      finder.renderTags(r.tags ?? []);
    } catch (e) {
      if (destroyed) return;
      replaceChildren(tagsBox, h('p', { class: 'muted small' }, e instanceof ApiError && e.offline ? 'Tags need a connection.' : describeError(e)));
    }
  }

  /** The last few documents opened on this device that are still in the list. */
  function renderRecent() {
    const byId = new Map(lists.docs.map((d) => [d.docId, d]));
    const recent = recentDocs().filter((r) => byId.has(r.docId)).slice(0, 5);
    recentBox.hidden = recent.length === 0;
    replaceChildren(recentBox, h('h2', { class: 'section-title', id: 'sec-recent' }, icon('clock', { size: 16 }), 'Recently opened'),
      h('ul', { class: 'recent-list', role: 'list' }, recent.map((r) => {
        const d = /** @type {DocSummary} */ (byId.get(r.docId));
        return h('li', null, h('a', { href: docHref(d.docId), class: 'recent-link', dataset: { recentDoc: d.docId } },
          h('span', { class: 'recent-icon', 'aria-hidden': 'true' }, d.icon ? d.icon : icon('doc', { size: 15 })),
          h('span', { class: `recent-title${d.title.trim() ? '' : ' is-untitled'}` }, displayTitle(d.title))));
      })));
  }

  // ---- the document tree ----
  function renderList() {
    renderRecent();
    if (finder.view) return;
    const restore = focusSelector(main);
    const tree = lists.tree;
    updateTarget();
    if (!lists.docs.length && !tree.roots.length) {
      replaceChildren(main, emptyState(icon('doc', { size: 28 }), 'No documents yet',
        'Create your first outline with “New document”, or ask a teammate to share one with you.',
        h('button', { type: 'button', class: 'btn btn-primary', onclick: () => createDoc() }, icon('plus', { size: 16 }), 'New document')));
      return;
    }
    const mine = tree.loose.filter((d) => d.role === 'owner');
    const shared = tree.loose.filter((d) => d.role !== 'owner');
    /** @type {Node[]} */
    const parts = [];
    if (tree.roots.length) {
      parts.push(h('section', { class: 'doc-section', 'aria-labelledby': 'sec-folders' },
        h('h2', { class: 'section-title', id: 'sec-folders' }, 'Folders'),
        h('ul', { class: 'doc-tree', role: 'list' }, tree.roots.map((n) => folderItem(n)))));
    }
    if (mine.length) {
      parts.push(h('section', { class: 'doc-section', 'aria-labelledby': 'sec-mine' },
        h('h2', { class: 'section-title', id: 'sec-mine' }, tree.roots.length ? 'My documents, not in a folder' : 'My documents'),
        h('ul', { class: 'doc-tree', role: 'list' }, paged('mine', mine))));
    }
    if (shared.length) {
      parts.push(h('section', { class: 'doc-section', 'aria-labelledby': 'sec-shared' },
        h('h2', { class: 'section-title', id: 'sec-shared' }, 'Shared with me'),
        h('ul', { class: 'doc-tree', role: 'list' }, paged('shared', shared))));
    }
    replaceChildren(main, ...parts);
    if (restore) /** @type {HTMLElement|null} */ (main.querySelector(restore))?.focus();
  }

  /** @param {FolderNode} node @returns {HTMLLIElement} */
  function folderItem(node) {
    const f = node.folder;
    const isCollapsed = lists.isCollapsed(f.folderId);
    const isSelected = lists.selected === f.folderId;
    const groupId = `folder-group-${f.folderId}`;
    const toggle = h('button', {
      type: 'button', class: 'icon-btn folder-toggle', 'aria-expanded': String(!isCollapsed), 'aria-controls': groupId,
      'aria-label': `${isCollapsed ? 'Expand' : 'Collapse'} folder ${f.name}`,
    }, icon('chevron', { size: 14 }));
    toggle.addEventListener('click', () => {
      lists.toggleFolder(f.folderId);
      renderList();
    });
    const select = h('button', {
      type: 'button', class: 'folder-name', 'aria-pressed': String(isSelected),
      title: isSelected ? 'Selected: new documents and folders go here' : 'Select this folder for new documents',
    }, icon('folder', { size: 16 }), h('span', { class: `folder-label${f.known === false ? ' is-unnamed' : ''}` }, f.name), h('span', { class: 'count' }, String(node.total), h('span', { class: 'sr-only' }, node.total === 1 ? ' document' : ' documents')));
    select.addEventListener('click', () => {
      lists.select(lists.selected === f.folderId ? null : f.folderId);
      renderList();
    });
    const menu = menuButton({
      label: `Actions for folder ${f.name}`,
      items: [
        { label: 'New document here', icon: 'plus', onSelect: () => createDoc(f.folderId) },
        { label: 'New folder inside', icon: 'folder', onSelect: () => createFolder(f.folderId) },
        ...(f.ownerId == null || f.ownerId === me.id
          ? [
            { label: 'Share folder…', icon: /** @type {const} */ ('share'), onSelect: () => openFolderShareDialog(f.folderId, f.name) },
            { label: 'Rename folder…', icon: /** @type {const} */ ('pencil'), onSelect: () => folderAction('rename', f) },
            { label: 'Move folder…', icon: /** @type {const} */ ('move'), onSelect: () => folderAction('move', f) },
            { label: 'Delete folder…', icon: /** @type {const} */ ('trash'), danger: true, onSelect: () => folderAction('delete', f) },
          ]
          : []),
      ],
    });
    const empty = !node.children.length && !node.docs.length;
    return h('li', { class: `folder${isSelected ? ' is-selected' : ''}`, dataset: { folderId: f.folderId } },
      h('div', { class: 'folder-row' }, toggle, select, menu),
      h('ul', { id: groupId, class: 'doc-tree nested', role: 'list', hidden: isCollapsed },
        node.children.map((c) => folderItem(c)),
        paged(`folder:${f.folderId}`, node.docs),
        empty ? h('li', { class: 'muted small empty-folder' }, 'Empty folder — use its menu to add a document.') : null));
  }

  /**
   * A long list is shown a page at a time (newest first as listed), with "Show N more" at
   * its end: 300 documents are not one endless column.
   * @param {string} key which list (its page count is kept while the page lives)
   * @param {DocSummary[]} list
   * @returns {HTMLLIElement[]}
   */
  function paged(key, list) {
    const { items: page, rest, limit } = lists.page(key, list);
    const items = page.map((d) => docItem(d));
    if (rest > 0) {
      const more = h('button', { type: 'button', class: 'btn btn-small show-more', dataset: { list: key } },
        `Show ${Math.min(rest, DOC_PAGE)} more (${rest} not shown)`);
      more.addEventListener('click', () => {
        lists.showMore(key);
        renderList();
        /** @type {HTMLElement|null} */ (main.querySelectorAll('.doc-tree a.doc-link')[limit] ?? null)?.focus();
      });
      items.push(/** @type {HTMLLIElement} */ (h('li', { class: 'show-more-row' }, more)));
    }
    return items;
  }

  /** @param {DocSummary} d @returns {HTMLLIElement} */
  function docItem(d) {
    const title = displayTitle(d.title);
    const link = h('a', { href: docHref(d.docId), class: 'doc-link', dataset: { docId: d.docId } },
      h('span', { class: 'doc-icon', 'aria-hidden': 'true' }, d.icon ? d.icon : icon('doc', { size: 18 })),
      h('span', { class: 'doc-text' },
        h('span', { class: `doc-title${d.title.trim() ? '' : ' is-untitled'}` }, title),
        h('span', { class: 'doc-meta' },
          h('span', { class: `badge badge-${d.role}` }, roleLabel(d.role)),
          d.via !== 'owner' ? h('span', { class: 'via' }, viaLabel(d.via)) : null,
          conflictCounts.get(d.docId) ? h('span', { class: 'conflict-count', title: 'Open conflicts to review' }, `${conflictCounts.get(d.docId)} ${conflictCounts.get(d.docId) === 1 ? 'conflict' : 'conflicts'}`) : null,
          d.updatedAt ? h('span', { class: 'updated' }, h('time', { datetime: new Date(d.updatedAt).toISOString() }, relativeTime(d.updatedAt))) : null)));
    /** @type {import('../ui/menu.js').MenuItem[]} */
    const items = [];
    if (d.role !== 'viewer') {
      items.push({ label: 'Rename…', icon: 'pencil', className: 'act-rename', onSelect: () => renameDoc(d) });
      items.push({ label: d.icon ? 'Change icon…' : 'Add icon…', icon: 'smile', className: 'act-icon', onSelect: () => setIcon(d) });
    }
    if (d.role === 'owner') {
      items.push({ label: 'Share…', icon: 'share', className: 'act-share', onSelect: () => ctx.openShareDialog(d.docId, { title: displayTitle(d.title) }) });
      items.push({ label: 'Move to folder…', icon: 'move', className: 'act-move', onSelect: () => moveDoc(d) });
      items.push({ label: 'Delete…', icon: 'trash', danger: true, className: 'act-delete', onSelect: () => deleteDoc(d) });
    }
    return h('li', { class: 'doc' }, h('div', { class: 'doc-row' }, link, items.length ? menuButton({ label: `Actions for ${title}`, items }) : null));
  }

  function updateTarget() {
    const f = lists.selected ? lists.tree.byId.get(lists.selected)?.folder : null;
    if (!f) {
      lists.select(null);
      replaceChildren(target);
      target.hidden = true;
      return;
    }
    target.hidden = false;
    replaceChildren(target, 'New documents and folders go into ', h('strong', null, f.name), ' ',
      h('button', { type: 'button', class: 'link-btn', onclick: () => { lists.select(null); renderList(); newDoc.focus(); } }, 'Clear'));
  }

  // ---- actions (doc-actions.js, folder-actions.js ask and call the API; here the lists follow) ----
  /** @param {string|null} [folderId] */
  async function createDoc(folderId) {
    newDoc.disabled = true;
    const id = await createDocument(api, typeof folderId === 'string' ? folderId : lists.selected);
    newDoc.disabled = false;
    if (id) navigate(docHref(id));
  }

  /** "Import…": a new document (in the selected folder) from an outline file. */
  async function pickImport() {
    const id = await importDocument(api, lists.selected);
    if (id) navigate(docHref(id));
  }

  /** @param {string|null} parentId */
  async function createFolder(parentId) {
    const options = [{ value: '', label: 'Top level' }, ...flattenFolders(lists.tree.roots)
      .filter((f) => { const info = lists.tree.byId.get(f.folderId)?.folder; return !info?.ownerId || info.ownerId === me.id; })
      .map((f) => ({ value: f.folderId, label: f.path }))];
    const created = await formDialog({
      title: 'New folder',
      fields: [
        { name: 'name', label: 'Name', placeholder: 'e.g. Projects', maxLength: 200, required: true },
        { name: 'parentId', label: 'Inside', value: parentId ?? '', options },
      ],
      submitLabel: 'Create folder',
      onSubmit: async (v) => {
        const body = v.parentId ? { name: v.name.trim(), parentId: v.parentId } : { name: v.name.trim() };
        return /** @type {FolderInfo} */ (await api.post('/folders', body));
      },
    });
    if (!created) return;
    rememberFolder(created);
    lists.addFolder(created);
    lists.expand(created.parentId);
    lists.select(created.folderId);
    renderList();
    toast(`Folder “${created.name}” created.`);
  }

  /**
   * Rename, move or delete a folder (its owner), then show the lists as the server has them.
   * @param {'rename'|'move'|'delete'} what @param {FolderInfo} f
   */
  async function folderAction(what, f) {
    try {
      if (what === 'rename') {
        const r = await renameFolder(api, f);
        if (!r) return;
        rememberFolder(r);
        toast(`Folder renamed to “${r.name}”.`);
      } else if (what === 'move') {
        const r = await moveFolder(api, f, lists.tree.roots, me.id);
        if (!r) return;
        lists.expand(r.parentId);
        toast(`Folder “${f.name}” moved.`);
      } else {
        const parent = f.parentId ? (lists.tree.byId.get(f.parentId)?.folder.name ?? null) : null;
        if (!(await deleteFolder(api, f, parent))) return;
        if (lists.selected === f.folderId) lists.select(null);
        toast(`Folder “${f.name}” deleted; what was in it moved to ${parent ? `“${parent}”` : 'the top level'}.`);
      }
    } catch (e) {
      toast(`The folder could not be changed: ${describeError(e)}`, { kind: 'error' });
    }
    await load();
  }

  /** @param {DocSummary} d */
  async function renameDoc(d) {
    const title = await renameDocument(api, d);
    if (title === null) return;
    d.title = title;
    rememberTitle(d);
    renderList();
    toast('Document renamed.');
  }

  /** @param {DocSummary} d */
  async function setIcon(d) {
    const icon = await chooseIcon(api, d);
    if (!icon) return;
    d.icon = icon.icon;
    rememberTitle(d);
    renderList();
  }

  /** @param {DocSummary} d */
  async function moveDoc(d) {
    const moved = await moveDocument(api, d, flattenFolders(lists.tree.roots).map((f) => ({ value: f.folderId, label: f.path })));
    if (!moved) return;
    const name = moved.folderId ? lists.tree.byId.get(moved.folderId)?.folder.name : null;
    lists.expand(moved.folderId);
    await load();
    toast(name ? `Moved to “${name}”.` : 'Moved out of its folder.');
  }

  /** @param {DocSummary} d */
  async function deleteDoc(d) {
    const links = [...main.querySelectorAll('a[data-doc-id]')];
    const at = links.findIndex((a) => a instanceof HTMLElement && a.dataset.docId === d.docId);
    if (!(await deleteDocument(api, d))) return;
    forgetDoc(d.docId);
    lists.removeDoc(d.docId);
    renderList();
    // Focus the document that took its place (keyboard users keep their position).
    const after = [...main.querySelectorAll('a[data-doc-id]')];
    /** @type {HTMLElement|undefined} */ (after[Math.min(Math.max(at, 0), after.length - 1)] ?? newDoc)?.focus();
    toast('Moved to the Trash.');
  }

  // ---- offline ----
  function renderOffline() {
    const recent = recentDocs();
    replaceChildren(tagsBox, h('p', { class: 'muted small' }, 'Tags need a connection.'));
    newDoc.disabled = true;
    newFolder.disabled = true;
    search.disabled = true;
    replaceChildren(main,
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

  return {
    destroy() {
      destroyed = true;
      finder.destroy();
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('visibilitychange', onVisible);
    },
  };
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
