// The list of the editor's keys (the `?` panel). One table, also the source of the README's
// key table, so what the panel says and what the keys do are written in one place.

import { openModal } from '../ui/dialog.js';
import { h } from '../ui/dom.js';

/** @type {[string, string][]} [keys, what they do] */
export const KEYS = [
  ['Enter', 'New bullet (splits the text at the caret)'],
  ['Shift+Enter', 'Line break inside the bullet'],
  ['Tab / Shift+Tab', 'Indent / outdent'],
  ['Alt+Shift+↑ / ↓', 'Move the bullet up / down'],
  ['Ctrl+Enter', 'Todo → done → plain bullet'],
  ['Ctrl+↑ / Ctrl+↓', 'Collapse / expand'],
  ['Alt+→ / Alt+←', 'Zoom into the bullet / out one level'],
  ['Click the bullet dot', 'Zoom into the bullet'],
  ['Shift+↑ / ↓, Shift+click', 'Select whole bullets'],
  ['Ctrl+A (twice)', 'Select all bullets'],
  ['Tab, Delete, Ctrl+C/X/V', '… on the selected bullets'],
  ['Escape', 'Clear the selection; stop editing the bullet (then Tab / Shift+Tab move out of the outline)'],
  ['Ctrl+F', 'Find in the document'],
  ['Alt+H', 'History of this bullet'],
  ['Alt+Shift+H', 'History and versions of the document'],
  ['Alt+S', 'Share this bullet (and everything below it)'],
  ['Ctrl+Shift+↓ / ↑', 'Expand all / collapse all'],
  ['Ctrl+Z / Ctrl+Shift+Z', 'Undo / redo'],
  ['[ ]  #  ##  >  ```', 'At the start of a bullet: todo, heading, quote, code'],
  ['?', 'This list (outside a bullet)'],
];

/** Opens the panel. */
export function openKeysHelp() {
  const rows = KEYS.map(([k, what]) => h('tr', null, h('th', { scope: 'row' }, h('kbd', null, k)), h('td', null, what)));
  openModal({
    id: 'keys-help',
    title: 'Keyboard shortcuts',
    description: 'Ctrl is ⌘ on a Mac.',
    content: [h('table', { class: 'keys-table' }, h('tbody', null, ...rows))],
  });
}
