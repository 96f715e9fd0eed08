// The first screen of a document as this person last saw it on this device. Reading this
// device's whole copy of a big document (IndexedDB) and building its model takes a few
// hundred milliseconds; these few rows, kept in localStorage, are drawn at once, read-only,
// and the engine's first state then takes over row by row (same IDs: the same row elements,
// nothing jumps). Only the whole document is kept (not a zoomed bullet), at most ROWS rows
// per document and KEEP_DOCS documents per person on a device; a person's copies are never
// read for another person.

/** @typedef {import('../engine/types.js').Row} Row */
/** @typedef {Pick<Storage, 'getItem'|'setItem'|'removeItem'>} StorageLike */
/** @typedef {{title: string, icon: string|null, rows: Row[]}} FirstScreen */

/** Enough rows for a tall window; a phone shows fewer. */
export const ROWS = 80;
/** Documents kept per person (most recently shown first). */
export const KEEP_DOCS = 30;

/**
 * The page's `localStorage`, or null where there is none or it throws (privacy settings).
 * @returns {Storage|null}
 */
export function pageStorage() {
  try {
    return globalThis.localStorage ?? null;
  } catch {
    return null;
  }
}

/** @param {string} userId @param {string} docId */
const docKey = (userId, docId) => `docsync:first:${userId}:${docId}`;
/** @param {string} userId */
const indexKey = (userId) => `docsync:first:${userId}`;

/**
 * The kept first screen of `docId`, or null (none, or unreadable).
 * @param {StorageLike|null} storage @param {string} userId @param {string} docId
 * @returns {FirstScreen|null}
 */
export function readFirstScreen(storage, userId, docId) {
  if (!storage || !userId) return null;
  try {
    const raw = storage.getItem(docKey(userId, docId));
    if (!raw) return null;
    const v = JSON.parse(raw);
    if (typeof v?.title !== 'string' || !Array.isArray(v.rows)) return null;
    const rows = v.rows.filter(validRow).map(fullRow);
    return rows.length ? { title: v.title, icon: typeof v.icon === 'string' ? v.icon : null, rows } : null;
  } catch {
    return null;
  }
}

/**
 * The server's first rows of a document (`GET /docs/{id}/first-rows`) as a first screen to
 * draw, or null when the reply is not one.
 * @param {unknown} reply
 * @returns {FirstScreen|null}
 */
export function firstScreenOf(reply) {
  const v = /** @type {any} */ (reply);
  if (typeof v?.title !== 'string' || !Array.isArray(v.rows)) return null;
  const rows = v.rows.filter(validRow).map(fullRow);
  return rows.length ? { title: v.title, icon: typeof v.icon === 'string' ? v.icon : null, rows } : null;
}

/**
 * Keeps the first rows of what is shown now. An empty document forgets its copy. Never
 * throws (a full or missing localStorage only means no early paint next time).
 * @param {StorageLike|null} storage @param {string} userId @param {string} docId
 * @param {{title: string, icon: string|null, rows: Row[]}} shown
 */
export function keepFirstScreen(storage, userId, docId, shown) {
  if (!storage || !userId) return;
  try {
    const index = readIndex(storage, userId).filter((d) => d !== docId);
    if (shown.rows.length === 0) {
      storage.removeItem(docKey(userId, docId));
      storage.setItem(indexKey(userId), JSON.stringify(index));
      return;
    }
    const rows = shown.rows.slice(0, ROWS).map(keptRow);
    storage.setItem(docKey(userId, docId), JSON.stringify({ title: shown.title, icon: shown.icon, rows }));
    index.unshift(docId);
    for (const gone of index.splice(KEEP_DOCS)) storage.removeItem(docKey(userId, gone));
    storage.setItem(indexKey(userId), JSON.stringify(index));
  } catch {
    // quota or privacy settings: nothing kept
  }
}

/**
 * Forgets every person's kept first screens on this device (logging out with "remove this
 * device's copies").
 * @param {Pick<Storage, 'key'|'length'|'removeItem'>|null} storage
 */
export function forgetAllFirstScreens(storage) {
  if (!storage) return;
  try {
    const keys = [];
    for (let i = 0; i < storage.length; i++) {
      const k = storage.key(i);
      if (k?.startsWith('docsync:first:')) keys.push(k);
    }
    for (const k of keys) storage.removeItem(k);
  } catch {
    // blocked storage: nothing was kept either
  }
}

/** @param {StorageLike} storage @param {string} userId @returns {string[]} */
function readIndex(storage, userId) {
  try {
    const v = JSON.parse(storage.getItem(indexKey(userId)) ?? '[]');
    return Array.isArray(v) ? v.filter((d) => typeof d === 'string') : [];
  } catch {
    return [];
  }
}

/** What a drawn row needs (no versions, no parents). @param {Row} r */
function keptRow(r) {
  /** @type {Record<string, unknown>} */
  const k = { id: r.id, depth: r.depth, content: r.content, type: r.type };
  if (r.checked) k.checked = true;
  if (r.collapsed) k.collapsed = true;
  if (r.hasChildren) k.hasChildren = true;
  if (r.language) k.language = r.language;
  if (r.conflictOf) {
    k.conflictOf = r.conflictOf;
    k.conflictResolved = r.conflictResolved;
    k.conflictAuthor = r.conflictAuthor;
  }
  return k;
}

/** @param {any} r @returns {boolean} */
function validRow(r) {
  return typeof r?.id === 'string' && Number.isInteger(r.depth) && r.depth >= 0 && typeof r.content === 'string' && typeof r.type === 'string';
}

/** @param {any} k @returns {Row} */
function fullRow(k) {
  return {
    id: k.id,
    parentId: null,
    depth: k.depth,
    content: k.content,
    type: k.type,
    checked: k.checked === true,
    collapsed: k.collapsed === true,
    language: typeof k.language === 'string' ? k.language : null,
    conflictOf: typeof k.conflictOf === 'string' ? k.conflictOf : null,
    conflictAuthor: k.conflictAuthor ?? null,
    conflictResolved: k.conflictResolved === true,
    version: 0,
    hasChildren: k.hasChildren === true,
  };
}
