// Sharing: dialog#share-dialog lists a document's (or folder's, or one bullet's) shares, adds
// a person (picked by part of their name or display name) or one of my teams, changes
// read/write, removes. A bullet's share (PROTOCOL §10) lets them see that bullet and
// everything below it, nothing else of the document.
// Every change is one PUT of the whole list; errors are shown inline and the list is re-read
// from the server. For a document, "Everyone with access" (#share-everyone) lists every person
// and team who can open it, with their role and how they got it — the server's role function's
// own answer (GET /docs/{id}/access) — also for someone who may not change the shares.

import { ApiError, describeError, seg } from '../api.js';
import { currentUser } from '../session.js';
import { h, replaceChildren, uid } from '../ui/dom.js';
import { icon } from '../ui/icons.js';
import { openModal, formDialog } from '../ui/dialog.js';
import { rememberPerson, personById } from './local-names.js';

/** @typedef {{kind: 'user'|'team', id: string, access: 'read'|'write', name?: string, displayName?: string}} Share */
/** @typedef {{teamId: string, name: string, ownerId: string, members: string[]}} Team */

/** The api client: set by main.js through configureSharing, or a same-origin default. */
/** @type {import('../api.js').Api|null} */
let apiClient = null;

/** @param {import('../api.js').Api} api */
export function configureSharing(api) {
  apiClient = api;
}

async function getApi() {
  if (!apiClient) {
    const { createApi } = await import('../api.js');
    apiClient = createApi();
  }
  return apiClient;
}

/**
 * Open the sharing dialog for a document (the editor calls this from #share-button), or with
 * `blockId` for one bullet of it and everything below it.
 * `onChanged` runs after each change saved (the editor syncs at once: a document that was
 * private until now hears of its new readers without waiting for its next quiet sync).
 * @param {string} docId
 * @param {{title?: string, blockId?: string, onChanged?: () => void}} [opts]
 */
export function openShareDialog(docId, opts = {}) {
  if (opts.blockId) {
    const text = (opts.title ?? '').trim();
    return openSharing({ kind: 'bullet', id: docId, blockId: opts.blockId, label: text.length > 60 ? `${text.slice(0, 57)}…` : text || null, onChanged: opts.onChanged });
  }
  // From the editor: take the title shown on the page (DOM contract: #doc-title).
  const shown = document.querySelector(`#editor[data-doc-id="${CSS.escape(docId)}"] #doc-title`)?.textContent ?? '';
  return openSharing({ kind: 'doc', id: docId, label: opts.title?.trim() || shown.trim() || null, onChanged: opts.onChanged });
}

/**
 * Open the sharing dialog for a folder I own: its shares apply to everything inside.
 * @param {string} folderId
 * @param {string} name
 */
export function openFolderShareDialog(folderId, name) {
  return openSharing({ kind: 'folder', id: folderId, label: name });
}

/**
 * Sort shares: teams first, then people, each by name.
 * @param {Share[]} shares
 * @param {(s: Share) => string} nameOf
 */
export function sortShares(shares, nameOf) {
  return [...shares].sort((a, b) => (a.kind === b.kind ? nameOf(a).localeCompare(nameOf(b)) : a.kind === 'team' ? -1 : 1));
}

/**
 * The list with one entry added or replaced (same kind and id → access updated).
 * @param {Share[]} shares
 * @param {Share} share
 * @returns {Share[]}
 */
export function upsertShare(shares, share) {
  const out = shares.filter((s) => !(s.kind === share.kind && s.id === share.id));
  out.push({ kind: share.kind, id: share.id, access: share.access });
  return out.map((s) => ({ kind: s.kind, id: s.id, access: s.access }));
}

/**
 * @param {{kind: 'doc'|'folder'|'bullet', id: string, blockId?: string, label: string|null, onChanged?: () => void}} target
 *   `id`: the document's or folder's; `blockId`: the bullet's (kind `bullet`)
 */
