// Short, polite status messages at the bottom of the screen ("Document deleted").

import { h } from './dom.js';

/** @returns {HTMLElement} */
function region() {
  let el = document.getElementById('toasts');
  if (!el) {
    el = h('div', { id: 'toasts', class: 'toasts', role: 'status', 'aria-live': 'polite' });
    document.body.append(el);
  }
  return el;
}

/**
 * @param {string} message
 * @param {{kind?: 'info'|'error', timeout?: number}} [opts]
 */
export function toast(message, opts = {}) {
  const el = h('div', { class: `toast${opts.kind === 'error' ? ' toast-error' : ''}` }, message);
  region().append(el);
  setTimeout(() => {
    el.classList.add('toast-leaving');
    setTimeout(() => el.remove(), 200);
  }, opts.timeout ?? 4000);
}
