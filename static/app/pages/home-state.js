// What the home page knows about the lists it shows: the documents and folders from the
// server, the folder tree built from them, the folder new documents go into, which folders
// are folded (remembered on this device) and how many documents each list shows. DOM-free;
// home.js draws it and asks it to change.
//
// Invariants: `tree` is always built from exactly `docs` and `folders`; the selected folder
// is one of the tree's folders (or none); a list shows at least DOC_PAGE documents.

import { buildTree } from './home-model.js';

/** @typedef {import('./home-model.js').DocSummary} DocSummary */
/** @typedef {import('./home-model.js').FolderInfo} FolderInfo */

/** Documents a list shows at first, and adds with each "Show more". */
export const DOC_PAGE = 50;
const COLLAPSED_KEY = 'docsync.collapsedFolders';

/** A bullet shared with me: its document, the bullet, its text, my role there. @typedef {{docId: string, blockId: string, title: string, role: 'editor'|'viewer', deleted: boolean}} SharedBullet */

export class HomeLists {
  /** @type {DocSummary[]} */
  #docs = [];
  /** @type {FolderInfo[]} */
  #folders = [];
  /** @type {SharedBullet[]} */
  #bullets = [];
  #tree = buildTree([], []);
  /** @type {string|null} */
  #selected = null;
  /** @type {Set<string>} */
  #collapsed;
  /** @type {Map<string, number>} */
  #shown = new Map();
  #storage;

  /** @param {Pick<Storage, 'getItem'|'setItem'>|null} [storage] where folded folders are remembered */
  constructor(storage = globalThis.localStorage ?? null) {
    this.#storage = storage;
    this.#collapsed = readCollapsed(storage);
  }

  get docs() {
    return this.#docs;
  }
  get folders() {
    return this.#folders;
  }
  get tree() {
    return this.#tree;
  }
  /** The folder new documents and folders go into (null: the top level). */
  get selected() {
    return this.#selected;
  }

  /** The server's lists. @param {DocSummary[]} docs @param {FolderInfo[]} folders */
  setAll(docs, folders) {
    this.#docs = docs;
    this.#folders = folders;
    this.#rebuild();
  }

  /** Bullets shared with me (PROTOCOL §10), each opened as the part of its document I see. */
  get bullets() {
    return this.#bullets;
  }

  /** @param {SharedBullet[]} bullets */
  setBullets(bullets) {
    this.#bullets = bullets;
  }

  /** @param {string} docId */
  removeDoc(docId) {
    this.#docs = this.#docs.filter((d) => d.docId !== docId);
    this.#rebuild();
  }

  /** A folder just made here (shown before the next load). @param {FolderInfo} f */
  addFolder(f) {
    if (!this.#folders.some((x) => x.folderId === f.folderId)) this.#folders = [...this.#folders, f];
    this.#rebuild();
  }

  /** @param {string|null} folderId */
  select(folderId) {
    this.#selected = folderId && this.#tree.byId.has(folderId) ? folderId : null;
  }

  /** @param {string} folderId */
  isCollapsed(folderId) {
    return this.#collapsed.has(folderId);
  }

  /** @param {string} folderId */
  toggleFolder(folderId) {
    if (this.#collapsed.has(folderId)) this.#collapsed.delete(folderId);
    else this.#collapsed.add(folderId);
    this.#saveCollapsed();
  }

  /** Unfolds a folder (something was just put into it). @param {string|null|undefined} folderId */
  expand(folderId) {
    if (folderId && this.#collapsed.delete(folderId)) this.#saveCollapsed();
  }

  /**
   * The part of a list shown now and how many are left.
   * @template T @param {string} key @param {T[]} list
   * @returns {{items: T[], rest: number, limit: number}}
   */
  page(key, list) {
    const limit = this.#shown.get(key) ?? DOC_PAGE;
    return { items: list.slice(0, limit), rest: Math.max(0, list.length - limit), limit };
  }

  /** "Show more" on a list. @param {string} key */
  showMore(key) {
    this.#shown.set(key, (this.#shown.get(key) ?? DOC_PAGE) + DOC_PAGE);
  }

  #rebuild() {
    this.#tree = buildTree(this.#docs, this.#folders);
    if (this.#selected && !this.#tree.byId.has(this.#selected)) this.#selected = null;
  }

  #saveCollapsed() {
    try {
      this.#storage?.setItem(COLLAPSED_KEY, JSON.stringify([...this.#collapsed]));
    } catch {
      // storage full or blocked: folding is only a convenience
    }
  }
}

/** @param {Pick<Storage, 'getItem'>|null} storage @returns {Set<string>} */
function readCollapsed(storage) {
  try {
    const v = JSON.parse(storage?.getItem(COLLAPSED_KEY) ?? '[]');
    return new Set(Array.isArray(v) ? v.filter((x) => typeof x === 'string') : []);
  } catch {
    return new Set();
  }
}
