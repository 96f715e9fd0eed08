// A secret shown once (an API token, an invitation link): read-only, selected on focus, with
// a Copy button that says when it copied. Nobody can show it again — the server keeps only
// its hash — so the box says so.

import { h } from './dom.js';

/**
 * @param {{id: string, label: string, value: string, note?: string}} opts
 * @returns {HTMLElement}
 */
export function secretBox(opts) {
  const input = h('input', { id: opts.id, class: 'input secret-value', readonly: true, value: opts.value, spellcheck: 'false' });
  input.addEventListener('focus', () => input.select());
  const copy = h('button', { type: 'button', class: 'btn btn-small', 'aria-describedby': opts.id }, 'Copy');
  const status = h('span', { class: 'small muted', role: 'status' });
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(opts.value);
      status.textContent = 'Copied.';
    } catch {
      // No clipboard (an insecure origin, a refused permission): the text is selected to copy by hand.
      input.focus();
      status.textContent = 'Press Ctrl+C to copy.';
    }
  });
  return h('div', { class: 'secret' },
    h('label', { for: opts.id, class: 'label' }, opts.label),
    h('div', { class: 'secret-row' }, input, copy),
    h('p', { class: 'small muted' }, opts.note ?? 'Shown this once: copy it now.', ' ', status));
}

/**
 * A moment as a short date and time ("6 Dec 2026, 10:04"). Not "2 hours ago": the server's
 * clock decides what has expired, and the browser's may differ from it.
 * @param {number} at ms since the epoch
 */
export function shortDate(at) {
  return new Date(at).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}
