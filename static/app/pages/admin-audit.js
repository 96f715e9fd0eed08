// Admin › Audit log: every security event, newest first, filtered by who did it and what
// was done, a page at a time; the same filter downloads as JSON lines.

import { describeError } from '../api.js';
import { h, replaceChildren } from '../ui/dom.js';
import { shortDate } from '../ui/secret.js';

/**
 * @typedef {{id: number, at: number, actorId: string|null, actorName: string|null, action: string,
 *   target: string, ip: string, detail: Record<string, unknown>}} AuditRow
 */

/** The kinds of events, for the filter (a first part matches all its actions). */
export const AUDIT_ACTIONS = ['login', 'login.failed', 'logout', 'password', 'session.ended', 'token', 'invite',
  'user', 'admin', 'share', 'document', 'webhook'];

/**
 * The query string for a filter and a page.
 * @param {{actor?: string, action?: string, before?: number|null, format?: string}} f
 */
export function auditQuery(f) {
  const q = new URLSearchParams();
  if (f.actor?.trim()) q.set('actor', f.actor.trim());
  if (f.action) q.set('action', f.action);
  if (f.before != null) q.set('before', String(f.before));
  if (f.format) q.set('format', f.format);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/**
 * One line for a row's detail (`{"method":"password"}` → "method: password"); moments
 * (`…At` in ms) as dates.
 * @param {Record<string, unknown>} detail
 */
export function detailText(detail) {
  return Object.entries(detail ?? {})
    .map(([k, v]) => {
      if (k.endsWith('At') && typeof v === 'number') return `${k}: ${shortDate(v)}`;
      return `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`;
    })
    .join(' · ');
}

/**
 * @param {HTMLElement} body
 * @param {{api: import('../api.js').Api}} ctx
 */
export function renderAudit(body, ctx) {
  const actor = h('input', { class: 'input', id: 'audit-actor', placeholder: 'User name', autocomplete: 'off' });
  const action = h('select', { class: 'input', id: 'audit-action' }, h('option', { value: '' }, 'Every event'),
    ...AUDIT_ACTIONS.map((a) => h('option', { value: a }, a)));
  const apply = h('button', { type: 'submit', class: 'btn' }, 'Show');
  const exportLink = h('a', { class: 'btn', id: 'audit-export', download: 'docsync-audit.jsonl', dataset: { external: '' } }, 'Export JSON lines');
  const form = h('form', { class: 'admin-form', novalidate: true, id: 'audit-filter' },
    h('div', { class: 'field' }, h('label', { class: 'label', for: 'audit-actor' }, 'Who'), actor),
    h('div', { class: 'field' }, h('label', { class: 'label', for: 'audit-action' }, 'What'), action),
    h('div', { class: 'token-submit' }, apply, ' ', exportLink));
  const rows = h('tbody', { id: 'audit-rows' });
  const table = h('table', { class: 'audit-table' },
    h('thead', null, h('tr', null, ...['When', 'Who', 'What', 'On', 'From', 'Detail'].map((t) => h('th', { scope: 'col' }, t)))), rows);
  const more = h('button', { type: 'button', class: 'btn', id: 'audit-more', hidden: true }, 'Older events');
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  /** @type {number|null} */
  let next = null;
  /** @param {boolean} fresh */
  const load = async (fresh) => {
    const f = { actor: actor.value, action: action.value };
    exportLink.setAttribute('href', `/api/v1/admin/audit${auditQuery({ ...f, format: 'jsonl' })}`);
    try {
      const page = await ctx.api.get(`/admin/audit${auditQuery({ ...f, before: fresh ? null : next })}`);
      if (fresh) rows.replaceChildren();
      for (const r of /** @type {AuditRow[]} */ (page.entries)) rows.append(auditRow(r));
      if (fresh && !page.entries.length) rows.append(h('tr', null, h('td', { colspan: 6, class: 'muted' }, 'No events match.')));
      next = page.next;
      more.hidden = next == null;
      error.hidden = true;
    } catch (e) {
      error.textContent = describeError(e);
      error.hidden = false;
    }
  };
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    load(true);
  });
  more.addEventListener('click', () => load(false));
  replaceChildren(body, form, error, h('div', { class: 'audit-scroll' }, table), more);
  load(true);
  return {};
}

/** @param {AuditRow} r */
function auditRow(r) {
  const failed = r.action.endsWith('.failed');
  return h('tr', { class: failed ? 'audit-failed' : undefined, dataset: { action: r.action } },
    h('td', { class: 'nowrap' }, shortDate(r.at)),
    h('td', null, r.actorName ?? '—'),
    h('td', null, h('code', null, r.action)),
    h('td', null, r.target),
    h('td', { class: 'nowrap' }, r.ip),
    h('td', { class: 'small muted' }, detailText(r.detail)));
}
