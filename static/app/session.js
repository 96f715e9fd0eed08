// Who is signed in (GET /api/v1/me) and this tab's clientId. The last known user is kept so
// the app can still open documents stored on this device while offline: in localStorage (read
// synchronously at start) and in IndexedDB, whose commit is on disk — Chromium writes
// localStorage to disk a while later, so a browser killed in the first seconds after login
// came back without it and could not open anything offline.

/** @typedef {{id: string, name: string, displayName: string, isAdmin: boolean}} Me */

const ME_KEY = 'docsync.me';
const DURABLE_DB = 'docsync-session';
const DURABLE_STORE = 'kv';

/** The small IndexedDB database of the signed-in user (null where there is none). */
function openDurable() {
  return new Promise((resolve) => {
    try {
      const req = indexedDB.open(DURABLE_DB, 1);
      req.onupgradeneeded = () => req.result.createObjectStore(DURABLE_STORE);
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => resolve(null);
      req.onblocked = () => resolve(null);
    } catch {
      resolve(null);
    }
  });
}

/**
 * Writes (or with `undefined` deletes) the durable copy; resolves once committed (false when
 * it could not be written).
 * @param {Me|undefined} me
 * @returns {Promise<boolean>}
 */
async function writeDurable(me) {
  const db = /** @type {IDBDatabase|null} */ (await openDurable());
  if (!db) return false;
  try {
    return await new Promise((resolve) => {
      const tx = db.transaction(DURABLE_STORE, 'readwrite', { durability: 'strict' });
      if (me) tx.objectStore(DURABLE_STORE).put(me, 'me');
      else tx.objectStore(DURABLE_STORE).delete('me');
      tx.oncomplete = () => resolve(true);
      tx.onerror = () => resolve(false);
      tx.onabort = () => resolve(false);
    });
  } finally {
    db.close();
  }
}

/** The user of the durable copy, if any. @returns {Promise<Me|null>} */
export async function durableUser() {
  const db = /** @type {IDBDatabase|null} */ (await openDurable());
  if (!db) return null;
  try {
    return await new Promise((resolve) => {
      const req = db.transaction(DURABLE_STORE, 'readonly').objectStore(DURABLE_STORE).get('me');
      req.onsuccess = () => {
        const me = req.result;
        resolve(me && typeof me.id === 'string' ? /** @type {Me} */ (me) : null);
      };
      req.onerror = () => resolve(null);
    });
  } finally {
    db.close();
  }
}

/** The last write of the durable copy (a logout waits for it before going on). */
let durableWrite = Promise.resolve(true);
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
    remember(me);
    return { me, offline: false };
  } catch (e) {
    const err = /** @type {import('./api.js').ApiError} */ (e);
    if (err && err.status === 401) {
      current = null;
      return { me: null, offline: false };
    }
    // Unreachable, or a proxy answering for a server that is down: open from this device.
    if (err && (err.status === 0 || err.status >= 500)) {
      current = cachedUser() ?? (await durableUser());
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
  durableWrite = durableWrite.then(() => writeDurable(undefined));
  return durableWrite;
}

/** @param {Me} me */
export function setUser(me) {
  remember(me);
}

/** The signed-in user, kept in both places (the durable copy only when it changed). @param {Me} me */
function remember(me) {
  current = me;
  const json = JSON.stringify(me);
  let same = false;
  try {
    same = localStorage.getItem(ME_KEY) === json;
    localStorage.setItem(ME_KEY, json);
  } catch {
    // ignore
  }
  if (!same || !durableChecked) {
    durableChecked = true;
    durableWrite = durableWrite.then(() => writeDurable(me));
  }
}
/** The durable copy was written (or found current) once in this page's life. */
let durableChecked = false;

/** Resolves when the last change of the signed-in user is on disk. */
export function userSaved() {
  return durableWrite;
}
