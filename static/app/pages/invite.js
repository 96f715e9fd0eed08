// The page of an invitation or password-reset link (/invite/{token}): it asks the server
// what the link is for, then lets the person choose a user name and password (join) or a
// new password (reset), and signs them in. A link that is revoked, expired or used up says
// so, with who to ask; what was typed stays in the form when the server refuses it.

import { ApiError, describeError, seg } from '../api.js';
import { setUser } from '../session.js';
import { h, replaceChildren } from '../ui/dom.js';
import { logo } from '../ui/icons.js';

/**
 * @typedef {{kind: 'join'|'reset', role: string, userName: string|null, expiresAt: number}} InviteFace
 */

/**
 * A field with a label and an optional hint under it.
 * @param {string} id @param {string} label @param {HTMLInputElement} input @param {string} [hint]
 */
export function field(id, label, input, hint) {
  input.id = id;
  const hintId = hint ? `${id}-hint` : undefined;
  if (hintId) input.setAttribute('aria-describedby', hintId);
  return h('div', { class: 'field' },
    h('label', { for: id, class: 'label' }, label),
    input,
    hint ? h('p', { id: hintId, class: 'small muted' }, hint) : null);
}

/**
 * What a person must fix before sending, or null.
 * @param {{kind: 'join'|'reset', name: string, password: string, repeat: string}} v
 * @returns {{message: string, field: 'name'|'password'|'repeat'}|null}
 */
export function inviteProblem(v) {
  if (v.kind === 'join' && !/^[A-Za-z0-9_.-]{1,64}$/.test(v.name)) {
    return { message: 'Choose a user name of letters, digits, “_”, “-” or “.” (at most 64).', field: 'name' };
  }
  if ([...v.password].length < 8) return { message: 'Choose a password of at least 8 characters.', field: 'password' };
  if (v.password !== v.repeat) return { message: 'The two passwords differ.', field: 'repeat' };
  return null;
}

/**
 * @param {HTMLElement} root
 * @param {{api: import('../api.js').Api, token: string, onSignedIn: () => void}} ctx
 */
export function renderInvite(root, ctx) {
  const card = h('div', { class: 'login-card', id: 'invite' }, h('div', { class: 'login-mark' }, logo()),
    h('p', { class: 'muted', 'aria-busy': 'true' }, 'Opening the link…'));
  replaceChildren(root, h('section', { class: 'login-page' }, card));
  let gone = false;
  ctx.api.get(`/invites/${seg(ctx.token)}`, { quiet401: true }).then(
    (/** @type {InviteFace} */ face) => { if (!gone) showForm(card, ctx, face); },
    (e) => { if (!gone) showDead(card, e); },
  );
  return { destroy: () => { gone = true; } };
}

/** @param {HTMLElement} card @param {unknown} e */
function showDead(card, e) {
  const why = e instanceof ApiError && e.status === 404
    ? 'This link does not exist. Check that it was copied whole.'
    : describeError(e);
  replaceChildren(card, h('div', { class: 'login-mark' }, logo()),
    h('h1', { class: 'login-title' }, 'This link cannot be used'),
    h('p', { class: 'form-error', role: 'alert', id: 'invite-error' }, why),
    h('p', { class: 'login-sub' }, h('a', { href: '/login' }, 'Go to sign in')));
}

/**
 * @param {HTMLElement} card
 * @param {{api: import('../api.js').Api, token: string, onSignedIn: () => void}} ctx
 * @param {InviteFace} face
 */
function showForm(card, ctx, face) {
  const joining = face.kind === 'join';
  const input = (/** @type {Record<string, any>} */ attrs) => h('input', { class: 'input', required: true, ...attrs });
  const name = input({ name: 'name', autocomplete: 'username', autocapitalize: 'none', spellcheck: 'false' });
  const display = input({ name: 'displayName', autocomplete: 'name', required: false });
  const password = input({ name: 'password', type: 'password', autocomplete: 'new-password' });
  const repeat = input({ name: 'repeat', type: 'password', autocomplete: 'new-password' });
  const error = h('p', { id: 'invite-error', class: 'form-error', role: 'alert', hidden: true });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary btn-block' }, joining ? 'Create my account' : 'Set my password');
  const form = h('form', { class: 'login-form', novalidate: true, id: 'invite-form' },
    joining ? field('invite-name', 'User name', name, 'What you sign in with: letters, digits, “_”, “-”, “.”.') : null,
    joining ? field('invite-display', 'Your name', display, 'What others see beside your edits.') : null,
    field('invite-password', joining ? 'Password' : 'New password', password, 'At least 8 characters; not a common one, not your user name.'),
    field('invite-repeat', 'Repeat the password', repeat),
    error, submit);
  /** @param {string} msg @param {HTMLInputElement} [focus] */
  const fail = (msg, focus) => {
    error.textContent = msg;
    error.hidden = false;
    for (const el of [name, password, repeat]) el.removeAttribute('aria-invalid');
    if (focus) {
      focus.setAttribute('aria-invalid', 'true');
      focus.focus();
    }
  };
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const problem = inviteProblem({ kind: face.kind, name: name.value.trim(), password: password.value, repeat: repeat.value });
    if (problem) return fail(problem.message, { name, password, repeat }[problem.field]);
    submit.disabled = true;
    error.hidden = true;
    try {
      const body = joining
        ? { name: name.value.trim(), displayName: display.value.trim() || undefined, password: password.value }
        : { password: password.value };
      const me = await ctx.api.post(`/invites/${seg(ctx.token)}/accept`, body, { quiet401: true });
      setUser(me);
      ctx.onSignedIn();
    } catch (e) {
      const taken = e instanceof ApiError && e.status === 409 && /exists|taken/.test(e.message);
      fail(taken ? 'That user name is taken — choose another.' : describeError(e), taken ? name : undefined);
    } finally {
      submit.disabled = false;
    }
  });
  const title = joining ? 'Join docsync' : `A new password for ${face.userName ?? 'your account'}`;
  const sub = joining
    ? `You were invited${face.role === 'admin' ? ' as an admin' : ''}. Choose how you sign in.`
    : 'Choose a new password; you will be signed out everywhere else.';
  const sso = h('div', { class: 'login-sso', id: 'invite-sso', hidden: true });
  if (joining) {
    ctx.api.get('/auth/methods', { quiet401: true }).then((/** @type {{password: boolean, sso: {label: string, startUrl: string}|null}} */ m) => {
      if (!m.sso) return;
      const href = `${m.sso.startUrl}?invite=${encodeURIComponent(ctx.token)}`;
      replaceChildren(sso, h('a', { class: 'btn btn-primary btn-block', id: 'invite-sso-start', href, dataset: { external: '' } }, `Join with ${m.sso.label}`),
        m.password ? h('p', { class: 'login-or muted small' }, 'or choose a user name and password') : null);
      sso.hidden = false;
      if (!m.password) form.hidden = true;
    }).catch(() => {});
  }
  replaceChildren(card, h('div', { class: 'login-mark' }, logo()),
    h('h1', { class: 'login-title', id: 'invite-title' }, title),
    h('p', { class: 'muted login-sub' }, sub,
      ' ', h('span', { class: 'small' }, `The link works until ${new Date(face.expiresAt).toLocaleString()}.`)),
    sso, form);
  (joining ? name : password).focus();
}
