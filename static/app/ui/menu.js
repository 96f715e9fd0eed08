// A small action menu (WAI-ARIA menu button): the trigger has aria-haspopup/aria-expanded,
// arrow keys move between items, Escape or a click elsewhere closes it.

import { h, uid } from './dom.js';
import { icon } from './icons.js';

/**
 * @typedef {{label: string, icon?: Parameters<typeof icon>[0], danger?: boolean,
 *   onSelect: () => void, className?: string}} MenuItem
 */

/**
 * @param {{label: string, items: MenuItem[], className?: string}} opts
 * @returns {HTMLElement} a wrapper holding the trigger and its menu
 */
export function menuButton(opts) {
  const menuId = uid('menu');
  const trigger = h('button', {
    type: 'button', class: `icon-btn menu-trigger ${opts.className ?? ''}`, 'aria-label': opts.label,
    title: opts.label, 'aria-haspopup': 'menu', 'aria-expanded': 'false', 'aria-controls': menuId,
  }, icon('more'));
  const items = opts.items.map((it) =>
    h('button', { type: 'button', role: 'menuitem', tabindex: '-1', class: `menu-item${it.danger ? ' menu-item-danger' : ''} ${it.className ?? ''}` },
      it.icon ? icon(it.icon, { size: 16 }) : null, h('span', null, it.label)));
  const menu = h('div', { id: menuId, role: 'menu', class: 'menu', hidden: true, 'aria-label': opts.label }, ...items);
  const wrap = h('div', { class: 'menu-wrap' }, trigger, menu);

  /** @param {PointerEvent|MouseEvent} ev */
  const onDocDown = (ev) => {
    if (ev.target instanceof Node && !wrap.contains(ev.target)) close(false);
  };
  const open = (focusIndex = 0) => {
    menu.hidden = false;
    trigger.setAttribute('aria-expanded', 'true');
    wrap.classList.add('menu-open');
    // Open upwards when there is no room below.
    const r = trigger.getBoundingClientRect();
    menu.classList.toggle('menu-up', r.bottom + menu.offsetHeight + 8 > window.innerHeight && r.top > menu.offsetHeight + 8);
    items[(focusIndex + items.length) % items.length]?.focus();
    document.addEventListener('mousedown', onDocDown, true);
  };
  /** @param {boolean} refocus */
  const close = (refocus) => {
    if (menu.hidden) return;
    menu.hidden = true;
    trigger.setAttribute('aria-expanded', 'false');
    wrap.classList.remove('menu-open');
    document.removeEventListener('mousedown', onDocDown, true);
    if (refocus) trigger.focus();
  };
  trigger.addEventListener('click', () => (menu.hidden ? open() : close(true)));
  trigger.addEventListener('keydown', (ev) => {
    if (ev.key === 'ArrowDown') { ev.preventDefault(); open(0); }
    if (ev.key === 'ArrowUp') { ev.preventDefault(); open(-1); }
  });
  menu.addEventListener('keydown', (ev) => {
    const i = items.indexOf(/** @type {HTMLButtonElement} */ (document.activeElement));
    if (ev.key === 'ArrowDown') { ev.preventDefault(); items[(i + 1) % items.length].focus(); }
    else if (ev.key === 'ArrowUp') { ev.preventDefault(); items[(i - 1 + items.length) % items.length].focus(); }
    else if (ev.key === 'Home') { ev.preventDefault(); items[0].focus(); }
    else if (ev.key === 'End') { ev.preventDefault(); items[items.length - 1].focus(); }
    else if (ev.key === 'Escape') { ev.preventDefault(); ev.stopPropagation(); close(true); }
    else if (ev.key === 'Tab') close(false);
  });
  items.forEach((el, i) => el.addEventListener('click', () => {
    close(true);
    opts.items[i].onSelect();
  }));
  return wrap;
}
