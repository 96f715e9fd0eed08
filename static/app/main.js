// The app shell: header, routing, session, service worker. Pages render into <main id=app>
// and return {destroy()}; the editor page (/app/editor/page.js) is loaded on demand.

import { createApi, ApiError, describeError } from './api.js';
import { startRouter, navigate, loginUrlFor } from './router.js';
import { loadMe, currentUser, cachedUser, clearUser, setUser, getClientId } from './session.js';
import { afterNextPaint, h, replaceChildren } from './ui/dom.js';
import { icon, logo } from './ui/icons.js';
import { toast } from './ui/toast.js';
import { rememberDoc, recentDocs } from './recent.js';
import { requestJson } from '../engine/http.js';
import { openStore } from '../engine/store.js';
import { renderLogin } from './pages/login.js';
import { renderHome, pendingTitles } from './pages/home.js';
import { openShareDialog, configureSharing } from './pages/share-dialog.js';
import { openModal } from './ui/dialog.js';
import { logoutChoice, countDeviceCopies, removeDeviceCopies } from './device-copies.js';

/** @typedef {import('./router.js').Route} Route */
/** @typedef {{destroy?: () => void, route?: (r: import('./editor/editor.js').EditorRoute) => void}} PageHandle */
/** @typedef {import('./editor/editor.js').EditorModule} EditorModule */

/** The editor engineer's module; a variable so a missing file is a runtime fallback, not a type error. */
const EDITOR_MODULE = '/app/editor/page.js';
/** The first rows of a document this device has not opened before. @type {{docId: string, promise: Promise<unknown>}|null} */
let earlyFirstRows = null;
/**
 * Opened once the session is known (`/me` answered) or the engine asks for the snapshot:
 * the server's encoding of a big snapshot would otherwise hold up `/me` and the first rows.
 * @type {() => void}
 */
let openSnapshotGate = () => {};
const snapshotGate = new Promise((resolve) => (openSnapshotGate = () => resolve(undefined)));
/**
 * A document this device has not opened before has no copy in IndexedDB: its snapshot (the
 * longest part of opening it) is fetched as the app starts, while the session is checked
 * and the editor loads, and handed to the engine. Not for known documents: they open from
 * the device and only /sync.
 * @type {{docId: string, clientId: string, promise: Promise<any>}|null}
 */
let earlySnapshot = (() => {
  const docId = docIdOfPath();
  if (docId === null || recentDocs().some((d) => d.docId === docId)) return null;
  // Its first rows too, asked first: small, so the editor draws them (read-only) while a big
  // document's snapshot is still on its way (first-screen.js).
  earlyFirstRows = { docId, promise: requestJson(globalThis.fetch.bind(globalThis), `/api/v1/docs/${encodeURIComponent(docId)}/first-rows`) };
  earlyFirstRows.promise.then(() => performance.mark('docsync:first-rows'), () => {});
  const clientId = getClientId();
  const q = `?clientId=${encodeURIComponent(clientId)}`;
  // Fetched now (its bytes taken as they come, so the connection is free again), its JSON
  // read only when the engine asks for it: a big document's JSON takes the main thread for
  // a while, and its first rows are to be drawn before that.
  const body = snapshotGate.then(() => globalThis.fetch(`/api/v1/docs/${encodeURIComponent(docId)}/snapshot${q}`, {
    headers: { Accept: 'application/json' }, credentials: 'same-origin',
  })).then(async (res) => ({ ok: res.ok, status: res.status, bytes: await res.arrayBuffer() }));
  body.catch(() => {}); // the engine asks again
  /** @type {Promise<any>|null} */
  let read = null;
  return {
    docId,
    clientId,
    get promise() {
      openSnapshotGate();
      // Its JSON (a long task for a big document) after the next frame: first rows drawn
      // just before are painted before it, not after.
      read ??= body.then(afterNextPaint).then(({ ok, status, bytes }) => {
        if (!ok) throw new Error(`the early snapshot: ${status}`); // the engine asks again
        return JSON.parse(new TextDecoder().decode(bytes));
      });
      return read;
    },
  };
})();

