// Who is signed in (GET /api/v1/me) and this tab's clientId. The last known user is kept in
// localStorage so the app can still open documents stored on this device while offline.

/** @typedef {{id: string, name: string, displayName: string, isAdmin: boolean}} Me */

const ME_KEY = 'docsync.me';
const CLIENT_KEY = 'docsync.clientId';

/** A random UUID v4 (crypto.randomUUID needs a secure context; fall back to getRandomValues). */
export function uuid() {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * This tab's client id (`cl_` + uuid), kept in sessionStorage: a reload keeps it, a new tab
 * gets its own.
 * @param {Pick<Storage, 'getItem'|'setItem'>} [storage]
 */
export function getClientId(storage = sessionStorage) {
  let id = null;
  try {
    id = storage.getItem(CLIENT_KEY);
  } catch {
    // storage blocked: a fresh id per page load is still correct
  }
  if (!id || !/^cl_[0-9a-f-]{36}$/.test(id)) {
    id = `cl_${uuid()}`;
    try {
      storage.setItem(CLIENT_KEY, id);
    } catch {
      // ignore
    }
  }
  return id;
}

/** @type {Me|null} */
let current = null;

/** The signed-in user, once loadMe() succeeded (or the cached one when offline). */
export function currentUser() {
  return current;
}

/** The user from the last successful GET /me on this device, if any. */
export function cachedUser() {
  try {
    const raw = localStorage.getItem(ME_KEY);
    const me = raw ? JSON.parse(raw) : null;
    return me && typeof me.id === 'string' ? /** @type {Me} */ (me) : null;
  } catch {
    return null;
  }
}

/**
 * GET /me. Resolves to the user, `null` when not signed in (401). Offline (network error,
 * timeout, or a 5xx from a proxy while the server is down) it resolves to the cached user with
 * `offline: true`, or rethrows when none is cached.
 * @param {import('./api.js').Api} api
 * @returns {Promise<{me: Me|null, offline: boolean}>}
 */
export async function loadMe(api) {
  try {
    const me = /** @type {Me} */ (await api.get('/me', { quiet401: true, timeoutMs: 8000 }));
    current = me;
    try {
      localStorage.setItem(ME_KEY, JSON.stringify(me));
    } catch {
      // ignore
    }
    return { me, offline: false };
  } catch (e) {
    const err = /** @type {import('./api.js').ApiError} */ (e);
    if (err && err.status === 401) {
      current = null;
      return { me: null, offline: false };
    }
    // Unreachable, or a proxy answering for a server that is down: open from this device.
    if (err && (err.status === 0 || err.status >= 500)) {
      current = cachedUser();
      if (current) return { me: current, offline: true };
    }
    throw e;
  }
}

/** Forget the signed-in user (after logout). */
export function clearUser() {
  current = null;
  try {
    localStorage.removeItem(ME_KEY);
  } catch {
    // ignore
  }
}

/** @param {Me} me */
export function setUser(me) {
  current = me;
  try {
    localStorage.setItem(ME_KEY, JSON.stringify(me));
  } catch {
    // ignore
  }
}
