// The admin pages (/admin/{tab}): people, invitations, teams, the audit log (PROTOCOL §9)
// and webhooks (§11), one module per tab; the operators' view of the document actors
// stays at /admin. Only an admin sees them (the server checks every request besides).

import { ADMIN_TABS } from '../router.js';
import { h, replaceChildren } from '../ui/dom.js';
import { renderPeople } from './admin-people.js';
import { renderInvites } from './admin-invites.js';
import { renderTeams } from './admin-teams.js';
import { renderAudit } from './admin-audit.js';
import { renderWebhooks } from './admin-webhooks.js';

/** @typedef {import('../router.js').AdminTab} AdminTab */

const TITLES = /** @type {Record<AdminTab, string>} */ ({
  people: 'People', invites: 'Invitations', teams: 'Teams', audit: 'Audit log', webhooks: 'Webhooks',
});

const RENDER = { people: renderPeople, invites: renderInvites, teams: renderTeams, audit: renderAudit, webhooks: renderWebhooks };

/**
 * @param {HTMLElement} root
 * @param {{api: import('../api.js').Api, me: import('../session.js').Me, tab: AdminTab}} ctx
 */
export function renderAdmin(root, ctx) {
  if (!ctx.me.isAdmin) {
    replaceChildren(root, h('section', { class: 'page page-narrow placeholder' },
      h('h1', { class: 'page-title' }, 'Admins only'),
      h('p', { class: 'muted' }, 'These pages are for the admins of this docsync. Ask one of them if you need something changed.'),
      h('p', null, h('a', { href: '/', class: 'btn' }, '← Back to documents'))));
    return {};
  }
  const nav = h('nav', { class: 'admin-tabs', 'aria-label': 'Admin pages' },
    ...ADMIN_TABS.map((t) => h('a', {
      href: `/admin/${t}`, class: `admin-tab${t === ctx.tab ? ' admin-tab-current' : ''}`,
      'aria-current': t === ctx.tab ? 'page' : undefined, id: `admin-tab-${t}`,
    }, TITLES[t])),
    h('a', { href: '/admin', class: 'admin-tab', dataset: { external: '' }, title: 'Open documents and their actors (operators)' }, 'Actors ↗'));
  const body = h('div', { class: 'admin-body' });
  replaceChildren(root, h('section', { class: 'page admin', id: `admin-${ctx.tab}` },
    h('h1', { class: 'page-title' }, TITLES[ctx.tab]), nav, body));
  return RENDER[ctx.tab](body, ctx) ?? {};
}

/** @param {AdminTab} tab */
export function adminTitle(tab) {
  return TITLES[tab];
}
