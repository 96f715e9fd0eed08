// The person's own account (/settings): the name others see, the password, where they are
// signed in (each other session can be signed out), and API tokens with a scope and an
// expiry (PROTOCOL §9). Each section loads and fails on its own; what was typed stays in
// its form when the server refuses it.

import { describeError, seg } from '../api.js';
import { setUser } from '../session.js';
import { h, replaceChildren } from '../ui/dom.js';
import { confirmDialog } from '../ui/dialog.js';
import { secretBox, shortDate } from '../ui/secret.js';
import { listLoader } from '../ui/states.js';
import { toast } from '../ui/toast.js';
import { field } from './invite.js';

/** @typedef {import('../api.js').Api} Api */
/** @typedef {import('../session.js').Me} Me */
/** @typedef {{sessionId: string, createdAt: number, expiresAt: number, userAgent: string, current: boolean}} Session */
/** @typedef {{tokenId: string, label: string, scope: 'read'|'write'|'admin', createdAt: number, expiresAt: number|null}} Token */

/**
 * A short name for a browser from its user agent ("Chrome on Linux").
 * @param {string} ua
 */
export function browserName(ua) {
  if (!ua) return 'Unknown browser';
  const browser = /Edg\//.test(ua) ? 'Edge' : /Firefox\//.test(ua) ? 'Firefox' : /Chrom(e|ium)\//.test(ua) ? 'Chrome'
    : /Safari\//.test(ua) ? 'Safari' : null;
  const os = /Android/.test(ua) ? 'Android' : /iPhone|iPad/.test(ua) ? 'iOS' : /Windows/.test(ua) ? 'Windows'
    : /Mac OS X/.test(ua) ? 'macOS' : /Linux/.test(ua) ? 'Linux' : null;
  if (browser && os) return `${browser} on ${os}`;
  return browser ?? os ?? ua.slice(0, 60);
}

/**
 * @param {HTMLElement} root
 * @param {{api: Api, me: Me, onChanged: (me: Me) => void}} ctx
 */
export function renderSettings(root, ctx) {
  const sessions = sessionsSection(ctx);
  replaceChildren(root, h('section', { class: 'page page-narrow settings', id: 'settings' },
    h('h1', { class: 'page-title' }, 'Your account'),
    h('p', { class: 'muted' }, `Signed in as ${ctx.me.name}.`),
    profileSection(ctx), passwordSection(ctx, () => sessions.reload()), sessions.el, tokensSection(ctx), exportSection()));
  return {};
}

/**
 * "Export everything": one zip of every document the person can read (Markdown and OPML
 * each, shared bullets as their part, manifest.json with folders and who has access), built
 * by the server (`GET /export`) and saved as a download.
 */
function exportSection() {
  const button = h('button', { type: 'button', class: 'btn', id: 'export-everything' }, 'Export everything');
  const status = h('p', { class: 'small muted', id: 'export-status', role: 'status', 'aria-live': 'polite' });
  button.addEventListener('click', async () => {
    button.disabled = true;
    status.classList.remove('form-error');
    status.textContent = 'Preparing your export…';
    try {
      const r = await fetch('/api/v1/export', { credentials: 'same-origin' });
      if (!r.ok) {
        const body = await r.json().catch(() => null);
        throw new Error(body?.error?.message ?? `The server answered ${r.status}.`);
      }
      const blob = await r.blob();
      const url = URL.createObjectURL(blob);
      const a = h('a', { href: url, download: `docsync-export-${new Date().toISOString().slice(0, 10)}.zip`, hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      status.textContent = `Your export is downloaded (${(blob.size / 1024).toLocaleString(undefined, { maximumFractionDigits: 0 })} KB).`;
    } catch (e) {
      status.classList.add('form-error');
      status.textContent = navigator.onLine ? `No export: ${e instanceof Error ? e.message : String(e)}` : 'You are offline — the export needs a connection.';
    } finally {
      button.disabled = false;
    }
  });
  return section('settings-export', 'Your data',
    'Every document you can read, as Markdown and OPML, with a manifest of your folders and who has access to what — one zip file.',
    h('div', null, button), status);
}

/**
 * A section: a heading, its body, and an error line of its own.
 * @param {string} id @param {string} title @param {string} intro @param {...Node} body
 */
function section(id, title, intro, ...body) {
  return h('section', { class: 'settings-section', id, 'aria-labelledby': `${id}-title` },
    h('h2', { class: 'section-title', id: `${id}-title` }, title),
    intro ? h('p', { class: 'small muted' }, intro) : null,
    ...body);
}

/** @param {{api: Api, me: Me, onChanged: (me: Me) => void}} ctx */
function profileSection(ctx) {
  const name = h('input', { class: 'input', name: 'displayName', value: ctx.me.displayName, maxlength: 200, autocomplete: 'name' });
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  const save = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save');
  const form = h('form', { class: 'settings-form', novalidate: true }, field('settings-display', 'Your name', name, 'Shown to others beside your edits, in shares and history.'), error, h('div', null, save));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    error.hidden = true;
    if (!name.value.trim()) {
      error.textContent = 'Your name cannot be empty.';
      error.hidden = false;
      name.focus();
      return;
    }
    save.disabled = true;
    try {
      const me = await ctx.api.patch('/me', { displayName: name.value.trim() });
      setUser(me);
      ctx.onChanged(me);
      toast('Your name is saved.');
    } catch (e) {
      error.textContent = describeError(e);
      error.hidden = false;
    } finally {
      save.disabled = false;
    }
  });
  return section('settings-profile', 'Profile', '', form);
}

