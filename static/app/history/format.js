// How the history views say when something happened and draw a word diff. Small and shared
// by the history panel, a bullet's history and the conflict review.

import { h } from '../ui/dom.js';

/** @typedef {import('./word-diff.js').Piece} Piece */

const DAY = 86_400_000;

/** "Today", "Yesterday" or the date. @param {number} at @param {number} [now] */
export function dayLabel(at, now = Date.now()) {
  const start = (/** @type {number} */ t) => new Date(new Date(t).toDateString()).getTime();
  const days = Math.round((start(now) - start(at)) / DAY);
  if (days === 0) return 'Today';
  if (days === 1) return 'Yesterday';
  return new Date(at).toLocaleDateString(undefined, { weekday: 'short', day: 'numeric', month: 'short', year: days > 300 ? 'numeric' : undefined });
}

/** @param {number} at */
export function timeLabel(at) {
  return new Date(at).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

/** "Today 14:05", "Yesterday 09:12", "Tue 3 Dec 18:40". @param {number} at @param {number} [now] */
export function when(at, now = Date.now()) {
  return `${dayLabel(at, now)} ${timeLabel(at)}`;
}

/**
 * A word diff as text with the removed words struck through and the added ones marked, with
 * words for screen readers (the colours alone say nothing to them).
 * @param {Piece[]} pieces
 */
export function words(pieces) {
  return h(
    'span',
    { class: 'wdiff' },
    pieces.map((p) => {
      if (p.op === 'same') return p.text;
      const tag = p.op === 'add' ? 'ins' : 'del';
      return h(tag, { class: `wdiff-${p.op}` }, h('span', { class: 'sr-only' }, p.op === 'add' ? ' added: ' : ' removed: '), p.text);
    }),
  );
}
