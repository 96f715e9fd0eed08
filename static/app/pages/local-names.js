// Names the server does not return with ids, remembered on this device: people found by
// name when sharing (shares list only ids), and folders created here (used when the server
// has no folder list). Plain localStorage maps; losing them only costs a nicer label.

const PEOPLE_KEY = 'docsync.people';
const FOLDERS_KEY = 'docsync.folders';

/** @typedef {{id: string, name: string, displayName?: string}} Person */
/** @typedef {import('./home-model.js').FolderInfo} FolderInfo */

/** @param {string} key @returns {Record<string, any>} */
function read(key) {
  try {
    const v = JSON.parse(localStorage.getItem(key) ?? '{}');
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/** @param {string} key @param {Record<string, any>} value */
function write(key, value) {
  try {
    localStorage.setItem(key, JSON.stringify(value));
  } catch {
    // ignore
  }
}

/** @param {Person} p */
export function rememberPerson(p) {
  if (!p?.id) return;
  const all = read(PEOPLE_KEY);
  all[p.id] = { id: p.id, name: p.name, displayName: p.displayName ?? p.name };
  write(PEOPLE_KEY, all);
}

/** @param {string} id @returns {Person|null} */
export function personById(id) {
  const p = read(PEOPLE_KEY)[id];
  return p && typeof p.name === 'string' ? p : null;
}

/** @param {FolderInfo} f */
export function rememberFolder(f) {
  if (!f?.folderId) return;
  const all = read(FOLDERS_KEY);
  all[f.folderId] = { folderId: f.folderId, name: f.name, parentId: f.parentId ?? null, ownerId: f.ownerId ?? null };
  write(FOLDERS_KEY, all);
}

/** @returns {FolderInfo[]} */
export function knownFolders() {
  return Object.values(read(FOLDERS_KEY)).filter((f) => f && typeof f.folderId === 'string' && typeof f.name === 'string');
}