/**
 * A document this device knows: its copy is read from IndexedDB as the app starts, while the
 * session is checked and the editor loads, and handed to the engine (which reads it itself
 * if this failed).
 * @type {{docId: string, promise: Promise<any>}|null}
 */
let earlyStored = (() => {
  const docId = docIdOfPath();
  if (docId === null || earlySnapshot) return null;
  const promise = openStore({ indexedDB: globalThis.indexedDB }).then(async (store) => {
    try {
      return await store.loadDoc(docId);
    } finally {
      store.close();
    }
  });
  promise.catch(() => {});
  return { docId, promise };
})();

/** The document of this page's path (/d/{docId}…), or null. */
function docIdOfPath() {
  const m = /^\/d\/([^/?#]+)/.exec(location.pathname);
  return m ? decodeURIComponent(m[1]) : null;
}

// Named points of the start, read by the editor benchmark (navigation → first bullets).
performance.mark('docsync:main');

const root = /** @type {HTMLElement} */ (document.getElementById('app'));
const header = /** @type {HTMLElement} */ (document.getElementById('app-header'));

export const api = createApi({
  onUnauthorized: () => {
    if (location.pathname === '/login') return;
    clearUser();
    navigate(loginUrlFor(location.pathname + location.search + location.hash), { replace: true });
  },
});

/** @type {PageHandle|null} */
let page = null;
let renderToken = 0;
let firstRender = true;
/** The server was not reachable on the last /me (offline shell). */
let offline = false;

// ---- header -------------------------------------------------------------------------------

const offlinePill = h('span', { class: 'pill pill-offline', id: 'offline-indicator', hidden: true }, icon('offline', { size: 14 }), 'Offline');

/** Whether the current page is a document (the header then links back to the list). */
let onDocPage = false;

function renderHeader() {
  const me = currentUser();
  const brand = h('a', { href: me ? '/' : '/login', class: 'brand', 'aria-label': 'docsync home' }, logo(), h('span', { class: 'brand-name' }, 'docsync'));
  /** @type {(Node|null)[]} */
  let right = [];
  if (me) {
    const logout = h('button', { type: 'button', id: 'logout', class: 'btn btn-ghost btn-small' }, icon('logout', { size: 16 }), h('span', { class: 'hide-narrow' }, 'Log out'));
    logout.setAttribute('aria-label', `Log out ${me.displayName || me.name}`);
    logout.addEventListener('click', onLogout);
    right = [
      offlinePill,
      me.isAdmin
        ? h('a', { href: '/admin/people', class: 'btn btn-ghost btn-small', id: 'admin-link', 'aria-label': 'Admin', title: 'Admin: people, teams, invitations, audit log' },
            icon('team', { size: 16 }), h('span', { class: 'hide-narrow' }, 'Admin'))
        : null,
      h('a', { class: 'whoami', id: 'whoami', href: '/settings', title: `Signed in as ${me.name} — your account` },
        h('span', { class: 'avatar', 'aria-hidden': 'true' }, initials(me.displayName || me.name)),
        h('span', { class: 'whoami-name hide-narrow' }, me.displayName || me.name)),
      logout,
    ];
  }
  const crumb = me && onDocPage
    ? h('a', { href: '/', class: 'crumb', id: 'back-home' }, h('span', { 'aria-hidden': 'true' }, '/'), h('span', null, 'Documents'))
    : null;
  replaceChildren(header, h('div', { class: 'header-inner' }, brand, crumb, h('nav', { class: 'header-right', 'aria-label': 'Account' }, ...right)));
  updateOffline();
}

/** @param {string} name */
function initials(name) {
  const parts = name.trim().split(/\s+/).filter(Boolean);
  const s = parts.length > 1 ? parts[0][0] + parts[parts.length - 1][0] : name.slice(0, 1);
  return s.toUpperCase();
}

function updateOffline() {
  offlinePill.hidden = !(offline || !navigator.onLine);
}

async function onLogout() {
  // Close the open page first (the editor sends its last changes and leaves while the
  // session is still valid).
  if (navigator.onLine && page?.destroy) {
    try {
      page.destroy();
    } catch (e) {
      console.error('page destroy failed', e);
    }
    page = null;
  }
  // The closed editor's last changes may still be on their way: give them a moment.
  let copies = await countDeviceCopies();
  for (let i = 0; i < 30 && copies.pending > 0 && navigator.onLine; i++) {
    await new Promise((r) => setTimeout(r, 100));
    copies = await countDeviceCopies();
  }
  const choice = logoutChoice(copies);
  const remove = choice.offer ? await askLogout(choice) : false;
  if (remove === null) {
    // Cancelled: back to where the user was.
    if (!page) navigate(location.pathname + location.search + location.hash, { replace: true });
    return;
  }
  try {
    await api.post('/auth/logout', {}, { quiet401: true });
  } catch (e) {
    if (e instanceof ApiError && e.offline) {
      toast('You are offline — log out when you are back online.', { kind: 'error' });
      if (!page) navigate(location.pathname + location.search + location.hash, { replace: true });
      return;
    }
  }
  if (remove) {
    try {
      if (!(await removeDeviceCopies())) toast('Changes still waiting to be sent were kept on this device.');
    } catch (e) {
      console.error('removing device copies failed', e);
      toast('The copies on this device could not be removed.', { kind: 'error' });
    }
  }
  clearUser();
  renderHeader();
  navigate('/login', { replace: false });
}

/**
 * The logout dialog: whether to remove this device's copies. Resolves true/false, or null
 * when cancelled.
 * @param {ReturnType<typeof logoutChoice>} choice
 * @returns {Promise<boolean|null>}
 */
function askLogout(choice) {
  return new Promise((resolve) => {
    /** @type {boolean|null} */
    let result = null;
    const box = h('input', { type: 'checkbox', id: 'logout-remove', checked: choice.removeByDefault, disabled: !choice.canRemove });
    const ok = h('button', { type: 'submit', class: 'btn btn-primary', id: 'logout-confirm' }, 'Log out');
    const cancel = h('button', { type: 'button', class: 'btn' }, 'Cancel');
    const form = h('form', { method: 'dialog', class: 'dialog-form' },
      h('p', { class: 'dialog-message', id: 'logout-note' }, choice.note),
      h('label', { class: 'check-row', for: 'logout-remove' }, box,
        h('span', null, 'Remove this device\'s copies of my documents (recommended on a shared computer)')),
      h('div', { class: 'dialog-actions' }, cancel, ok));
    const { close } = openModal({ id: 'logout-dialog', title: 'Log out', content: [form], onClose: () => resolve(result) });
    cancel.addEventListener('click', close);
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      result = box.checked && choice.canRemove;
      close();
    });
    ok.focus();
  });
}

