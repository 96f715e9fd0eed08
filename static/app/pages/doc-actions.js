// What a person does to a document from the home page: create it, import one from a file,
// rename it, give it an icon, move it to a folder, delete it. Each asks in a dialog where it
// needs to, calls the API and resolves with what changed (null when cancelled); the home
// page owns the lists and draws them again. Errors of creating and importing are said in a
// toast; the dialogs show their own.

import { describeError, seg } from '../api.js';
import { getClientId, uuid } from '../session.js';
import { rememberDoc } from '../recent.js';
import { h } from '../ui/dom.js';
import { confirmDialog, formDialog } from '../ui/dialog.js';
import { toast } from '../ui/toast.js';
import { displayTitle } from './home-model.js';

/** @typedef {import('./home-model.js').DocSummary} DocSummary */
/** @typedef {import('../api.js').Api} Api */

/**
 * A new, empty document (in `folderId` when given); resolves with its ID.
 * @param {Api} api @param {string|null} folderId
 * @returns {Promise<string|null>}
 */
export async function createDocument(api, folderId) {
  try {
    const r = await api.post('/docs', folderId ? { title: '', folderId } : { title: '' });
    rememberDoc({ docId: r.docId, title: '' });
    return r.docId;
  } catch (e) {
    toast(`Could not create the document: ${describeError(e)}`, { kind: 'error' });
    return null;
  }
}

/**
 * "Import…": asks for a Markdown, OPML or text file and makes a new document of it (in
 * `folderId` when given); its bullets are handed to the new document's editor. Resolves with
 * the new document's ID (null when cancelled or refused).
 * @param {Api} api @param {string|null} folderId
 * @param {{docId: string, title: string}[]} readable the documents the home page lists (link targets)
 * @returns {Promise<string|null>}
 */
export function importDocument(api, folderId, readable) {
  return new Promise((resolve) => {
    const input = h('input', { type: 'file', id: 'import-file', hidden: true, accept: '.md,.markdown,.opml,.xml,.txt,text/markdown,text/plain,text/x-opml' });
    input.addEventListener('change', async () => {
      const file = input.files?.[0];
      input.remove();
      if (!file) return resolve(null);
      try {
        // the readers are the editor's; loaded only when a file is imported
        const [{ readOutlineFile, decodeOutlineFile }, { handOver }] = await Promise.all([import('../editor/import-file.js'), import('../editor/pending-import.js')]);
        // `[[Page]]` links of a Logseq page point to the readable document of that title
        const byTitle = documentsByTitle(readable);
        const { title, items } = readOutlineFile(file.name, decodeOutlineFile(await file.arrayBuffer()), new DOMParser(), { linkTo: (t) => byTitle.get(t.toLowerCase()) ?? null });
        if (!items.length) throw new Error('the file holds no bullets');
        const name = title ?? file.name.replace(/\.(md|markdown|opml|xml|txt)$/i, '');
        const r = await api.post('/docs', folderId ? { title: name, folderId } : { title: name });
        handOver(r.docId, { title: null, items });
        rememberDoc({ docId: r.docId, title: name });
        resolve(r.docId);
      } catch (e) {
        toast(`Nothing was imported: ${describeError(e)}`, { kind: 'error' });
        resolve(null);
      }
    });
    input.addEventListener('cancel', () => {
      input.remove();
      resolve(null);
    });
    document.body.append(input);
    input.click();
  });
}

/**
 * Documents by lower-cased title (the first of equal titles), for `[[Page]]` links.
 * @param {{docId: string, title: string}[]} docs
 */
function documentsByTitle(docs) {
  /** @type {Map<string, string>} */
  const out = new Map();
  for (const d of docs) {
    const t = String(d.title ?? '').trim().toLowerCase();
    if (t && !out.has(t)) out.set(t, d.docId);
  }
  return out;
}

/** @param {Api} api @param {DocSummary} d @returns {Promise<string|null>} the new title */
export function renameDocument(api, d) {
  return formDialog({
    title: 'Rename document',
    fields: [{ name: 'title', label: 'Title', value: d.title, maxLength: 500 }],
    submitLabel: 'Rename',
    onSubmit: async (v) => {
      await setTitle(api, d.docId, v.title.trim());
      return v.title.trim();
    },
  });
}

/** @param {Api} api @param {DocSummary} d @returns {Promise<{icon: string|null}|null>} */
export function chooseIcon(api, d) {
  return formDialog({
    title: 'Document icon',
    description: 'An emoji (or a few characters) shown next to the title. Leave empty to remove it.',
    fields: [{ name: 'icon', label: 'Icon', value: d.icon ?? '', placeholder: 'e.g. 📘', maxLength: 16 }],
    submitLabel: 'Save icon',
    onSubmit: async (v) => {
      const value = v.icon.trim();
      if (new TextEncoder().encode(value).length > 64) throw new Error('That is too long for an icon — use an emoji or a few characters.');
      await api.patch(`/docs/${seg(d.docId)}`, { icon: value || null });
      return { icon: value || null };
    },
  });
}

/**
 * @param {Api} api @param {DocSummary} d @param {{value: string, label: string}[]} folders
 *   where it may go (paths)
 * @returns {Promise<{folderId: string|null}|null>}
 */
export function moveDocument(api, d, folders) {
  return formDialog({
    title: `Move “${displayTitle(d.title)}”`,
    fields: [{ name: 'folderId', label: 'Folder', value: d.folderId ?? '', options: [{ value: '', label: 'No folder (top level)' }, ...folders] }],
    submitLabel: 'Move',
    onSubmit: async (v) => {
      await api.patch(`/docs/${seg(d.docId)}`, { folderId: v.folderId || null });
      return { folderId: v.folderId || null };
    },
  });
}

/** @param {Api} api @param {DocSummary} d @returns {Promise<boolean>} deleted */
export async function deleteDocument(api, d) {
  const ok = await confirmDialog({
    title: 'Delete document?',
    message: `“${displayTitle(d.title)}” goes to your Trash: nobody it is shared with can open it until you restore it from there. After 30 days it is removed for good.`,
    confirmLabel: 'Delete document',
    danger: true,
  });
  if (!ok) return false;
  try {
    await api.del(`/docs/${seg(d.docId)}`);
    return true;
  } catch (e) {
    toast(`Could not delete: ${describeError(e)}`, { kind: 'error' });
    return false;
  }
}

/**
 * Sets a document's title with a one-shot /sync: snapshot for titleVersion, one set_title op
 * with this tab's clientId, then leave. A concurrent title change makes a conflict copy.
 * @param {import('../api.js').Api} api
 * @param {string} docId
 * @param {string} title
 */
export async function setTitle(api, docId, title) {
  const clientId = getClientId();
  const snap = await api.get(`/docs/${seg(docId)}/snapshot?clientId=${seg(clientId)}`);
  if (snap.title === title) return;
  const opId = `op_${uuid()}`;
  try {
    const reply = await api.post(`/docs/${seg(docId)}/sync`, {
      clientId, lastSeq: snap.headSeq, ops: [{ opId, kind: 'set_title', title, baseVersion: snap.titleVersion }], leases: { hold: [] },
    });
    const result = (reply.results ?? []).find((/** @type {{opId: string}} */ r) => r.opId === opId);
    if (result?.status === 'conflict') throw new Error('Someone changed the title at the same moment. Your title was kept as a conflict copy in the document.');
    if (result?.status === 'rejected') throw new Error(`The title was not changed (${result.reason ?? 'rejected'}).`);
  } finally {
    api.post(`/docs/${seg(docId)}/leave`, { clientId }, { keepalive: true }).catch(() => {});
  }
}

