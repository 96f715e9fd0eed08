// Page states shared by the pages: nothing to show yet, a failure with a way to try again,
// and a query's words marked in a text (as text nodes, never HTML).

import { describeError } from '../api.js';
import { h, replaceChildren } from './dom.js';

/**
 * @param {SVGElement} art
 * @param {string} title
 * @param {string} text
 * @param {Node|null} [action]
 */
export function emptyState(art, title, text, action = null) {
  return h('div', { class: 'empty' }, h('div', { class: 'empty-art' }, art), h('p', { class: 'empty-title' }, title), h('p', { class: 'muted' }, text), action);
}

/** @param {string} message @param {() => void} retry */
export function errorBox(message, retry) {
  return h('div', { class: 'banner banner-error', role: 'alert' }, h('span', null, message),
    h('button', { type: 'button', class: 'btn btn-small', onclick: retry }, 'Try again'));
}

/**
 * A list filled from the server: its items' rows, or the one `empty` line when there are
 * none; a failure is said in `error`; the list stops being busy either way. Returns the
 * loader, to call again after a change.
 * @template T
 * @param {HTMLElement} list @param {HTMLElement} error
 * @param {() => Promise<T[]>} items @param {(item: T) => Node} row @param {() => Node} empty
 * @returns {() => Promise<void>}
 */
export function listLoader(list, error, items, row, empty) {
  return async () => {
    try {
      const got = await items();
      replaceChildren(list, ...(got.length ? got.map(row) : [empty()]));
    } catch (e) {
      error.textContent = describeError(e);
      error.hidden = false;
    } finally {
      list.removeAttribute('aria-busy');
    }
  };
}

/**
 * Wraps the query's words in <mark> (text nodes only, never HTML).
 * @param {string} text
 * @param {string} q
 * @returns {(Node|string)[]}
 */
export function highlight(text, q) {
  const words = q.trim().split(/\s+/).filter((w) => w.length > 0).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  if (!words.length) return [text];
  const re = new RegExp(`(${words.join('|')})`, 'gi');
  return text.split(re).map((part, i) => (i % 2 === 1 ? h('mark', null, part) : part));
}