// ---- routing ------------------------------------------------------------------------------

/** The document whose editor is mounted, if any (a change of only the #hash keeps it). */
/** @type {string|null} */
let mountedDoc = null;

/** @param {Route} route */
async function onRoute(route) {
  if (route.name === 'doc' && mountedDoc === route.docId && page) {
    page.route?.({ zoomId: route.zoomId, blockId: route.blockId });
    return;
  }
  mountedDoc = null;
  const token = ++renderToken;
  if (page?.destroy) {
    try {
      page.destroy();
    } catch (e) {
      console.error('page destroy failed', e);
    }
  }
  page = null;

  if (route.name === 'login') {
    if (currentUser() && !offline) {
      navigate(route.next, { replace: true });
      return;
    }
    renderHeader();
    show(token, renderLogin(root, {
      api, next: route.next,
      onLoggedIn: () => {
        renderHeader();
        navigate(route.next, { replace: true });
      },
    }), 'Sign in');
    // Already signed in (a bookmark of /login, or a second tab)? Go on without asking. Only
    // asked when this device knows a user (no 401 noise for first visits).
    if (cachedUser()) loadMe(api).then(({ me, offline: off }) => {
      if (me && !off && token === renderToken) {
        offline = false;
        navigate(route.next, { replace: true });
      }
    }).catch(() => {});
    return;
  }

  if (route.name === 'invite') {
    // Whoever holds the link may use it, signed in or not (a reset link signs them in anew).
    renderHeader();
    // The account pages are fetched when first opened: most starts never need them.
    const { renderInvite } = await import('./pages/invite.js');
    if (token !== renderToken) return;
    show(token, renderInvite(root, {
      api, token: route.token,
      onSignedIn: () => {
        offline = false;
        renderHeader();
        navigate('/', { replace: true });
      },
    }), 'Invitation');
    return;
  }

  // A document's editor is fetched while the session is checked, not after.
  const editorModule = route.name === 'doc' ? importEditor() : null;
  const cached = route.name === 'doc' && !currentUser() && !offline ? cachedUser() : null;
  if (cached) {
    // A document opens at once as the user this device last saw signed in (its copy is
    // here; the server checks every request anyway). The session is checked meanwhile: not
    // signed in → the login page; someone else → open again as them; unreachable → offline.
    setUser(cached);
    loadMe(api).then(({ me, offline: off }) => {
      if (!me) {
        clearUser();
        navigate(loginUrlFor(location.pathname + location.search + location.hash), { replace: true });
        return;
      }
      offline = off;
      updateOffline();
      renderHeader();
      // Someone else signed in on this device meanwhile: start again as them.
      if (me.id !== cached.id) location.reload();
    }).catch(() => {});
  } else if (!currentUser() || offline) {
    try {
      const { me, offline: off } = await loadMe(api);
      offline = off;
      if (token !== renderToken) return;
      if (!me) {
        navigate(loginUrlFor(location.pathname + location.search + location.hash), { replace: true });
        return;
      }
    } catch (e) {
      if (token !== renderToken) return;
      renderHeader();
      showError(describeError(e));
      return;
    }
  }
  const me = /** @type {import('./session.js').Me} */ (currentUser());
  performance.mark('docsync:me');
  openSnapshotGate();
  onDocPage = route.name === 'doc';
  renderHeader();

  if (route.name === 'home') {
    show(token, renderHome(root, { api, me, offline, openShareDialog }), 'Documents');
  } else if (route.name === 'settings') {
    const { renderSettings } = await import('./pages/settings.js');
    if (token !== renderToken) return;
    show(token, renderSettings(root, { api, me, onChanged: () => renderHeader() }), 'Your account');
  } else if (route.name === 'admin') {
    const { renderAdmin, adminTitle } = await import('./pages/admin.js');
    if (token !== renderToken) return;
    show(token, renderAdmin(root, { api, me, tab: route.tab }), adminTitle(route.tab));
  } else if (route.name === 'doc') {
    replaceChildren(root, h('div', { class: 'page-loading', 'aria-busy': 'true' }, 'Opening document…'));
    const mod = await editorModule;
    performance.mark('docsync:editor-module');
    if (token !== renderToken) return;
    if (mod) {
      root.replaceChildren();
      // A sensible tab title until the editor sets its own.
      const listed = pendingTitles.get(route.docId);
      document.title = `${listed?.title.trim() || 'Untitled'} · docsync`;
      try {
        const opening = mod.mountEditor(root, {
          docId: route.docId, zoomId: route.zoomId, blockId: route.blockId, me, clientId: getClientId(), api, openShareDialog,
          navigate: (url) => navigate(url),
          snapshot: earlySnapshot?.docId === route.docId ? earlySnapshot : null,
          stored: earlyStored?.docId === route.docId ? earlyStored.promise : null,
          firstRows: earlyFirstRows?.docId === route.docId ? earlyFirstRows.promise : null,
        });
        earlySnapshot = null;
        earlyStored = null;
        earlyFirstRows = null;
        const handle = await opening;
        // Listed on the offline home page (the editor updates the title via rememberDoc too).
        const known = pendingTitles.get(route.docId);
        rememberDoc(known ? { docId: route.docId, title: known.title, icon: known.icon } : { docId: route.docId });
        show(token, handle, null);
        if (token === renderToken) mountedDoc = route.docId;
      } catch (e) {
        console.error('mountEditor failed', e);
        if (token === renderToken) showError(`The editor could not open this document: ${describeError(e)}`);
      }
    } else {
      show(token, editorPlaceholder(route.docId), 'Document');
    }
  } else {
    show(token, notFound(), 'Not found');
  }
}

