// What an owner does to a folder from the home page: rename it, move it, delete it. Each
// asks in a dialog, calls the API and resolves with what changed (or null when cancelled);
// the home page reloads its lists. Deleting never deletes a document: the server moves the
// folder's documents and subfolders to its parent, and the dialog says so.

import { formDialog, confirmDialog } from '../ui/dialog.js';
import { seg } from '../api.js';
import { folderMoveTargets } from './home-model.js';

/** @typedef {import('./home-model.js').FolderInfo} FolderInfo */
/** @typedef {import('./home-model.js').FolderNode} FolderNode */

/**
 * @param {import('../api.js').Api} api @param {FolderInfo} f
 * @returns {Promise<FolderInfo|null>}
 */
export function renameFolder(api, f) {
  return formDialog({
    id: 'rename-folder',
    title: 'Rename folder',
    fields: [{ name: 'name', label: 'Name', value: f.name, maxLength: 200, required: true }],
    submitLabel: 'Rename',
    onSubmit: async (v) => /** @type {FolderInfo} */ (await api.patch(`/folders/${seg(f.folderId)}`, { name: v.name.trim() })),
  });
}

/**
 * @param {import('../api.js').Api} api @param {FolderInfo} f @param {FolderNode[]} roots
 * @param {string} myId
 * @returns {Promise<FolderInfo|null>}
 */
export function moveFolder(api, f, roots, myId) {
  return formDialog({
    id: 'move-folder',
    title: `Move “${f.name}”`,
    description: 'Who can read its documents follows the folder it is in (shares of the folders above it).',
    fields: [{ name: 'parentId', label: 'Into', value: f.parentId ?? '', options: folderMoveTargets(roots, f.folderId, myId) }],
    submitLabel: 'Move',
    onSubmit: async (v) => /** @type {FolderInfo} */ (await api.patch(`/folders/${seg(f.folderId)}`, { parentId: v.parentId || null })),
  });
}

/**
 * @param {import('../api.js').Api} api @param {FolderInfo} f @param {string|null} parentName
 * @returns {Promise<boolean>}
 */
export async function deleteFolder(api, f, parentName) {
  const where = parentName ? `“${parentName}”` : 'the top level';
  const ok = await confirmDialog({
    title: `Delete folder “${f.name}”?`,
    message: `Its documents and folders are not deleted: they move to ${where}. People it was shared with lose the access the folder gave them.`,
    confirmLabel: 'Delete folder',
    danger: true,
  });
  if (!ok) return false;
  await api.del(`/folders/${seg(f.folderId)}`);
  return true;
}
