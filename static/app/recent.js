// Documents recently opened on this device (id + title), for the offline home page. The
// editor page calls rememberDoc({docId, title}) when a document loads or its title changes.
// Kept in localStorage, per signed-in user, newest first, at most 50.

const KEY = 'docsync.recent';
const MAX = 50;

/** @typedef {{docId: string, title: string, icon?: string|null, openedAt: number}} RecentDoc */

/** @returns {Pick<Storage, 'getItem'|'setItem'|'removeItem'>|null} */
function defaultStorage() {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
}

/** @returns {string} the signed-in user's id (from session's cache), or '' */
function defaultUser() {
  try {
    const raw = globalThis.localStorage?.getItem('docsync.me');
    return raw ? String(JSON.parse(raw).id ?? '') : '';
  } catch {
    return '';
  }
}

/**
 * @param {{storage?: Pick<Storage, 'getItem'|'setItem'|'removeItem'>|null, userId?: string}} [opts]
 * @returns {Record<string, RecentDoc[]>}
 */
function readAll(opts = {}) {
  const storage = opts.storage === undefined ? defaultStorage() : opts.storage;
  try {
    const raw = storage?.getItem(KEY);
    const all = raw ? JSON.parse(raw) : {};
    return all && typeof all === 'object' && !Array.isArray(all) ? all : {};
  } catch {
    return {};
  }
}

/**
 * @param {Record<string, RecentDoc[]>} all
 * @param {{storage?: Pick<Storage, 'getItem'|'setItem'|'removeItem'>|null}} opts
 */
function writeAll(all, opts) {
  const storage = opts.storage === undefined ? defaultStorage() : opts.storage;
  try {
    storage?.setItem(KEY, JSON.stringify(all));
  } catch {
    // quota or blocked storage: the list is a convenience only
  }
}

/**
 * Remember that a document was opened (or renamed) on this device.
 * @param {{docId: string, title?: string|null, icon?: string|null}} doc
 * @param {{storage?: Pick<Storage, 'getItem'|'setItem'|'removeItem'>|null, userId?: string, now?: number}} [opts]
 */
export function rememberDoc(doc, opts = {}) {
  if (!doc || typeof doc.docId !== 'string' || !doc.docId) return;
  const user = opts.userId ?? defaultUser();
  const all = readAll(opts);
  const list = (all[user] ?? []).filter((d) => d && d.docId !== doc.docId);
  const prev = (all[user] ?? []).find((d) => d && d.docId === doc.docId);
  list.unshift({
    docId: doc.docId,
    title: typeof doc.title === 'string' ? doc.title : prev?.title ?? '',
    icon: doc.icon !== undefined ? doc.icon : prev?.icon ?? null,
    openedAt: opts.now ?? Date.now(),
  });
  all[user] = list.slice(0, MAX);
  writeAll(all, opts);
}

/**
 * Update the title/icon of a remembered document in place (order unchanged); no-op when the
 * document is not in the list.
 * @param {{docId: string, title?: string|null, icon?: string|null}} doc
 * @param {{storage?: Pick<Storage, 'getItem'|'setItem'|'removeItem'>|null, userId?: string}} [opts]
 */
export function updateRecent(doc, opts = {}) {
  const user = opts.userId ?? defaultUser();
  const all = readAll(opts);
  const list = all[user];
  if (!Array.isArray(list)) return;
  const entry = list.find((d) => d && d.docId === doc.docId);
  if (!entry) return;
  const title = typeof doc.title === 'string' ? doc.title : entry.title;
  const icon = doc.icon !== undefined ? doc.icon : entry.icon ?? null;
  if (entry.title === title && (entry.icon ?? null) === icon) return;
  entry.title = title;
  entry.icon = icon;
  writeAll(all, opts);
}

/**
 * Recently opened documents, newest first.
 * @param {{storage?: Pick<Storage, 'getItem'|'setItem'|'removeItem'>|null, userId?: string}} [opts]
 * @returns {RecentDoc[]}
 */
export function recentDocs(opts = {}) {
  const user = opts.userId ?? defaultUser();
  const list = readAll(opts)[user];
  return Array.isArray(list) ? list.filter((d) => d && typeof d.docId === 'string') : [];
}

/**
 * Drop a document (deleted, or access lost).
 * @param {string} docId
 * @param {{storage?: Pick<Storage, 'getItem'|'setItem'|'removeItem'>|null, userId?: string}} [opts]
 */
export function forgetDoc(docId, opts = {}) {
  const user = opts.userId ?? defaultUser();
  const all = readAll(opts);
  if (!all[user]) return;
  all[user] = all[user].filter((d) => d && d.docId !== docId);
  writeAll(all, opts);
}

/**
 * Drop this device's whole list of recent documents, every user's (logout that removes the
 * device's copies).
 * @param {{storage?: Pick<Storage, 'getItem'|'setItem'|'removeItem'>|null}} [opts]
 */
export function forgetRecent(opts = {}) {
  const storage = opts.storage === undefined ? defaultStorage() : opts.storage;
  try {
    storage?.removeItem(KEY);
  } catch {
    // blocked storage: nothing was kept either
  }
}