async function openSharing(target) {
  document.getElementById('share-dialog')?.closest('dialog')?.close();
  const api = await getApi();
  const me = currentUser();
  const base = target.kind === 'doc'
    ? `/docs/${seg(target.id)}/shares`
    : target.kind === 'bullet'
      ? `/docs/${seg(target.id)}/blocks/${seg(target.blockId ?? '')}/shares`
      : `/folders/${seg(target.id)}/shares`;
  const onDoc = target.kind !== 'folder';
  /** @type {Share[]} */
  let shares = [];
  /** @type {Team[]} */
  let teams = [];
  let busy = false;
  /** Set when the server says only the owner may manage these shares. */
  let denied = false;

  const listTitleId = uid('share-list');
  const errorEl = h('p', { id: 'share-error', class: 'form-error', role: 'alert', hidden: true });
  const list = h('ul', { class: 'share-list', role: 'list', 'aria-labelledby': listTitleId, id: 'share-list' });
  const status = h('p', { class: 'muted small', role: 'status', id: 'share-status' });
  const listHead = h('h3', { class: 'subhead', id: listTitleId },
    target.kind === 'doc' ? 'Shared directly' : target.kind === 'bullet' ? 'Shared with this bullet' : 'Who has access');

  // Add form: a person by user name, or one of my teams.
  const kindSel = h('select', { name: 'kind', class: 'input', 'aria-label': 'Share with' },
    h('option', { value: 'user' }, 'Person'), h('option', { value: 'team' }, 'Team'));
  const peopleList = h('datalist', { id: uid('share-people') });
  const nameInput = h('input', {
    name: 'name', class: 'input', type: 'text', placeholder: 'Name or user name, e.g. bob', autocomplete: 'off',
    autocapitalize: 'none', spellcheck: 'false', 'aria-label': 'Person (name or user name)', 'aria-describedby': 'share-error',
    list: peopleList.id,
  });
  const everyoneHead = h('h3', { class: 'subhead', id: 'share-everyone-title', hidden: !onDoc },
    target.kind === 'bullet' ? 'Everyone who sees this bullet' : 'Everyone with access');
  const everyone = h('ul', { class: 'share-list share-everyone', role: 'list', id: 'share-everyone', 'aria-labelledby': 'share-everyone-title', hidden: !onDoc });
  const teamSel = h('select', { name: 'team', class: 'input', 'aria-label': 'Team', hidden: true });
  const accessSel = accessSelect('read', 'Access for the new share');
  const addBtn = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Add');
  const addForm = h('form', { class: 'share-add', id: 'share-add', novalidate: true }, kindSel, nameInput, peopleList, teamSel, accessSel, addBtn);
  const newTeamBtn = h('button', { type: 'button', class: 'link-btn new-team', id: 'new-team', hidden: true }, '+ New team…');

  const title = target.kind === 'doc'
    ? (target.label ? `Share “${target.label}”` : 'Share document')
    : target.kind === 'bullet'
      ? (target.label ? `Share the bullet “${target.label}”` : 'Share this bullet')
      : target.label && target.label !== 'Folder' ? `Share folder “${target.label}”` : 'Share folder';
  const description = target.kind === 'doc'
    ? 'People and teams you add can open this document. “Can edit” lets them change it.'
    : target.kind === 'bullet'
      ? 'People and teams you add see this bullet and everything below it — nothing else of the document, not even its title. “Can edit” lets them change it.'
      : 'Shares of a folder apply to every document and folder inside it.';
  const { dialog, close } = openModal({
    id: 'share-dialog', title, description, wide: true,
    content: [addForm, newTeamBtn, errorEl, listHead, list, status, everyoneHead, everyone,
      h('div', { class: 'dialog-actions' }, h('button', { type: 'button', class: 'btn', onclick: () => close() }, 'Done'))],
  });
  dialog.dataset.target = target.kind === 'bullet' ? `bullet:${target.id}/${target.blockId}` : `${target.kind}:${target.id}`;

  // People to pick: by part of a name or display name, as the person types.
  let searchTimer = 0;
  let searched = '';
  nameInput.addEventListener('input', () => {
    clearTimeout(searchTimer);
    const q = nameInput.value.trim().replace(/^@/, '');
    if (q.length < 1 || q === searched) return;
    searchTimer = window.setTimeout(async () => {
      searched = q;
      try {
        const r = await api.get(`/users/search?q=${seg(q)}`);
        /** @type {{id: string, name: string, displayName: string}[]} */
        const found = r?.users ?? [];
        for (const u of found) rememberPerson(u);
        replaceChildren(peopleList, found.filter((u) => !me || u.id !== me.id).map((u) =>
          h('option', { value: u.name }, u.displayName && u.displayName !== u.name ? `${u.displayName} (@${u.name})` : `@${u.name}`)));
      } catch {
        // offline or signed out: the exact user name still works
      }
    }, 150);
  });

  kindSel.addEventListener('change', () => {
    const team = kindSel.value === 'team';
    nameInput.hidden = team;
    teamSel.hidden = !team;
    newTeamBtn.hidden = !team || denied;
    (team ? teamSel : nameInput).focus();
  });
  addForm.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (busy) return;
    showError(null);
    const access = /** @type {'read'|'write'} */ (accessSel.value);
    if (kindSel.value === 'team') {
      const teamId = teamSel.value;
      if (!teamId) return showError('You are not in any team yet — create one with “New team”.');
      await save(upsertShare(shares, { kind: 'team', id: teamId, access }), 'Team added.');
      return;
    }
    const name = nameInput.value.trim().replace(/^@/, '');
    if (!name) {
      showError('Enter the user name of the person to share with.');
      nameInput.focus();
      return;
    }
    setBusy(true);
    try {
      const user = await api.get(`/users?name=${seg(name)}`);
      rememberPerson(user);
      if (me && user.id === me.id) {
        showError('That is you — you already have access.');
        return;
      }
      setBusy(false);
      if (await save(upsertShare(shares, { kind: 'user', id: user.id, access }), `Shared with ${user.displayName || user.name}.`)) nameInput.value = '';
    } catch (e) {
      showError(e instanceof ApiError && e.status === 404 ? `No user is called “${name}”. Type part of their name and pick them from the list.` : describeError(e));
      nameInput.focus();
    } finally {
      setBusy(false);
    }
  });

  newTeamBtn.addEventListener('click', async () => {
    const team = await formDialog({
      title: 'New team',
      description: 'A team is a named group of people; share with it once instead of person by person. You are its owner and a member.',
      fields: [
        { name: 'name', label: 'Team name', placeholder: 'e.g. Writers', maxLength: 200, required: true },
        { name: 'members', label: 'Members (user names, separated by commas)', placeholder: 'e.g. bob, carol' },
      ],
      submitLabel: 'Create team',
      onSubmit: async (v) => {
        const names = [...new Set(v.members.split(/[\s,;]+/).map((n) => n.trim().replace(/^@/, '')).filter(Boolean))];
        /** @type {string[]} */
        const ids = [];
        for (const n of names) {
          try {
            const u = await api.get(`/users?name=${seg(n)}`);
            rememberPerson(u);
            ids.push(u.id);
          } catch (e) {
            throw e instanceof ApiError && e.status === 404 ? new Error(`No user is called “${n}”.`) : e;
          }
        }
        /** @type {Team} */
        let created = await api.post('/teams', { name: v.name.trim() });
        if (ids.length) created = (await api.put(`/teams/${seg(created.teamId)}/members`, { members: ids })) ?? created;
        return created;
      },
    });
    if (!team) return;
    teams = [...teams.filter((t) => t.teamId !== team.teamId), team];
    fillTeams();
    teamSel.value = team.teamId;
    status.textContent = `Team “${team.name}” created. Choose the access and press Add.`;
    teamSel.focus();
  });

  function fillTeams() {
    replaceChildren(teamSel, teams.length
      ? teams.map((t) => h('option', { value: t.teamId }, t.name))
      : [h('option', { value: '' }, 'No teams yet')]);
  }

  /** @param {string|null} msg */
  function showError(msg) {
    errorEl.textContent = msg ?? '';
    errorEl.hidden = !msg;
  }

  /** @param {boolean} b */
  function setBusy(b) {
    busy = b;
    addBtn.disabled = b;
    list.setAttribute('aria-busy', String(b));
  }

  /** @param {Share} s */
  function nameOf(s) {
    if (s.kind === 'team') return teams.find((t) => t.teamId === s.id)?.name ?? s.name ?? 'A team you are not in';
    if (me && s.id === me.id) return `${me.displayName || me.name} (you)`;
    const p = personById(s.id);
    return s.displayName ?? p?.displayName ?? s.name ?? p?.name ?? `User ${s.id.slice(0, 12)}…`;
  }

  /** @param {Share} s */
  function handleOf(s) {
    if (s.kind === 'team') return 'Team';
    const p = personById(s.id);
    return s.name ? `@${s.name}` : p ? `@${p.name}` : 'Person';
  }

  function renderList() {
    if (denied) {
      addForm.hidden = true;
      list.hidden = true;
      listHead.hidden = true;
      return;
    }
    if (!shares.length) {
      replaceChildren(list, h('li', { class: 'share-empty muted' },
        target.kind === 'doc' ? 'Not shared directly yet. Add a person or team above.' : target.kind === 'bullet' ? 'This bullet is not shared on its own yet. Add a person or team above.' : 'Not shared yet. Add a person or team above.'));
      return;
    }
    // Keep keyboard focus on the same row's control across the re-render.
    const active = document.activeElement;
    const row = active instanceof HTMLElement ? active.closest('.share-row') : null;
    const focusKey = row instanceof HTMLElement && list.contains(row)
      ? { kind: row.dataset.kind, id: row.dataset.id, remove: active instanceof HTMLElement && active.classList.contains('share-remove') }
      : null;
    replaceChildren(list, sortShares(shares, nameOf).map((s) => {
      const name = nameOf(s);
      const sel = accessSelect(s.access, `Access for ${name}`);
      sel.addEventListener('change', () => save(upsertShare(shares, { ...s, access: /** @type {'read'|'write'} */ (sel.value) }), `${name} ${sel.value === 'write' ? 'can edit' : 'can view'} now.`));
      const remove = h('button', { type: 'button', class: 'icon-btn share-remove', 'aria-label': `Remove ${name}`, title: `Remove ${name}` }, icon('close', { size: 16 }));
      remove.addEventListener('click', () => save(shares.filter((x) => !(x.kind === s.kind && x.id === s.id)), `${name} removed.`));
      return h('li', { class: 'share-row', dataset: { kind: s.kind, id: s.id } },
        h('span', { class: `share-avatar share-avatar-${s.kind}`, 'aria-hidden': 'true' }, icon(s.kind === 'team' ? 'team' : 'user', { size: 16 })),
        h('span', { class: 'share-who' }, h('span', { class: 'share-name' }, name), h('span', { class: 'share-handle muted small' }, handleOf(s))),
        sel, remove);
    }));
    if (focusKey) {
      const again = [...list.querySelectorAll('.share-row')].find((r) => r instanceof HTMLElement && r.dataset.kind === focusKey.kind && r.dataset.id === focusKey.id);
      const target = again?.querySelector(focusKey.remove ? '.share-remove' : 'select');
      if (target instanceof HTMLElement) target.focus();
      else (/** @type {HTMLElement|null} */ (list.querySelector('.share-remove')) ?? (kindSel.value === 'team' ? teamSel : nameInput)).focus();
    }
  }

  /**
   * PUT the whole list; on failure show why and re-read the server's list.
   * @param {Share[]} next
   * @param {string} done announced on success
   * @returns {Promise<boolean>}
   */
  async function save(next, done) {
    setBusy(true);
    showError(null);
    try {
      const r = await api.put(base, next.map(({ kind, id, access }) => ({ kind, id, access })));
      shares = r.shares ?? next;
      renderList();
      status.textContent = done;
      target.onChanged?.();
      void loadEveryone();
      return true;
    } catch (e) {
      showError(describeError(e));
      await reload();
      return false;
    } finally {
      setBusy(false);
    }
  }

  async function reload() {
    try {
      const r = await api.get(base);
      shares = r.shares ?? [];
      renderList();
    } catch (e) {
      if (e instanceof ApiError && e.status === 403) {
        showError(target.kind === 'doc' ? 'Only the owner of this document can change who has access.'
          : target.kind === 'bullet' ? 'Only the owner of this document can share its bullets.'
            : 'Only the owner of this folder can change who has access.');
        denied = true;
        renderList();
      } else {
        showError(describeError(e));
      }
    }
  }

  /** Every person and team who can open the document, as the server decides it. */
  async function loadEveryone() {
    if (!onDoc) return;
    try {
      const r = await api.get(target.kind === 'bullet'
        ? `/docs/${seg(target.id)}/blocks/${seg(target.blockId ?? '')}/access`
        : `/docs/${seg(target.id)}/access`);
      replaceChildren(everyone, ...everyoneRows(r, me?.id ?? null));
    } catch (e) {
      replaceChildren(everyone, h('li', { class: 'muted small' }, describeError(e)));
    }
  }

  replaceChildren(list, h('li', { class: 'muted' }, 'Loading…'));
  nameInput.focus();
  void loadEveryone();
  const [, teamsR] = await Promise.allSettled([reload(), api.get('/teams')]);
  if (teamsR.status === 'fulfilled') teams = teamsR.value?.teams ?? [];
  fillTeams();
  renderList();
}

