// Home: my documents and those shared with me, grouped by folder; create, rename, move,
// delete, share; full-text search and tags. Offline it lists documents opened on this device.

import { ApiError, describeError } from '../api.js';
import { navigate } from '../router.js';
import { forgetDoc, updateRecent } from '../recent.js';
import { h, replaceChildren } from '../ui/dom.js';
import { icon } from '../ui/icons.js';
import { formDialog } from '../ui/dialog.js';
import { toast } from '../ui/toast.js';
import { openFolderShareDialog } from './share-dialog.js';
import { deleteFolder, moveFolder, renameFolder } from './folder-actions.js';
import { chooseIcon, createDocument, deleteDocument, importDocument, moveDocument, renameDocument } from './doc-actions.js';
import { rememberFolder, knownFolders } from './local-names.js';
import { HomeLists } from './home-state.js';
import { flattenFolders, displayTitle, docHref } from './home-model.js';
import { HomeSearch } from './home-search.js';
import { HomeTree } from './home-tree.js';
import { errorBox } from '../ui/states.js';

/** @typedef {import('./home-model.js').DocSummary} DocSummary */
/** @typedef {import('./home-model.js').FolderInfo} FolderInfo */

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
  const importDoc = h('button', { type: 'button', id: 'import-doc', class: 'btn', title: 'Documents from a file, a Logseq graph, or a Workflowy or Dynalist backup' }, h('span', null, 'Import…'));
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
  importDoc.addEventListener('click', async () => {
    const { openImportDialog } = await import('./import-dialog.js');
    openImportDialog({
      api, folderId: lists.selected,
      importOneFile: () => void pickImport(),
      onImported: async (folderId) => {
        await load();
        if (folderId) {
          lists.select(folderId);
          tree.render();
        }
      },
    });
  });
  /** The lists drawn (home-tree.js); what their menus do is below. */
  const tree = new HomeTree({
    lists, meId: me.id, main, recentBox, target, newDoc: /** @type {HTMLButtonElement} */ (newDoc),
    searching: () => !!finder.view,
    act: {
      createDoc, createFolder, folderAction, renameDoc, setIcon, moveDoc, deleteDoc,
      shareFolder: (f) => openFolderShareDialog(f.folderId, f.name),
      shareDoc: (d) => ctx.openShareDialog(d.docId, { title: displayTitle(d.title) }),
    },
  });
  /** Search and tags, in place of the list (home-search.js). */
  const finder = new HomeSearch({
    api, input: search, main, tagsBox, destroyed: () => destroyed,
    onViewChange: () => syncUrl(), showList: () => tree.render(),
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
      const [list, fl, bullets] = await Promise.all([api.get('/docs'), loadFolders(), loadBullets()]);
      if (destroyed) return;
      void loadConflicts();
      lists.setAll(list.documents ?? [], fl);
      lists.setBullets(bullets);
      for (const d of lists.docs) {
        pendingTitles.set(d.docId, { title: d.title, icon: d.icon });
        rememberTitle(d);
      }
      tree.render();
    } catch (e) {
      if (destroyed) return;
      // Unreachable (or a proxy's 502/503/504): what this device has is still useful.
      if (e instanceof ApiError && (e.offline || [502, 503, 504].includes(e.status))) renderOffline();
      else replaceChildren(main, errorBox(describeError(e), load));
    }
    loadTags();
  }

  /** The bullets shared with me (none from a server without bullet shares). */
  async function loadBullets() {
    try {
      const r = await api.get('/shared/bullets', { quiet401: true });
      return r?.bullets ?? [];
    } catch {
      return [];
    }
  }

  /** Open conflict copies per document, shown beside each document that has any. */
  async function loadConflicts() {
    try {
      const r = await api.get('/conflicts', { quiet401: true });
      if (!destroyed) tree.setConflicts(r.conflicts ?? []);
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
    const id = await importDocument(api, lists.selected, lists.docs);
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
    tree.render();
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
    tree.render();
    toast('Document renamed.');
  }

  /** @param {DocSummary} d */
  async function setIcon(d) {
    const icon = await chooseIcon(api, d);
    if (!icon) return;
    d.icon = icon.icon;
    rememberTitle(d);
    tree.render();
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
    tree.render();
    // Focus the document that took its place (keyboard users keep their position).
    const after = [...main.querySelectorAll('a[data-doc-id]')];
    /** @type {HTMLElement|undefined} */ (after[Math.min(Math.max(at, 0), after.length - 1)] ?? newDoc)?.focus();
    toast('Moved to the Trash.');
  }

  // ---- offline ----
  function renderOffline() {
    replaceChildren(tagsBox, h('p', { class: 'muted small' }, 'Tags need a connection.'));
    newDoc.disabled = true;
    newFolder.disabled = true;
    search.disabled = true;
    tree.renderOffline();
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
