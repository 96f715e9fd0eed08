// The trash: documents their owner deleted, kept with everything (shares, versions) for the
// server's trash period. Restore brings one back for everyone it was shared with; "Delete
// forever" purges it now (after asking). Only the owner's own deleted documents are listed.

import { h, replaceChildren } from '../ui/dom.js';
import { confirmDialog, openModal } from '../ui/dialog.js';
import { describeError, seg } from '../api.js';
import { when } from './format.js';

/** @typedef {import('../api.js').Api} Api */
/** @typedef {{docId: string, title: string, icon: string|null, trashedAt: number, purgeAt: number, blocks: number}} Trashed */

/** @param {{api: Api, onRestored: (docId: string) => void}} o */
export function openTrash(o) {
  const listEl = h('ul', { class: 'trash-list', 'aria-label': 'Deleted documents' });
  const status = h('p', { class: 'hist-status', role: 'status' });
  const info = h('p', { class: 'dialog-message' });
  const { dialog } = openModal({ id: 'trash', title: 'Trash', wide: true, content: [info, status, listEl] });

  async function load() {
    try {
      const r = await o.api.get('/trash');
      info.textContent = `Deleted documents are kept ${Math.round(r.keepDays)} days, then removed for good. Restoring one gives it back to everyone it was shared with.`;
      draw(r.documents);
    } catch (e) {
      status.textContent = describeError(e);
    }
  }

  /** @param {Trashed[]} docs */
  function draw(docs) {
    if (!docs.length) {
      replaceChildren(listEl, h('li', { class: 'hist-empty' }, 'The trash is empty.'));
      return;
    }
    replaceChildren(
      listEl,
      ...docs.map((d) => {
        const title = d.title.trim() || 'Untitled';
        const restore = h('button', { type: 'button', class: 'btn btn-small trash-restore' }, 'Restore');
        const purge = h('button', { type: 'button', class: 'btn btn-small btn-danger trash-purge' }, 'Delete forever');
        restore.addEventListener('click', async () => {
          restore.disabled = true;
          try {
            await o.api.post(`/trash/${seg(d.docId)}/restore`, {});
            status.textContent = `Restored “${title}”.`;
            o.onRestored(d.docId);
            await load();
          } catch (e) {
            status.textContent = describeError(e);
            restore.disabled = false;
          }
        });
        purge.addEventListener('click', async () => {
          const ok = await confirmDialog({
            title: 'Delete forever?',
            message: `“${title}” and its versions will be removed for good. This cannot be undone.`,
            confirmLabel: 'Delete forever',
            danger: true,
          });
          if (!ok) return;
          try {
            await o.api.del(`/trash/${seg(d.docId)}`);
            status.textContent = `Deleted “${title}” for good.`;
            await load();
          } catch (e) {
            status.textContent = describeError(e);
          }
        });
        return h(
          'li',
          { class: 'trash-item', dataset: { docId: d.docId } },
          h('span', { class: 'trash-name' }, d.icon ? `${d.icon} ${title}` : title, h('span', { class: 'trash-meta' }, `Deleted ${when(d.trashedAt)} · ${d.blocks === 1 ? '1 bullet' : `${d.blocks} bullets`} · removed for good on ${new Date(d.purgeAt).toLocaleDateString(undefined, { day: 'numeric', month: 'short', year: 'numeric' })}`)),
          restore,
          purge,
        );
      }),
    );
  }

  void load();
  return dialog;
}