/**
 * @param {'read'|'write'} value
 * @param {string} label
 */
function accessSelect(value, label) {
  return h('select', { class: 'input access-select', name: 'access', 'aria-label': label },
    h('option', { value: 'read', selected: value === 'read' }, 'Can view'),
    h('option', { value: 'write', selected: value === 'write' }, 'Can edit'));
}

/** @typedef {{userId: string, name: string, displayName: string, role: 'owner'|'editor'|'viewer', via: string}} PersonAccess */
/** @typedef {{teamId: string, name: string, access: 'read'|'write', via: string, members: {userId: string, name: string, displayName: string}[]}} TeamAccess */

const ROLE_LABELS = { owner: 'Owner', editor: 'Can edit', viewer: 'Can view' };

/**
 * How someone got their access, in words: `owner`, `direct`, `team:NAME`, `folder:NAME`,
 * `bullet:TEXT` (a share of that bullet, which holds the one asked about).
 * @param {string} via
 */
export function viaWords(via) {
  if (via.startsWith('bullet:')) return `through the bullet “${via.slice(7)}”`;
  if (via === 'owner') return 'owns it';
  if (via === 'direct') return 'shared directly';
  if (via.startsWith('team:')) return `through team “${via.slice(5)}”`;
  if (via.startsWith('folder:')) return `through folder “${via.slice(7)}”`;
  return via;
}

