// History-API routing: /login, / (home), /d/{docId} (editor), /invite/{token} (an
// invitation or reset link), /settings (the person's account), /admin/{tab} (people,
// invitations, teams, audit). Same-origin link clicks are intercepted; back/forward
// re-render. matchRoute and safeNext are pure (unit-tested).

/** The admin pages' tabs, in the order they are shown. */
export const ADMIN_TABS = /** @type {const} */ (['people', 'invites', 'teams', 'audit', 'webhooks']);

/** @typedef {typeof ADMIN_TABS[number]} AdminTab */

/**
 * @typedef {{name: 'login', next: string}
 *   | {name: 'home'}
 *   | {name: 'invite', token: string}
 *   | {name: 'settings'}
 *   | {name: 'admin', tab: AdminTab}
 *   | {name: 'doc', docId: string, zoomId: string|null, blockId: string|null}
 *   | {name: 'notfound', path: string}} Route
 */

/**
 * @param {string} pathname
 * @param {string} [search] location.search
 * @param {string} [hash] location.hash (`#blk_…` scrolls the editor to a bullet)
 * @returns {Route}
 */
export function matchRoute(pathname, search = '', hash = '') {
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  if (path === '/' || path === '' || path === '/index.html') return { name: 'home' };
  if (path === '/login') {
    const next = new URLSearchParams(search).get('next');
    return { name: 'login', next: safeNext(next) };
  }
  const invite = /^\/invite\/([A-Za-z0-9_]+)$/.exec(path);
  if (invite) return { name: 'invite', token: invite[1] };
  if (path === '/settings') return { name: 'settings' };
  const admin = /^\/admin\/([a-z]+)$/.exec(path);
  const tab = admin && ADMIN_TABS.find((t) => t === admin[1]);
  if (tab) return { name: 'admin', tab };
  // /d/{doc} is the document, /d/{doc}/b/{block} the same document zoomed into a bullet
  const m = /^\/d\/([^/]+)(?:\/b\/([^/]+))?$/.exec(path);
  if (m) {
    let docId;
    let zoomId = null;
    let blockId = null;
    try {
      docId = decodeURIComponent(m[1]);
      if (m[2]) zoomId = decodeURIComponent(m[2]);
      if (hash.length > 1) blockId = decodeURIComponent(hash.slice(1));
    } catch {
      return { name: 'notfound', path };
    }
    return { name: 'doc', docId, zoomId, blockId };
  }
  return { name: 'notfound', path };
}

/**
 * Where to go after login: only a local path of this app (never `//evil`, `https://…` or
 * `/login` itself).
 * @param {string|null|undefined} next
 */
export function safeNext(next) {
  if (!next || typeof next !== 'string') return '/';
  if (!next.startsWith('/') || next.startsWith('//') || next.includes('\\')) return '/';
  if (/^\/(?:login|invite)(?:[/?#]|$)/.test(next)) return '/';
  return next;
}

/**
 * `/login?next=<current path>` for a redirect when signed out.
 * @param {string} pathWithSearch
 */
export function loginUrlFor(pathWithSearch) {
  const next = safeNext(pathWithSearch);
  return next === '/' ? '/login' : `/login?next=${encodeURIComponent(next)}`;
}

/** @type {((route: Route) => void)|null} */
let handler = null;

/**
 * Start routing: calls onRoute now and on every navigation.
 * @param {(route: Route) => void} onRoute
 */
export function startRouter(onRoute) {
  handler = onRoute;
  window.addEventListener('popstate', () => render());
  document.addEventListener('click', onClick);
  render();
}

function render() {
  if (handler) handler(matchRoute(location.pathname, location.search, location.hash));
}

/**
 * Go to a path of the app without reloading.
 * @param {string} url e.g. `/d/doc_1#blk_2`
 * @param {{replace?: boolean}} [opts]
 */
export function navigate(url, opts = {}) {
  const target = new URL(url, location.href);
  const same = target.pathname === location.pathname && target.search === location.search;
  if (same && !opts.replace && target.hash && target.hash !== location.hash) {
    location.hash = target.hash; // a fragment step: hashchange + popstate, page stays
    return;
  }
  if (opts.replace) history.replaceState(null, '', target);
  else if (!same || target.hash !== location.hash) history.pushState(null, '', target);
  render();
}

/** @param {MouseEvent} ev */
function onClick(ev) {
  if (ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
  const a = ev.target instanceof Element ? ev.target.closest('a[href]') : null;
  if (!(a instanceof HTMLAnchorElement)) return;
  if (a.target && a.target !== '_self') return;
  if (a.hasAttribute('download') || a.dataset.external !== undefined) return;
  const url = new URL(a.href, location.href);
  if (url.origin !== location.origin) return;
  if (matchRoute(url.pathname).name === 'notfound') return;
  // Same page, another #fragment: let the browser do it (hashchange and popstate fire).
  if (url.pathname === location.pathname && url.search === location.search && url.hash) return;
  ev.preventDefault();
  navigate(url.pathname + url.search + url.hash);
}