/** @param {{api: Api}} ctx @param {() => void} changed the other sessions have ended */
function passwordSection(ctx, changed) {
  const mk = (/** @type {string} */ n, /** @type {string} */ ac) => h('input', { class: 'input', type: 'password', name: n, autocomplete: ac, required: true });
  const current = mk('current', 'current-password');
  const next = mk('new', 'new-password');
  const repeat = mk('repeat', 'new-password');
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true, id: 'password-error' });
  const save = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Change password');
  const form = h('form', { class: 'settings-form', novalidate: true, id: 'password-form' },
    field('settings-current', 'Current password', current),
    field('settings-new', 'New password', next, 'At least 8 characters; not a common one, not your user name.'),
    field('settings-repeat', 'Repeat the new password', repeat), error, h('div', null, save));
  /** @param {string} msg @param {HTMLInputElement} [focus] */
  const fail = (msg, focus) => {
    error.textContent = msg;
    error.hidden = false;
    focus?.focus();
  };
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    error.hidden = true;
    if (!current.value) return fail('Enter your current password.', current);
    if ([...next.value].length < 8) return fail('Choose a new password of at least 8 characters.', next);
    if (next.value !== repeat.value) return fail('The two new passwords differ.', repeat);
    save.disabled = true;
    try {
      await ctx.api.post('/me/password', { current: current.value, new: next.value });
      for (const i of [current, next, repeat]) i.value = '';
      toast('Password changed. You were signed out everywhere else.');
      changed();
    } catch (e) {
      fail(describeError(e), undefined);
    } finally {
      save.disabled = false;
    }
  });
  return section('settings-password', 'Password', 'Changing it signs you out of every other browser and device.', form);
}

/** @param {{api: Api}} ctx @returns {{el: HTMLElement, reload: () => void}} */
function sessionsSection(ctx) {
  const list = h('ul', { class: 'share-list settings-list', id: 'sessions', 'aria-busy': 'true' });
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true });
  /** @type {() => Promise<void>} */
  const load = listLoader(list, error,
    async () => {
      const { sessions } = /** @type {{sessions: Session[]}} */ (await ctx.api.get('/me/sessions'));
      error.hidden = true;
      return sessions;
    },
    (s) => sessionRow(ctx, s, load),
    () => h('li', { class: 'share-empty muted' }, 'Signed in with an API token only.'));
  load();
  const el = section('settings-sessions', 'Signed in on', 'Every browser signed in as you. Sign out one you do not recognise or no longer use.', list, error);
  return { el, reload: load };
}

