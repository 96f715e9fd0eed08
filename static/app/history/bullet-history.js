// One bullet's history (PROTOCOL §8): every past text with who and when, newest first, each
// change highlighted word by word against the text before it, then its state in older kept
// versions; "Restore this text" puts a past text back as an ordinary edit of this tab (so a
// colleague typing in the bullet gets a conflict copy, never a lost text).

import { h, replaceChildren } from '../ui/dom.js';
import { openModal } from '../ui/dialog.js';
import { describeError } from '../api.js';
import { when, words } from './format.js';
import { wordDiff } from './word-diff.js';

/** @typedef {import('../api.js').Api} Api */
/**
 * @typedef {{seq: number, at: number, userId: string, name: string, kind: string,
 *   content?: string, deleted: boolean, versionId?: string}} Change
 */

/** What each kind of change is called. */
const KIND = /** @type {Record<string, string>} */ ({
  insert: 'created it',
  set_content: 'edited',
  set_props: 'changed its type or box',
  move: 'moved it',
  delete: 'deleted it',
  restore: 'restored it',
  purge: 'removed for good',
  version: 'kept in a version',
});

/**
 * @param {{api: Api, docId: string, blockId: string, canEdit: boolean,
 *   current: () => string|null, restoreText: (text: string) => {ok: boolean, message?: string}}} o
 */
export function openBulletHistory(o) {
  const path = `/docs/${encodeURIComponent(o.docId)}/blocks/${encodeURIComponent(o.blockId)}/history`;
  const listEl = h('ol', { class: 'bh-list', 'aria-label': 'Changes, newest first' });
  const status = h('p', { class: 'hist-status', role: 'status' });
  const more = h('button', { type: 'button', class: 'btn', hidden: true }, 'Older changes');
  const { dialog } = openModal({
    id: 'bullet-history',
    title: 'History of this bullet',
    content: [status, listEl, more],
  });
  dialog.classList.add('dialog-history');
  /** @type {Change[]} */
  const changes = [];

  async function page() {
    const before = changes.length ? `?before=${changes[changes.length - 1].seq}` : '';
    more.disabled = true;
    try {
      const r = await o.api.get(`${path}${before}`);
      changes.push(...r.changes);
      more.hidden = !r.more;
      draw();
      if (!changes.length) status.textContent = 'No changes of this bullet are kept.';
    } catch (e) {
      status.textContent = describeError(e);
    } finally {
      more.disabled = false;
    }
  }

  function draw() {
    const now = o.current();
    replaceChildren(
      listEl,
      ...changes.map((c, i) => {
        const older = changes.slice(i + 1).find((x) => x.content !== undefined);
        const text = c.content ?? '';
        const diff = c.content === undefined ? null : older?.content !== undefined ? words(wordDiff(older.content, text)) : words([{ op: 'same', text }]);
        const restorable = o.canEdit && c.content !== undefined && !c.deleted && c.content !== now;
        const btn = restorable ? h('button', { type: 'button', class: 'btn btn-small bh-restore' }, 'Restore this text') : null;
        btn?.addEventListener('click', () => {
          const r = o.restoreText(text);
          status.textContent = r.ok ? 'Restored this text.' : (r.message ?? 'Could not restore this text.');
          if (r.ok) draw();
        });
        return h(
          'li',
          { class: `bh-item kind-${c.kind}${c.deleted ? ' is-deleted' : ''}`, dataset: { seq: String(c.seq) } },
          h('div', { class: 'bh-meta' }, h('span', { class: 'bh-who' }, c.name || 'Someone'), ` ${KIND[c.kind] ?? c.kind} · `, h('time', { datetime: new Date(c.at).toISOString() }, when(c.at))),
          diff ? h('div', { class: 'bh-text' }, diff) : null,
          btn,
        );
      }),
    );
  }

  more.addEventListener('click', () => void page());
  void page();
  return dialog;
}