/**
 * @param {number} token
 * @param {PageHandle|null|undefined} handle
 * @param {string|null} title document.title prefix (null: the page sets its own)
 */
function show(token, handle, title) {
  if (token !== renderToken) {
    handle?.destroy?.();
    return;
  }
  page = handle ?? null;
  if (title) document.title = `${title} · docsync`;
  if (!firstRender) {
    // Move focus to the new page's heading so screen readers announce the change — unless
    // the page already placed focus itself (the editor), or the heading is editable.
    const active = document.activeElement;
    const placed = active instanceof HTMLElement && active !== root && root.contains(active);
    const h1 = root.querySelector('h1');
    const target = placed ? null : h1 instanceof HTMLElement && !h1.isContentEditable ? h1 : root;
    if (target) {
      if (!target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1');
      target.focus({ preventScroll: true });
    }
    window.scrollTo(0, 0);
  }
  firstRender = false;
}

/** A reload tried once already to load the editor's modules (so it is not tried forever). */
const EDITOR_RELOAD_KEY = 'docsync.editorReload';

/**
 * The editor's module. A fetch of one of its modules that failed (aborted by a reload right
 * before, a flaky connection) stays failed for the life of this page — the browser does not
 * fetch a failed module again — so the cure is a fresh page: reload once. Seen once in 200
 * reloads-right-after-typing; the page then said the editor was not installed.
 * @returns {Promise<EditorModule|null>}
 */
async function importEditor() {
  try {
    const mod = await import(EDITOR_MODULE);
    sessionStorage.removeItem(EDITOR_RELOAD_KEY);
    return mod;
  } catch (e) {
    console.warn('the editor could not be loaded', e);
    if (!sessionStorage.getItem(EDITOR_RELOAD_KEY)) {
      sessionStorage.setItem(EDITOR_RELOAD_KEY, '1');
      location.reload();
      return new Promise(() => {}); // the page goes away
    }
    sessionStorage.removeItem(EDITOR_RELOAD_KEY);
    return null;
  }
}

/** @param {string} docId @returns {PageHandle} */
function editorPlaceholder(docId) {
  const retry = h('button', { type: 'button', class: 'btn btn-primary' }, 'Try again');
  retry.addEventListener('click', () => location.reload());
  replaceChildren(root, h('section', { class: 'page page-narrow placeholder', id: 'editor-placeholder', dataset: { docId } },
    h('h1', { class: 'page-title' }, 'The editor could not be loaded'),
    h('p', { class: 'muted' }, 'Its files did not arrive. Your changes are safe on this device; check the connection and try again.'),
    h('p', null, retry, ' ', h('a', { href: '/', class: 'btn' }, '← Back to documents'))));
  return {};
}

/** @returns {PageHandle} */
function notFound() {
  replaceChildren(root, h('section', { class: 'page page-narrow placeholder' },
    h('h1', { class: 'page-title' }, 'Page not found'),
    h('p', { class: 'muted' }, 'There is nothing at this address.'),
    h('p', null, h('a', { href: '/', class: 'btn' }, '← Back to documents'))));
  return {};
}

/** @param {string} message */
function showError(message) {
  replaceChildren(root, h('section', { class: 'page page-narrow placeholder' },
    h('h1', { class: 'page-title' }, 'Cannot load docsync'),
    h('p', { class: 'form-error', role: 'alert' }, message),
    h('p', null, h('button', { type: 'button', class: 'btn btn-primary', onclick: () => location.reload() }, 'Try again'))));
}

// ---- connectivity and service worker ------------------------------------------------------

window.addEventListener('online', () => {
  const wasOffline = offline;
  offline = false;
  updateOffline();
  // Re-check the session and re-render the page with live data.
  if (wasOffline) navigate(location.pathname + location.search + location.hash, { replace: true });
});
window.addEventListener('offline', updateOffline);

if ('serviceWorker' in navigator && window.isSecureContext) {
  window.addEventListener('load', () => {
    navigator.serviceWorker.register('/sw.js', { scope: '/' }).catch((e) => console.warn('service worker not registered', e));
  });
}

configureSharing(api);
renderHeader();
// The app's module runs: a reload the boot guard (boot.js) made, if any, worked.
try {
  sessionStorage.removeItem('docsync.bootReload');
} catch {
  /* no session storage: the guard kept no flag either */
}

startRouter((route) => {
  onRoute(route).catch((e) => {
    console.error(e);
    showError(describeError(e));
  });
});
