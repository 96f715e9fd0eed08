// @ts-check
// Shared set-ups of the scenarios: a server with users, a document shared between them,
// logged-in browser contexts with the editor open, typing helpers, and convergence checks
// that compare every browser with the server's snapshot.

import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';

import { readRows, readStage, rowText, SEL, waitFor, rowSel } from './harness.js';

/**
 * @typedef {import('./harness.js').Harness} Harness
 * @typedef {import('./harness.js').User} User
 * @typedef {import('playwright-core').Page} Page
 * @typedef {import('playwright-core').BrowserContext} BrowserContext
 */

/**
 * A server, users (the first owns the document and is admin), a document with `seed`
 * top-level bullets, shared with the others (`access`), and one editor page per user in
 * `open` (each user in their own browser context, logged in through the API).
 * `proxy`: an nginx config the browsers go through (the API helpers always go direct).
 * @param {Harness} h
 */
export async function setup(h, opts = {}) {
  const names = opts.users || ['alice', 'bob'];
  const srv = opts.server || (await h.server());
  const users = await h.users(srv, names);
  const owner = users[names[0]];
  const api = srv.api(owner);
  const doc = await api.createDoc(opts.title || 'E2E outline');
  const shareTo = opts.shareTo ?? names.slice(1);
  if (shareTo.length) await api.setShares(doc, shareTo.map((n) => [users[n], opts.access || 'write']));
  const ids = opts.seed && opts.seed.length ? await api.insertBullets(doc, opts.seed) : [];
  h.dumpOnFailure(`server-${doc}`, async () => ({
    snapshot: await api.snapshot(doc),
    log: (await api.readLog(doc, 0)).entries,
  }));
  const proxy = opts.proxy ? await h.nginx(opts.proxy, srv) : null;
  const base = proxy ? proxy.base : srv.base;
  /** @type {Record<string, Page>} */
  const pages = {};
  /** @type {Record<string, BrowserContext>} */
  const contexts = {};
  for (const n of opts.open ?? names) {
    contexts[n] = await h.loggedIn(n, base, users[n], { fakeClock: !!opts.fakeClock });
    pages[n] = await h.openDoc(contexts[n], doc);
  }
  for (const n of opts.open ?? names) {
    if (ids.length) await waitRowsShown(pages[n], ids);
  }
  return { srv, users, owner, api, doc, ids, proxy, base, pages, contexts };
}

/** Waits until the page shows every row of `ids`. */
export async function waitRowsShown(page, ids, timeout = 15_000) {
  await waitFor(
    async () => {
      const shown = new Set((await readRows(page)).map((r) => r.id));
      return ids.every((id) => shown.has(id));
    },
    { timeout, message: `rows ${ids.join(', ')} shown` },
  );
}

/** The page's outline as `{id, depth, text, conflictOf}` in document order. */
export async function pageOutline(page) {
  return (await readRows(page)).map((r) => ({
    id: r.id,
    depth: Math.max(0, r.level - 1),
    text: r.text,
    conflictOf: r.conflictOf || null,
  }));
}

/** The server's outline (live blocks, document order) in the same shape. */
export async function apiOutline(api, doc) {
  const snap = await api.snapshot(doc);
  return snap.blocks
    .filter((b) => !b.deleted)
    .map((b) => ({ id: b.id, depth: b.depth, text: b.content, conflictOf: b.conflictOf || null }));
}

export function render(outline) {
  return outline.map((r) => `${'  '.repeat(r.depth)}${r.conflictOf ? '[copy] ' : ''}${r.text}`).join('\n');
}

/** Pending own ops as the status line shows them (a number in #status-pending, else 0). */
export async function pendingOf(page) {
  const t = ((await page.locator(SEL.pending).textContent().catch(() => '')) || '').trim();
  const m = /\d+/.exec(t);
  return m ? Number(m[0]) : 0;
}

/**
 * Waits until every page shows exactly the server's outline (ids, depth, text, conflict
 * marks) and has nothing pending; returns that outline.
 * @param {any} api
 * @param {string} doc
 * @param {Page[]} pages
 * @param {{timeout?: number, check?: (outline: any[]) => boolean}} [opts]
 */
export async function converged(api, doc, pages, { timeout = 30_000, check } = {}) {
  let last = {};
  return waitFor(
    async () => {
      const server = await apiOutline(api, doc);
      const r = render(server);
      last = { server: r };
      for (const [i, p] of pages.entries()) {
        const mine = render(await pageOutline(p));
        last[`page${i}`] = mine;
        if (mine !== r) return false;
        const ids = (await pageOutline(p)).map((x) => x.id).join();
        if (ids !== server.map((x) => x.id).join()) return false;
        if ((await pendingOf(p)) !== 0) return false;
      }
      if (check && !check(server)) return false;
      return server;
    },
    {
      timeout,
      interval: 200,
      message: () =>
        `browsers and server to converge:\n` +
        Object.entries(last)
          .map(([k, v]) => `--- ${k}\n${v}`)
          .join('\n'),
    },
  );
}

