// Admin › Teams: every team with its members by name; members are added by searching for a
// person and removed with a click (the team's owner always stays). Shares to a team reach
// its members at once.

import { describeError, seg } from '../api.js';
import { h, replaceChildren } from '../ui/dom.js';
import { formDialog } from '../ui/dialog.js';
import { listLoader } from '../ui/states.js';
import { toast } from '../ui/toast.js';

/**
 * @typedef {{id: string, name: string, displayName: string}} Member
 * @typedef {{teamId: string, name: string, ownerId: string, members: Member[]}} Team
 */

/**
 * @param {HTMLElement} body
 * @param {{api: import('../api.js').Api}} ctx
 */
export function renderTeams(body, ctx) {
  const list = h('div', { class: 'admin-teams', id: 'teams', 'aria-busy': 'true' });
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  /** @type {() => Promise<void>} */
  const load = listLoader(list, error,
    async () => /** @type {{teams: Team[]}} */ (await ctx.api.get('/admin/teams')).teams,
    (t) => teamCard(ctx, t, load),
    () => h('p', { class: 'muted admin-empty' }, 'No teams yet. Make one to share documents and folders with a group at once.'));
  const add = h('button', { type: 'button', class: 'btn btn-primary', id: 'team-add' }, 'New team');
  add.addEventListener('click', async () => {
    const made = await formDialog({
      id: 'team-dialog', title: 'New team', submitLabel: 'Create',
      description: 'You own the team; add its members below.',
      fields: [{ name: 'name', label: 'Name', required: true, maxLength: 200 }],
      onSubmit: (v) => ctx.api.post('/teams', { name: v.name.trim() }),
    });
    if (made) load();
  });
  replaceChildren(body, h('div', { class: 'admin-bar' }, h('p', { class: 'muted small' }, 'Shares to a team reach its members at once.'), add), error, list);
  load();
  return {};
}

/** @param {{api: import('../api.js').Api}} ctx @param {Team} t @param {() => void} reload */
function teamCard(ctx, t, reload) {
  /** @param {string[]} ids */
  const save = async (ids) => {
    try {
      await ctx.api.put(`/admin/teams/${seg(t.teamId)}/members`, { members: ids });
    } catch (e) {
      toast(describeError(e), { kind: 'error' });
    }
    reload();
  };
  const others = t.members.filter((m) => m.id !== t.ownerId).map((m) => m.id);
  const rows = t.members.map((m) => {
    const owner = m.id === t.ownerId;
    const remove = owner ? h('span', { class: 'badge badge-owner' }, 'Owner')
      : h('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Remove ${m.displayName} from ${t.name}` }, 'Remove');
    if (!owner) remove.addEventListener('click', () => save(others.filter((id) => id !== m.id)));
    return h('li', { class: 'share-row', dataset: { member: m.name } },
      h('span', { class: 'share-who' }, h('span', { class: 'share-name' }, m.displayName), h('span', { class: 'small muted' }, `@${m.name}`)),
      remove);
  });
  const listId = `team-people-${t.teamId}`;
  const who = h('input', { class: 'input', list: listId, placeholder: 'Add a person by name', 'aria-label': `Add a person to ${t.name}`, autocomplete: 'off' });
  const options = h('datalist', { id: listId });
  /** @type {{id: string, name: string, displayName: string}[]} */
  let found = [];
  who.addEventListener('input', async () => {
    const q = who.value.trim();
    if (q.length < 1) return;
    try {
      found = (await ctx.api.get(`/users/search?q=${encodeURIComponent(q)}`)).users;
      replaceChildren(options, ...found.map((u) => h('option', { value: u.name }, u.displayName)));
    } catch {
      // The list stays as it was; the add button says what is wrong.
    }
  });
  const add = h('button', { type: 'submit', class: 'btn btn-small' }, 'Add');
  const form = h('form', { class: 'team-add', novalidate: true }, who, options, add);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const name = who.value.trim().toLowerCase();
    const u = found.find((f) => f.name.toLowerCase() === name || f.displayName.toLowerCase() === name);
    if (!u) {
      toast('Pick a person from the list.', { kind: 'error' });
      return;
    }
    save([...others, u.id]);
  });
  return h('section', { class: 'team-card', dataset: { team: t.name } },
    h('h2', { class: 'section-title' }, t.name, ' ', h('span', { class: 'count' }, `${t.members.length}`)),
    h('ul', { class: 'share-list' }, ...rows), form);
}
