// Admin › Invitations: make a link (member or admin, how long it lasts, how many may use it),
// copy it, revoke it, and see who used each link. Reset-password links made on the People
// tab are listed here too.

import { describeError, seg } from '../api.js';
import { h, replaceChildren } from '../ui/dom.js';
import { confirmDialog } from '../ui/dialog.js';
import { shortDate } from '../ui/secret.js';
import { listLoader } from '../ui/states.js';
import { toast } from '../ui/toast.js';
import { showLink } from './admin-people.js';

/**
 * @typedef {{inviteId: string, kind: 'join'|'reset', role: string, userName: string|null, createdBy: string,
 *   createdAt: number, expiresAt: number, maxUses: number, uses: number, revokedAt: number|null,
 *   status: 'open'|'revoked'|'expired'|'used up',
 *   usedBy: {userId: string, userName: string, at: number}[]}} Invite
 */

/**
 * @param {HTMLElement} body
 * @param {{api: import('../api.js').Api}} ctx
 */
export function renderInvites(body, ctx) {
  const role = h('select', { class: 'input', id: 'invite-role' }, h('option', { value: 'member' }, 'Member'), h('option', { value: 'admin' }, 'Admin'));
  const hours = h('select', { class: 'input', id: 'invite-hours' },
    ...[['24', '1 day'], ['168', '7 days'], ['720', '30 days'], ['1', '1 hour']].map(([v, t]) => h('option', { value: v }, t)));
  const uses = h('input', { class: 'input', id: 'invite-uses', type: 'number', min: 1, max: 1000, value: '1' });
  const make = h('button', { type: 'submit', class: 'btn btn-primary', id: 'invite-make' }, 'Make link');
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true, id: 'invites-error' });
  const form = h('form', { class: 'admin-form', novalidate: true, id: 'invite-new' },
    h('div', { class: 'field' }, h('label', { class: 'label', for: 'invite-role' }, 'Joins as'), role),
    h('div', { class: 'field' }, h('label', { class: 'label', for: 'invite-hours' }, 'Valid for'), hours),
    h('div', { class: 'field' }, h('label', { class: 'label', for: 'invite-uses' }, 'How many people'), uses),
    h('div', { class: 'token-submit' }, make));
  const list = h('ul', { class: 'share-list admin-list', id: 'invites', 'aria-busy': 'true' });
  /** @type {() => Promise<void>} */
  const load = listLoader(list, error,
    async () => /** @type {{invites: Invite[]}} */ (await ctx.api.get('/admin/invites')).invites,
    (i) => inviteRow(ctx, i, load),
    () => h('li', { class: 'share-empty muted' }, 'No links made yet.'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    error.hidden = true;
    const n = Number(uses.value);
    if (!Number.isInteger(n) || n < 1 || n > 1000) {
      error.textContent = 'How many people: a whole number from 1 to 1000.';
      error.hidden = false;
      uses.focus();
      return;
    }
    make.disabled = true;
    try {
      const made = await ctx.api.post('/admin/invites', { role: role.value, expiresInHours: Number(hours.value), maxUses: n });
      showLink('Invitation link', made.link, `Anyone with it can join${role.value === 'admin' ? ' as an admin' : ''} — ${n === 1 ? 'one person' : `${n} people`}, until ${new Date(made.invite.expiresAt).toLocaleString()}.`);
      load();
    } catch (e) {
      error.textContent = describeError(e);
      error.hidden = false;
    } finally {
      make.disabled = false;
    }
  });
  replaceChildren(body, h('p', { class: 'muted small' }, 'A link lets people create their own account. It is shown once when made; revoke it to stop it working.'),
    form, error, list);
  load();
  return {};
}

/** @param {{api: import('../api.js').Api}} ctx @param {Invite} i @param {() => void} reload */
function inviteRow(ctx, i, reload) {
  // By the server's clock, which decides.
  const state = i.status;
  const what = i.kind === 'reset' ? `Password reset for ${i.userName ?? 'a removed person'}` : `Join as ${i.role}`;
  const revoke = state === 'open' ? h('button', { type: 'button', class: 'btn btn-small' }, 'Revoke') : null;
  revoke?.addEventListener('click', async () => {
    if (!(await confirmDialog({ title: 'Revoke this link?', message: 'Nobody can use it from now on. Accounts made with it stay.', confirmLabel: 'Revoke', danger: true }))) return;
    try {
      await ctx.api.del(`/admin/invites/${seg(i.inviteId)}`);
      toast('Link revoked.');
    } catch (e) {
      toast(describeError(e), { kind: 'error' });
    }
    reload();
  });
  const used = i.usedBy.length ? `used by ${i.usedBy.map((u) => u.userName).join(', ')}` : 'not used yet';
  const life = state === 'open' ? `works until ${shortDate(i.expiresAt)}` : state;
  return h('li', { class: 'share-row', dataset: { invite: i.inviteId, state } },
    h('span', { class: 'share-who' },
      h('span', { class: 'share-name' }, what, ' ',
        h('span', { class: `badge ${state === 'open' ? 'badge-editor' : 'badge-viewer'}` }, state === 'open' ? 'Open' : state)),
      h('span', { class: 'small muted' }, `${i.uses} of ${i.maxUses} · ${used} · ${life} · made by ${i.createdBy} on ${shortDate(i.createdAt)}`)),
    revoke);
}