/**
 * Types a script into the focused field: strings are typed key by key; `{press: 'Enter'}`
 * presses a key (combos like 'Shift+Tab' allowed).
 * @param {Page} page
 * @param {(string|{press: string})[]} script
 */
export async function typeScript(page, script, delay = 15) {
  for (const step of script) {
    if (typeof step === 'string') await page.keyboard.type(step, { delay });
    else await page.keyboard.press(step.press);
  }
}

/** Clicks into a row's text and puts the caret at its end. */
export async function focusEnd(page, id) {
  await rowText(page, id).click();
  // End alone goes to the end of the visual line the click was on: a long bullet wraps.
  await page.evaluate((sel) => {
    const field = document.querySelector(sel);
    const s = document.getSelection();
    if (!field || !s) return;
    const r = document.createRange();
    r.selectNodeContents(field);
    r.collapse(false);
    s.removeAllRanges();
    s.addRange(r);
  }, `${rowSel(id)} ${SEL.rowText}`);
  await page.keyboard.press('End');
  await waitFor(
    () =>
      page.evaluate((sel) => {
        const row = document.querySelector(sel);
        return !!row && !!document.activeElement && row.contains(document.activeElement);
      }, rowSel(id)),
    { timeout: 5000, message: `focus inside row ${id}` },
  );
}

/** The row with this id as the page shows it (or undefined). */
export async function rowOf(page, id) {
  return (await readRows(page)).find((r) => r.id === id);
}

/** Collects the JSON bodies of a page's requests to /sync (in order). */
export function recordSyncs(page) {
  /** @type {{t: number, body: any, url: string}[]} */
  const out = [];
  page.on('request', (req) => {
    if (req.method() === 'POST' && /\/api\/v1\/docs\/[^/]+\/sync$/.test(new URL(req.url()).pathname)) {
      let body = null;
      try {
        body = req.postDataJSON();
      } catch {
        body = req.postData();
      }
      out.push({ t: Date.now(), body, url: req.url() });
    }
  });
  return out;
}

/** Collects /sync reply bodies of a page (in order). */
export function recordSyncReplies(page) {
  /** @type {{t: number, status: number, body: any}[]} */
  const out = [];
  page.on('response', async (res) => {
    if (res.request().method() === 'POST' && /\/api\/v1\/docs\/[^/]+\/sync$/.test(new URL(res.url()).pathname)) {
      // Recorded at once, the body filled in when it has arrived: reading it takes a round
      // trip to the browser, during which the page may already show what the reply caused.
      /** @type {{t: number, status: number, body: any}} */
      const entry = { t: Date.now(), status: res.status(), body: null };
      out.push(entry);
      try {
        entry.body = await res.json();
      } catch {
        /* not JSON */
      }
    }
  });
  return out;
}

export async function stageIs(page, label) {
  return (await readStage(page)) === label;
}

/** Asserts that no row of the outline is a conflict copy. */
export function assertNoCopies(outline, why = '') {
  const copies = outline.filter((r) => r.conflictOf);
  assert.equal(copies.length, 0, `unexpected conflict copies ${why}: ${render(copies)}`);
}

/**
 * A plain HTTP proxy (WebSocket upgrades included) that, while `blocked`, drops every
 * `POST …/sync` by closing the connection: a network failure for writes only.
 * @param {string} upstream host:port
 */
export async function writeCutProxy(upstream) {
  const [uHost, uPort] = upstream.split(':');
  const state = { blocked: false, dropped: 0, base: '', close: () => {} };
  const server = http.createServer((req, res) => {
    if (state.blocked && req.method === 'POST' && /\/sync(\?|$)/.test(req.url ?? '')) {
      state.dropped++;
      req.socket.destroy();
      return;
    }
    const up = http.request(
      { host: uHost, port: Number(uPort), method: req.method, path: req.url, headers: req.headers },
      (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        ur.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  server.on('upgrade', (req, socket, head) => {
    const up = net.connect(Number(uPort), uHost, () => {
      const lines = [`${req.method} ${req.url} HTTP/1.1`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
      up.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (head.length) up.write(head);
      up.pipe(socket);
      socket.pipe(up);
    });
    up.on('error', () => socket.destroy());
    socket.on('error', () => up.destroy());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const addr = /** @type {import('node:net').AddressInfo} */ (server.address());
  state.base = `http://127.0.0.1:${addr.port}`;
  state.close = () => {
    server.closeAllConnections();
    server.close();
  };
  return state;
}