/** @param {{api: Api}} ctx @param {Session} s @param {() => void} reload */
function sessionRow(ctx, s, reload) {
  const out = s.current ? h('span', { class: 'badge badge-owner' }, 'This browser')
    : h('button', { type: 'button', class: 'btn btn-small' }, 'Sign out');
  out.addEventListener('click', async () => {
    if (s.current) return;
    try {
      await ctx.api.del(`/me/sessions/${seg(s.sessionId)}`);
      toast('Signed out there.');
    } catch (e) {
      toast(describeError(e), { kind: 'error' });
    }
    reload();
  });
  return h('li', { class: 'share-row', dataset: { session: s.sessionId } },
    h('span', { class: 'share-who' },
      h('span', { class: 'share-name' }, browserName(s.userAgent)),
      h('span', { class: 'small muted' }, `Signed in ${shortDate(s.createdAt)} · until ${shortDate(s.expiresAt)}`)),
    out);
}

/** @param {{api: Api}} ctx */
function tokensSection(ctx) {
  const list = h('ul', { class: 'share-list settings-list', id: 'tokens', 'aria-busy': 'true' });
  const shown = h('div', { id: 'token-shown' });
  const error = h('p', { class: 'form-error', role: 'alert', hidden: true, id: 'token-error' });
  const label = h('input', { class: 'input', name: 'label', maxlength: 200, placeholder: 'e.g. Backup script', autocomplete: 'off' });
  const scope = h('select', { class: 'input', name: 'scope' },
    h('option', { value: 'read' }, 'Read only'), h('option', { value: 'write', selected: true }, 'Read and write'),
    h('option', { value: 'admin' }, 'Everything, admin pages too'));
  const days = h('select', { class: 'input', name: 'expires' },
    ...[['30', '30 days'], ['90', '90 days'], ['365', 'A year'], ['', 'Never']].map(([v, t]) => h('option', { value: v }, t)));
  const make = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Create token');
  const form = h('form', { class: 'settings-form token-form', novalidate: true, id: 'token-form' },
    field('token-label', 'Name', label), h('div', { class: 'field' }, h('label', { class: 'label', for: 'token-scope' }, 'May'), Object.assign(scope, { id: 'token-scope' })),
    h('div', { class: 'field' }, h('label', { class: 'label', for: 'token-expires' }, 'Expires'), Object.assign(days, { id: 'token-expires' })),
    h('div', { class: 'token-submit' }, make));
  /** @type {() => Promise<void>} */
  const load = listLoader(list, error,
    async () => /** @type {{tokens: Token[]}} */ (await ctx.api.get('/tokens')).tokens,
    (t) => tokenRow(ctx, t, load),
    () => h('li', { class: 'share-empty muted' }, 'No API tokens.'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    error.hidden = true;
    make.disabled = true;
    try {
      const made = await ctx.api.post('/tokens', {
        label: label.value.trim(), scope: scope.value, expiresInDays: days.value ? Number(days.value) : undefined,
      });
      replaceChildren(shown, secretBox({ id: 'token-secret', label: `Token “${label.value.trim() || 'unnamed'}”`, value: made.token,
        note: 'Shown this once: copy it now. Send it as “Authorization: Bearer …”.' }));
      label.value = '';
      load();
    } catch (e) {
      error.textContent = describeError(e);
      error.hidden = false;
    } finally {
      make.disabled = false;
    }
  });
  load();
  return section('settings-tokens', 'API tokens', 'For scripts and integrations. A read-only token can never change anything.', form, error, shown, list);
}

/** @param {{api: Api}} ctx @param {Token} t @param {() => void} reload */
function tokenRow(ctx, t, reload) {
  const del = h('button', { type: 'button', class: 'btn btn-small' }, 'Delete');
  del.addEventListener('click', async () => {
    const ok = await confirmDialog({ title: 'Delete this token?', message: `Anything using “${t.label || 'unnamed'}” stops working at once.`, confirmLabel: 'Delete', danger: true });
    if (!ok) return;
    try {
      await ctx.api.del(`/tokens/${seg(t.tokenId)}`);
    } catch (e) {
      toast(describeError(e), { kind: 'error' });
    }
    reload();
  });
  const scopeName = { read: 'read only', write: 'read and write', admin: 'everything' }[t.scope] ?? t.scope;
  const ends = t.expiresAt ? `until ${shortDate(t.expiresAt)}` : 'never expires';
  return h('li', { class: 'share-row', dataset: { token: t.tokenId } },
    h('span', { class: 'share-who' },
      h('span', { class: 'share-name' }, t.label || 'Unnamed token'),
      h('span', { class: 'small muted' }, `${scopeName} · made ${shortDate(t.createdAt)} · ${ends}`)),
    del);
}
