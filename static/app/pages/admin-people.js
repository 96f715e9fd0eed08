// Admin › People: everyone with an account — search, add (with a password, or a link for
// them to choose one), rename, make or stop being admin, send a reset-password link,
// deactivate (every session, token and open stream ends at once) or reactivate, and remove
// with their documents, folders and teams handed to someone else.

import { describeError, seg } from '../api.js';
import { h, replaceChildren } from '../ui/dom.js';
import { confirmDialog, formDialog, openModal } from '../ui/dialog.js';
import { secretBox, shortDate } from '../ui/secret.js';
import { toast } from '../ui/toast.js';

/** @typedef {import('../api.js').Api} Api */
/**
 * @typedef {{id: string, name: string, displayName: string, isAdmin: boolean, active: boolean,
 *   createdAt: number, lastSeenAt: number|null, signIn: string}} Person
 */

/**
 * People matching a search (name or display name, any case), the active first.
 * @param {Person[]} people @param {string} query
 */
export function filterPeople(people, query) {
  const q = query.trim().toLowerCase();
  return people
    .filter((p) => !q || p.name.toLowerCase().includes(q) || p.displayName.toLowerCase().includes(q))
    .sort((a, b) => Number(b.active) - Number(a.active));
}

/**
 * A link to hand on, in a dialog.
 * @param {string} title @param {string} path `/invite/…` @param {string} note
 */
export function showLink(title, path, note) {
  const ok = h('button', { type: 'button', class: 'btn btn-primary' }, 'Done');
  const { close } = openModal({ id: 'link-dialog', title, content: [
    secretBox({ id: 'link-value', label: 'Link', value: `${location.origin}${path}`, note }),
    h('div', { class: 'dialog-actions' }, ok)] });
  ok.addEventListener('click', close);
}

/**
 * @param {HTMLElement} body
 * @param {{api: Api, me: import('../session.js').Me}} ctx
 */
export function renderPeople(body, ctx) {
  /** @type {Person[]} */
  let people = [];
  const search = h('input', { class: 'input search-input', type: 'search', placeholder: 'Search people', 'aria-label': 'Search people', id: 'people-search' });
  const add = h('button', { type: 'button', class: 'btn btn-primary', id: 'person-add' }, 'Add person');
  const list = h('ul', { class: 'share-list admin-list', id: 'people', 'aria-busy': 'true' });
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const draw = () => {
    const shown = filterPeople(people, search.value);
    replaceChildren(list, ...shown.map((p) => personRow(ctx, p, people, load)));
    if (!shown.length) replaceChildren(list, h('li', { class: 'share-empty muted' }, 'Nobody matches.'));
  };
  const load = async () => {
    try {
      people = (await ctx.api.get('/admin/users')).people;
      error.hidden = true;
      draw();
    } catch (e) {
      error.textContent = describeError(e);
      error.hidden = false;
    } finally {
      list.removeAttribute('aria-busy');
    }
  };
  search.addEventListener('input', draw);
  add.addEventListener('click', async () => {
    const made = await formDialog({
      id: 'person-dialog', title: 'Add a person', submitLabel: 'Add',
      description: 'Leave the password empty to get a link they use to choose their own (valid 7 days).',
      fields: [
        { name: 'name', label: 'User name (to sign in with)', required: true, maxLength: 64 },
        { name: 'displayName', label: 'Name others see', maxLength: 200 },
        { name: 'password', label: 'Password (optional)' },
        { name: 'admin', label: 'Role', options: [{ value: '', label: 'Member' }, { value: 'yes', label: 'Admin' }] },
      ],
      onSubmit: (v) => ctx.api.post('/admin/users', {
        name: v.name.trim(), displayName: v.displayName.trim() || undefined, password: v.password || undefined, admin: v.admin === 'yes',
      }),
    });
    if (!made) return;
    toast(`${made.person.displayName} was added.`);
    if (made.setPassword) showLink(`A link for ${made.person.displayName}`, made.setPassword.link, 'Send it to them: it lets them choose their password, once, within 7 days.');
    load();
  });
  replaceChildren(body, h('div', { class: 'admin-bar' }, h('div', { class: 'search' }, search), add), error, list);
  load();
  return {};
}