/**
 * The rows of "Everyone with access": people (owner first) with role and path, then teams
 * with their members.
 * @param {{people?: PersonAccess[], teams?: TeamAccess[]}} list @param {string|null} meId
 * @returns {HTMLElement[]}
 */
export function everyoneRows(list, meId) {
  const people = (list.people ?? []).map((p) =>
    h('li', { class: 'share-row share-person', dataset: { kind: 'user', id: p.userId, role: p.role } },
      h('span', { class: 'share-avatar share-avatar-user', 'aria-hidden': 'true' }, icon('user', { size: 16 })),
      h('span', { class: 'share-who' },
        h('span', { class: 'share-name' }, `${p.displayName || p.name}${p.userId === meId ? ' (you)' : ''}`),
        h('span', { class: 'share-handle muted small' }, `@${p.name} · ${viaWords(p.via)}`)),
      h('span', { class: `badge badge-${p.role} share-role` }, ROLE_LABELS[p.role] ?? p.role)));
  const teams = (list.teams ?? []).map((t) =>
    h('li', { class: 'share-row share-team', dataset: { kind: 'team', id: t.teamId } },
      h('span', { class: 'share-avatar share-avatar-team', 'aria-hidden': 'true' }, icon('team', { size: 16 })),
      h('span', { class: 'share-who' },
        h('span', { class: 'share-name' }, `Team ${t.name}`),
        h('span', { class: 'share-handle muted small' }, `${viaWords(t.via)} · ${t.members.length === 1 ? '1 member' : `${t.members.length} members`}: ${t.members.map((m) => m.displayName || m.name).join(', ')}`)),
      h('span', { class: 'badge share-role' }, t.access === 'write' ? 'Can edit' : 'Can view')));
  return [...people, ...teams];
}
