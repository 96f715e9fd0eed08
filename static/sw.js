// Service worker: keeps the app shell on the device so docsync opens offline.
// - install: caches every file named in /app/shell-files.json (one list, checked by a test)
// - navigations (/, /login, /d/…): network first, the cached /index.html when offline
// - app files (/app/**, /engine/**, manifest): cache first, refreshed in the background when
//   the cached copy is over a minute old, a moment after the page started (opening a
//   document needs ~40 of them: refreshing each at once competed with the page's own start)
// - /api/** is never touched: documents live in the engine's IndexedDB, not here
// Bump VERSION to start from an empty cache; old caches are deleted on activate.

const VERSION = 'v1';
const CACHE = `docsync-shell-${VERSION}`;
const PREFIX = 'docsync-shell-';

const sw = /** @type {ServiceWorkerGlobalScope} */ (/** @type {unknown} */ (globalThis));
/** A cached app file younger than this is served without asking the server. */
const REFRESH_AFTER_MS = 60_000;
/** An older one is refreshed this long after it was served, when the page has started. */
const REFRESH_DELAY_MS = 2_000;

/** @returns {Promise<string[]>} */
async function shellFiles() {
  const res = await fetch('/app/shell-files.json', { cache: 'no-cache' });
  if (!res.ok) throw new Error(`shell-files.json: ${res.status}`);
  const body = await res.json();
  return Array.isArray(body.files) ? body.files.filter((/** @type {unknown} */ f) => typeof f === 'string') : [];
}

/**
 * Cache the shell files; with `onlyMissing`, only those not cached yet (files added to the
 * list since this worker was installed). One by one: a single missing file must not leave
 * the whole shell uncached.
 * @param {boolean} onlyMissing
 */
async function precache(onlyMissing) {
  const cache = await caches.open(CACHE);
  const files = await shellFiles();
  await Promise.allSettled(files.map(async (path) => {
    if (onlyMissing && (await cache.match(path))) return;
    const res = await fetch(path, { cache: 'no-cache' });
    if (res.ok) await cache.put(path, res);
  }));
}

let lastTopUp = 0;
/** After an online page load, at most every 10 minutes: cache files new to the list. */
function topUp() {
  if (Date.now() - lastTopUp < 10 * 60 * 1000) return Promise.resolve();
  lastTopUp = Date.now();
  return precache(true).catch(() => undefined);
}

sw.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    await precache(false);
    lastTopUp = Date.now();
    await sw.skipWaiting();
  })());
});

sw.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    const names = await caches.keys();
    await Promise.all(names.filter((n) => n.startsWith(PREFIX) && n !== CACHE).map((n) => caches.delete(n)));
    await sw.clients.claim();
  })());
});

/** @param {string} path */
function isAppPage(path) {
  return path === '/' || path === '/login' || path === '/index.html' || /^\/d\/[^/]+(?:\/b\/[^/]+)?\/?$/.test(path);
}

/** @param {string} path */
function isShellAsset(path) {
  return path.startsWith('/app/') || path.startsWith('/engine/') || path === '/manifest.webmanifest';
}

sw.addEventListener('fetch', (event) => {
  const req = event.request;
  if (req.method !== 'GET') return;
  const url = new URL(req.url);
  if (url.origin !== sw.location.origin) return;
  if (url.pathname.startsWith('/api/')) return;
  if (req.mode === 'navigate' && isAppPage(url.pathname)) {
    event.respondWith(networkFirstPage(req).then((res) => {
      if (res.ok && res.status !== 503) event.waitUntil(topUp());
      return res;
    }));
  } else if (isShellAsset(url.pathname)) {
    event.respondWith(staleWhileRevalidate(event, url.pathname));
  }
});

/** @param {Request} req */
async function networkFirstPage(req) {
  const cache = await caches.open(CACHE);
  try {
    const res = await fetch(req);
    // Every app page is index.html: keep the freshest copy for offline starts.
    if (res.ok && (res.headers.get('Content-Type') ?? '').includes('text/html')) {
      await cache.put('/index.html', res.clone());
    }
    // A proxy answering 502/503/504 for a server that is down: the cached shell is better.
    if (res.status >= 500) {
      const cached = await cache.match('/index.html');
      if (cached) return cached;
    }
    return res;
  } catch {
    const cached = (await cache.match('/index.html')) ?? (await cache.match('/'));
    if (cached) return cached;
    return new Response('<!doctype html><meta charset="utf-8"><title>Offline</title><p>docsync is offline and not stored on this device yet.</p>', {
      status: 503, headers: { 'Content-Type': 'text/html; charset=utf-8' },
    });
  }
}

/** @param {FetchEvent} event @param {string} path */
async function staleWhileRevalidate(event, path) {
  const cache = await caches.open(CACHE);
  const cached = await cache.match(path);
  const refresh = () => fetch(event.request, { cache: 'no-cache' }).then(async (res) => {
    if (res.ok) await cache.put(path, res.clone());
    return res;
  });
  if (!cached) return refresh();
  if (Date.now() - fetchedAt(cached) >= REFRESH_AFTER_MS) {
    event.waitUntil(new Promise((r) => setTimeout(r, REFRESH_DELAY_MS)).then(refresh).catch(() => undefined));
  }
  return cached;
}

/** When a cached response came from the server (its Date header; 0 when unknown). @param {Response} res */
function fetchedAt(res) {
  const at = Date.parse(res.headers.get('Date') ?? '');
  return Number.isNaN(at) ? 0 : at;
}
