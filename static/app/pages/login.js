// The sign-in page: form#login with [name=username], [name=password] and #login-error.

import { ApiError } from '../api.js';
import { setUser } from '../session.js';
import { h, replaceChildren } from '../ui/dom.js';
import { logo } from '../ui/icons.js';

/**
 * A readable sentence for a failed sign-in.
 * @param {unknown} e
 * @returns {string}
 */
export function loginErrorMessage(e) {
  if (e instanceof ApiError) {
    if (e.offline) return 'Cannot reach the server. Check your connection and try again.';
    if (e.status === 401) return 'Wrong user name or password.';
    if (e.status === 429) return `Too many attempts — try again in ${formatWait(e.retryAfter)}.`;
    if (e.status === 403 && e.code === 'deactivated') return 'This account is deactivated. Ask an admin of this docsync.';
    if (e.status === 403) return 'Sign-in was refused by the server (cross-origin request).';
    if (e.status >= 500) return 'The server had a problem. Please try again in a moment.';
    return e.message;
  }
  return 'Something went wrong. Please try again.';
}

/** Why a single sign-on came back to this page (`/login?sso=REASON`), in words. */
const SSO_REASONS = /** @type {Record<string, string>} */ ({
  unreachable: 'The sign-in provider cannot be reached right now. Try again in a while.',
  denied: 'Sign-in was cancelled at the provider.',
  state: 'That sign-in was started in another browser, took too long, or was already used. Start again.',
  refused: 'The provider refused the sign-in. Start again.',
  invalid: 'The provider\u2019s answer could not be verified, so you were not signed in.',
  deactivated: 'This account is deactivated. Ask an admin of this docsync.',
  not_invited: 'There is no account here for you yet. Ask an admin for an invitation link.',
  invite: 'That invitation link cannot be used any more (expired, used up or revoked). Ask an admin for a new one.',
});

/**
 * The sentence for `?sso=REASON`, or null.
 * @param {string|null} reason
 */
export function ssoMessage(reason) {
  if (!reason) return null;
  return SSO_REASONS[reason] ?? 'Single sign-on did not work. Try again.';
}

/**
 * "N minutes" (rounded up) or "N seconds" under a minute; "a few minutes" when unknown.
 * @param {number|null} seconds
 */
export function formatWait(seconds) {
  if (seconds == null || !Number.isFinite(seconds)) return 'a few minutes';
  if (seconds < 60) {
    const s = Math.max(1, Math.ceil(seconds));
    return `${s} second${s === 1 ? '' : 's'}`;
  }
  const m = Math.ceil(seconds / 60);
  return `${m} minute${m === 1 ? '' : 's'}`;
}

/**
 * @param {HTMLElement} root
 * @param {{api: import('../api.js').Api, next: string, onLoggedIn: () => void}} ctx
 */
export function renderLogin(root, ctx) {
  const error = h('p', { id: 'login-error', class: 'form-error', role: 'alert', hidden: true });
  const username = h('input', {
    id: 'login-username', name: 'username', class: 'input', type: 'text', autocomplete: 'username',
    autocapitalize: 'none', spellcheck: 'false', required: true, 'aria-describedby': 'login-error',
  });
  const password = h('input', {
    id: 'login-password', name: 'password', class: 'input', type: 'password', autocomplete: 'current-password',
    required: true, 'aria-describedby': 'login-error',
  });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary btn-block' }, 'Sign in');
  const form = h('form', { id: 'login', class: 'login-form', novalidate: true, 'aria-labelledby': 'login-title' },
    h('div', { class: 'field' }, h('label', { for: 'login-username', class: 'label' }, 'User name'), username),
    h('div', { class: 'field' }, h('label', { for: 'login-password', class: 'label' }, 'Password'), password),
    error,
    submit);

  /** @param {string} msg @param {HTMLInputElement} [focus] */
  const fail = (msg, focus) => {
    error.textContent = msg;
    error.hidden = false;
    if (focus) {
      focus.setAttribute('aria-invalid', 'true');
      focus.focus();
    }
  };

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    username.removeAttribute('aria-invalid');
    password.removeAttribute('aria-invalid');
    if (!username.value.trim()) return fail('Enter your user name.', username);
    if (!password.value) return fail('Enter your password.', password);
    submit.disabled = true;
    submit.textContent = 'Signing in…';
    error.hidden = true;
    try {
      const me = await ctx.api.post('/auth/login', { username: username.value.trim(), password: password.value }, { quiet401: true });
      setUser(me);
      ctx.onLoggedIn();
    } catch (e) {
      const wrong = e instanceof ApiError && e.status === 401;
      if (wrong) password.value = '';
      fail(loginErrorMessage(e), wrong ? password : undefined);
    } finally {
      submit.disabled = false;
      submit.textContent = 'Sign in';
    }
  });

  const sso = h('div', { class: 'login-sso', id: 'login-sso', hidden: true });
  const reason = ssoMessage(new URLSearchParams(location.search).get('sso'));
  if (reason) fail(reason);
  replaceChildren(root, h('section', { class: 'login-page' },
    h('div', { class: 'login-card' },
      h('div', { class: 'login-mark' }, logo()),
      h('h1', { id: 'login-title', class: 'login-title' }, 'Sign in to docsync'),
      h('p', { class: 'muted login-sub' }, 'Shared outlines, edited together — nothing you type is ever lost.'),
      sso, form)));
  username.focus();
  // What this server offers besides passwords (or instead of them).
  ctx.api.get('/auth/methods', { quiet401: true }).then((/** @type {{password: boolean, sso: {label: string, startUrl: string}|null}} */ m) => {
    if (m.sso) {
      const href = `${m.sso.startUrl}?next=${encodeURIComponent(ctx.next)}`;
      replaceChildren(sso, h('a', { class: 'btn btn-primary btn-block', id: 'sso-start', href, dataset: { external: '' } }, `Sign in with ${m.sso.label}`),
        m.password ? h('p', { class: 'login-or muted small' }, 'or with your password') : null);
      sso.hidden = false;
      submit.classList.remove('btn-primary');
    }
    if (!m.password) {
      for (const el of [...form.children]) if (el !== error) /** @type {HTMLElement} */ (el).hidden = true;
    }
  }).catch(() => {});
  return {};
}