/**
 * @param {{api: Api, me: import('../session.js').Me}} ctx
 * @param {Person} p @param {Person[]} everyone @param {() => void} reload
 */
function personRow(ctx, p, everyone, reload) {
  const self = p.id === ctx.me.id;
  /** @param {string} label @param {() => Promise<void>} run */
  const action = (label, run) => {
    const b = h('button', { type: 'button', class: 'btn btn-small' }, label);
    b.addEventListener('click', async () => {
      try {
        await run();
      } catch (e) {
        toast(describeError(e), { kind: 'error' });
      }
      reload();
    });
    return b;
  };
  const patch = (/** @type {object} */ body) => ctx.api.patch(`/admin/users/${seg(p.id)}`, body);
  const seen = p.lastSeenAt ? `last signed in ${shortDate(p.lastSeenAt)}` : 'never signed in';
  const actions = [
    action('Rename', async () => {
      await formDialog({ title: `Rename ${p.displayName}`, submitLabel: 'Save',
        fields: [{ name: 'displayName', label: 'Name others see', value: p.displayName, required: true, maxLength: 200 }],
        onSubmit: (v) => patch({ displayName: v.displayName.trim() }) });
    }),
    action(p.isAdmin ? 'Remove admin' : 'Make admin', async () => { await patch({ admin: !p.isAdmin }); }),
    p.active ? action('Reset link', async () => {
      const made = await ctx.api.post(`/admin/users/${seg(p.id)}/reset-link`, {});
      showLink(`Reset link for ${p.displayName}`, made.link, 'Send it to them: it lets them choose a new password, once, within 24 hours. Their sessions end when they use it.');
    }) : null,
    self ? null : p.active
      ? action('Deactivate', async () => {
        const ok = await confirmDialog({ title: `Deactivate ${p.displayName}?`, confirmLabel: 'Deactivate', danger: true,
          message: 'They are signed out everywhere at once and cannot sign in; their tokens are deleted. Their documents stay.' });
        if (ok) await patch({ active: false });
      })
      : action('Reactivate', async () => { await patch({ active: true }); }),
    self ? null : action('Remove…', async () => {
      const heirs = everyone.filter((o) => o.active && o.id !== p.id);
      await formDialog({ title: `Remove ${p.displayName}`, submitLabel: 'Remove for good',
        description: 'Their account goes. Everything they own — documents, folders, teams — is given to the person you choose; nothing is lost.',
        fields: [{ name: 'to', label: 'Give their documents to', value: ctx.me.id, options: heirs.map((o) => ({ value: o.id, label: `${o.displayName} (${o.name})` })) }],
        onSubmit: async (v) => {
          const r = await ctx.api.request('DELETE', `/admin/users/${seg(p.id)}`, { transferTo: v.to });
          toast(`${p.displayName} was removed; ${r.transferred.documents} documents handed on.`);
        } });
    }),
  ];
  return h('li', { class: `share-row${p.active ? '' : ' person-inactive'}`, dataset: { person: p.name } },
    h('span', { class: 'share-avatar', 'aria-hidden': 'true' }, (p.displayName || p.name).slice(0, 1).toUpperCase()),
    h('span', { class: 'share-who' },
      h('span', { class: 'share-name' }, p.displayName, ' ', h('span', { class: 'muted small' }, `@${p.name}`),
        p.isAdmin ? h('span', { class: 'badge badge-owner' }, 'Admin') : null,
        p.active ? null : h('span', { class: 'badge badge-viewer' }, 'Deactivated'),
        self ? h('span', { class: 'badge badge-editor' }, 'You') : null),
      h('span', { class: 'small muted' }, `${seen}${p.signIn === 'none' ? ' · no password yet' : ''}`)),
    h('span', { class: 'admin-actions' }, ...actions));
}
