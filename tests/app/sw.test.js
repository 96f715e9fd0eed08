// @ts-check
// The service worker's routing rules, run in a small fake worker scope: /api is never
// touched, app pages are network-first with the cached index.html offline, shell files are
// cache-first and refreshed, install caches the list, activate drops old caches.
import { describe, it, expect, beforeEach } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import vm from 'node:vm';

const SOURCE = readFileSync(join(import.meta.dirname, '..', '..', 'static', 'sw.js'), 'utf8');
const ORIGIN = 'https://docs.example';

function fakeCaches() {
  /** @type {Map<string, Map<string, Response>>} */
  const stores = new Map();
  const open = async (/** @type {string} */ name) => {
    if (!stores.has(name)) stores.set(name, new Map());
    const m = /** @type {Map<string, Response>} */ (stores.get(name));
    const key = (/** @type {string|Request} */ r) => new URL(typeof r === 'string' ? r : r.url, ORIGIN).pathname;
    return {
      match: async (/** @type {string|Request} */ r) => m.get(key(r))?.clone(),
      put: async (/** @type {string|Request} */ r, /** @type {Response} */ res) => void m.set(key(r), res.clone()),
    };
  };
  return {
    stores,
    api: {
      open,
      keys: async () => [...stores.keys()],
      delete: async (/** @type {string} */ n) => stores.delete(n),
      match: async (/** @type {string} */ r) => {
        for (const n of stores.keys()) { const hit = await (await open(n)).match(r); if (hit) return hit; }
        return undefined;
      },
    },
  };
}

/** Loads sw.js into a fresh fake scope. `net(path)` answers fetches; throw = offline. */
function loadWorker(/** @type {(path: string) => Response} */ net) {
  /** @type {Record<string, Function>} */
  const listeners = {};
  const caches = fakeCaches();
  /** @type {string[]} */
  const fetched = [];
  const scope = {
    location: new URL(ORIGIN),
    caches: caches.api,
    fetch: async (/** @type {string|Request} */ r) => {
      const path = new URL(typeof r === 'string' ? r : r.url, ORIGIN).pathname;
      fetched.push(path);
      return net(path);
    },
    addEventListener: (/** @type {string} */ type, /** @type {Function} */ fn) => { listeners[type] = fn; },
    skipWaiting: async () => {},
    clients: { claim: async () => {} },
    URL, Response, Request, Promise, Date, Array, Error, console,
    // The refresh's delay (after the page started) runs at once here.
    setTimeout: (/** @type {() => void} */ fn) => fn(),
  };
  scope.globalThis = scope;
  vm.runInNewContext(SOURCE, scope);
  /** @param {string} type @param {object} props */
  const dispatch = async (type, props = {}) => {
    /** @type {Promise<any>[]} */
    const waits = [];
    /** @type {Promise<Response>|null} */
    let responded = null;
    const ev = { ...props, waitUntil: (/** @type {Promise<any>} */ p) => waits.push(p), respondWith: (/** @type {Promise<Response>} */ p) => { responded = Promise.resolve(p); } };
    listeners[type](ev);
    const res = responded ? await responded : null;
    await Promise.all(waits);
    return res;
  };
  const fetchEvent = (/** @type {string} */ path, mode = 'cors', method = 'GET') =>
    dispatch('fetch', { request: { url: ORIGIN + path, method, mode } });
  return { caches, fetched, dispatch, fetchEvent };
}

const LIST = JSON.stringify({ files: ['/index.html', '/app/main.js', '/engine/engine.js'] });
/** @param {string} path */
const online = (path) => {
  if (path === '/app/shell-files.json') return new Response(LIST);
  if (path === '/index.html' || path === '/' || path.startsWith('/d/') || path === '/login') {
    return new Response('<html>shell', { headers: { 'Content-Type': 'text/html; charset=utf-8' } });
  }
  return new Response(`// ${path}`);
};
const offline = () => { throw new TypeError('Failed to fetch'); };

describe('service worker', () => {
  /** @type {ReturnType<typeof loadWorker>} */
  let w;
  /** @type {(path: string) => Response} */
  let net;
  beforeEach(() => {
    net = online;
    w = loadWorker((p) => net(p));
  });

  it('install caches every listed file', async () => {
    await w.dispatch('install');
    const [name] = w.caches.stores.keys();
    expect(name).toMatch(/^docsync-shell-/);
    expect([...(w.caches.stores.get(name)?.keys() ?? [])].sort()).toEqual(['/app/main.js', '/engine/engine.js', '/index.html']);
  });

  it('never intercepts /api, other methods or other origins', async () => {
    await w.dispatch('install');
    expect(await w.fetchEvent('/api/v1/docs')).toBeNull();
    expect(await w.fetchEvent('/api/v1/docs/x/snapshot', 'navigate')).toBeNull();
    expect(await w.fetchEvent('/app/main.js', 'cors', 'POST')).toBeNull();
    expect(await w.dispatch('fetch', { request: { url: 'https://cdn.example/app/x.js', method: 'GET', mode: 'cors' } })).toBeNull();
  });

  it('app pages: network first, the cached index.html when offline', async () => {
    await w.dispatch('install');
    const live = await w.fetchEvent('/d/doc_1', 'navigate');
    expect(await live?.text()).toBe('<html>shell');
    net = offline;
    for (const p of ['/', '/login', '/d/doc_1']) {
      const res = await w.fetchEvent(p, 'navigate');
      expect(res?.status).toBe(200);
      expect(await res?.text()).toBe('<html>shell');
    }
  });

  it('shell files: from the cache at once, refreshed in the background', async () => {
    await w.dispatch('install');
    net = (p) => new Response(`// new ${p}`);
    const first = await w.fetchEvent('/app/main.js');
    expect(await first?.text()).toBe('// /app/main.js');
    const second = await w.fetchEvent('/app/main.js');
    expect(await second?.text()).toBe('// new /app/main.js');
    net = offline;
    const third = await w.fetchEvent('/app/main.js');
    expect(await third?.text()).toBe('// new /app/main.js');
  });

  it('a shell file fetched less than a minute ago is served without asking the server', async () => {
    await w.dispatch('install');
    net = (p) => new Response(`// fresh ${p}`, { headers: { Date: new Date().toUTCString() } });
    await w.fetchEvent('/app/main.js'); // refreshed: the installed copy had no Date
    const before = w.fetched.length;
    const res = await w.fetchEvent('/app/main.js');
    expect(await res?.text()).toBe('// fresh /app/main.js');
    expect(w.fetched.length).toBe(before);
  });

  it('activate deletes old shell caches only', async () => {
    await w.caches.api.open('docsync-shell-v0');
    await w.caches.api.open('someone-else');
    await w.dispatch('install');
    await w.dispatch('activate');
    const names = [...w.caches.stores.keys()];
    expect(names).not.toContain('docsync-shell-v0');
    expect(names).toContain('someone-else');
    expect(names.filter((n) => n.startsWith('docsync-shell-'))).toHaveLength(1);
  });
});

describe('service worker behind a proxy', () => {
  it('a 502 for a page while the server is down gives the cached shell', async () => {
    let up = true;
    const w = loadWorker((p) => (up ? online(p) : new Response('Bad Gateway', { status: 502 })));
    await w.dispatch('install');
    up = false;
    const res = await w.fetchEvent('/d/doc_1', 'navigate');
    expect(res?.status).toBe(200);
    expect(await res?.text()).toBe('<html>shell');
  });
});
