// The conflict review (PROTOCOL §8): every open conflict copy of the document, each beside
// the bullet it belongs to with a word diff, and the three ways out — Accept (the bullet
// takes the copy's text, the copy goes), Discard (the copy goes) and Keep both (the copy
// stays as a bullet of its own). The list is the engine's own rows, so it is live (a pair
// resolved elsewhere disappears) and works offline; resolving is ordinary ops of this tab.

import { h, replaceChildren } from '../ui/dom.js';
import { openModal } from '../ui/dialog.js';
import { words } from './format.js';
import { wordDiff } from './word-diff.js';

/** @typedef {import('../../engine/types.js').Row} Row */
/** @typedef {{ok: boolean, message?: string}} Outcome */

/**
 * The open conflicts among the rows: each live, unresolved copy with its original (the
 * title's copies have the title as their original).
 * @param {Row[]} rows
 * @param {string} title
 */
export function openConflicts(rows, title) {
  const byId = new Map(rows.map((r) => [r.id, r]));
  return rows
    .filter((r) => r.conflictOf && !r.conflictResolved)
    .map((copy) => {
      const orig = copy.conflictOf === 'title' ? null : byId.get(/** @type {string} */ (copy.conflictOf));
      return { copy, original: copy.conflictOf === 'title' ? title : (orig?.content ?? null) };
    });
}

/**
 * @param {{rows: () => Row[], title: () => string, canEdit: boolean,
 *   subscribe: (fn: () => void) => () => void,
 *   accept: (id: string) => Outcome, discard: (id: string) => Outcome, keep: (id: string) => Outcome,
 *   reveal: (id: string) => void}} o
 */
export function openConflictReview(o) {
  const listEl = h('ol', { class: 'cr-list', 'aria-label': 'Open conflicts' });
  const status = h('p', { class: 'hist-status', role: 'status' });
  const { dialog } = openModal({
    id: 'conflict-review',
    title: 'Review conflicts',
    description: 'When two people change the same bullet at once, the text that could not be applied is kept as a copy below it. Choose for each.',
    content: [status, listEl],
    onClose: () => unsubscribe(),
  });
  dialog.classList.add('dialog-history');

  /** @param {string} what @param {Outcome} r */
  const done = (what, r) => {
    status.textContent = r.ok ? what : (r.message ?? 'That did not work.');
  };

  function draw() {
    const open = openConflicts(o.rows(), o.title());
    if (!open.length) {
      replaceChildren(listEl, h('li', { class: 'hist-empty' }, 'No open conflicts. Everything typed is in the document.'));
      return;
    }
    replaceChildren(
      listEl,
      ...open.map(({ copy, original }, i) => {
        const who = copy.conflictAuthor?.name || 'Someone';
        const of = copy.conflictOf === 'title' ? 'the title' : 'a bullet';
        const cur = original ?? '';
        const btns = o.canEdit
          ? [
              h('button', { type: 'button', class: 'btn btn-primary cr-accept', onclick: () => done('Accepted their text.', o.accept(copy.id)) }, 'Accept'),
              h('button', { type: 'button', class: 'btn cr-discard', onclick: () => done('Discarded the copy.', o.discard(copy.id)) }, 'Discard'),
              h('button', { type: 'button', class: 'btn cr-keep', onclick: () => done('Kept both.', o.keep(copy.id)) }, 'Keep both'),
            ]
          : [];
        const headingId = `cr-h-${i}`;
        return h(
          'li',
          { class: 'cr-item', dataset: { copyId: copy.id }, 'aria-labelledby': headingId },
          h('h3', { class: 'cr-heading', id: headingId }, `${who}’s version of ${of}`),
          h(
            'div',
            { class: 'cr-pair' },
            h('div', { class: 'cr-side' }, h('div', { class: 'cr-label' }, original === null ? 'The bullet (deleted)' : 'In the document'), h('div', { class: 'cr-text' }, cur || '(empty)')),
            h('div', { class: 'cr-side' }, h('div', { class: 'cr-label' }, `${who}’s text, changes marked`), h('div', { class: 'cr-text' }, words(wordDiff(cur, copy.content)))),
          ),
          h('div', { class: 'cr-actions' }, ...btns, h('button', { type: 'button', class: 'link-btn cr-show', onclick: () => { o.reveal(copy.id); dialog.close(); } }, 'Show in document')),
        );
      }),
    );
  }

  const unsubscribe = o.subscribe(draw);
  draw();
  return dialog;
}
