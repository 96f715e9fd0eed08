// @ts-check
// End-to-end harness: the real docsync binary (temp SQLite file, free loopback port, manual
// clock), Debian's nginx with the files of config/nginx/, Debian's Chromium driven by
// playwright-core, API helpers per user, and artifacts (screenshots, Playwright traces,
// server/nginx/console logs) when a scenario fails. See docs/e2e.md.
//
// Every scenario is written as `scenario(name, async (h) => { … })`: `h` (a Harness) owns
// every process, browser and context the scenario starts and ends them all, also on failure
// or timeout. Nothing here sleeps for a fixed time: `waitFor` polls a condition with a
// deadline.

import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';

import { generateKeyBetween } from 'fractional-indexing';
import { chromium } from 'playwright-core';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = process.env.DOCSYNC_BIN || path.join(ROOT, 'target', 'debug', 'docsync');
export const ARTIFACTS = path.join(ROOT, 'e2e', 'artifacts');
export const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const HEADED = process.env.HEADED === '1';
const KEEP = process.env.E2E_KEEP === '1';

/** The launch flags every run uses (docs/e2e.md). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

// ---------------------------------------------------------------------------------------
// Child processes: every one is SIGKILLed when this test file's process exits, whatever
// happened (a crashed test must not leave a server or nginx behind).

/** @type {Set<import('node:child_process').ChildProcess>} */
const children = new Set();
function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}
process.once('exit', () => {
  for (const c of children) {
    try {
      c.kill('SIGKILL');
    } catch {
      /* already gone */
    }
  }
});
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => process.exit(130));
}

// ---------------------------------------------------------------------------------------
// Small utilities

export function newId(prefix) {
  return prefix + randomUUID().replace(/-/g, '');
}

/** Polls `cond` (sync or async) until it returns a truthy value, which it returns. */
export async function waitFor(cond, opts = {}) {
  const o = typeof opts === 'string' ? { message: opts } : opts;
  const timeout = o.timeout ?? 10_000;
  const interval = o.interval ?? 50;
  const deadline = Date.now() + timeout;
  let last;
  let lastErr;
  for (;;) {
    try {
      last = await cond();
      lastErr = undefined;
      if (last) return last;
    } catch (e) {
      lastErr = e;
    }
    if (Date.now() >= deadline) {
      let msg = typeof o.message === 'function' ? await safe(o.message) : o.message;
      msg = `timed out after ${timeout} ms waiting for ${msg || 'a condition'}`;
      if (lastErr) msg += `\n  last error: ${lastErr.stack || lastErr}`;
      else msg += `\n  last value: ${short(last)}`;
      throw new Error(msg);
    }
    await delay(interval);
  }
}

async function safe(fn) {
  try {
    return await fn();
  } catch (e) {
    return `(message failed: ${e})`;
  }
}

function short(v) {
  let s;
  try {
    s = JSON.stringify(v);
  } catch {
    s = String(v);
  }
  return s && s.length > 2000 ? s.slice(0, 2000) + '…' : s;
}

/** Runs `p` but rejects after `ms`. */
export async function withDeadline(p, ms, message) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}

export async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (s.address());
      s.close(() => resolve(port));
    });
  });
}

async function portBindable(host, port) {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, host, () => s.close(() => resolve(true)));
  });
}

async function portOpen(host, port) {
  return new Promise((resolve) => {
    const c = net.connect({ host, port });
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i];
}

function slug(s) {
  return s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 80);
}

// ---------------------------------------------------------------------------------------
// The server

/** The process environment without any DOCSYNC_* (the server would read them as settings). */
function cleanEnv() {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('DOCSYNC_')) env[k] = v;
  }
  return env;
}

/**
 * @typedef {{name: string, displayName: string, password: string, token: string, id: string,
 *   admin: boolean}} User
 */

export class Server {
  /** @param {{env?: Record<string,string>, label?: string}} [opts] */
  constructor(opts = {}) {
    this.label = opts.label || 'server';
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docsync-e2e-'));
    this.dbPath = path.join(this.dir, 'docsync.db');
    this.logPath = path.join(this.dir, 'server.log');
    this.extraEnv = opts.env || {};
    /** @type {import('node:child_process').ChildProcess|null} */
    this.child = null;
    /** `127.0.0.1:PORT` once started; kept across restarts. */
    this.addr = '';
    this.starts = 0;
  }

  get base() {
    return `http://${this.addr}`;
  }

  get port() {
    return Number(this.addr.split(':')[1]);
  }

  env() {
    return {
      ...cleanEnv(),
      DOCSYNC_STORAGE__PATH: this.dbPath,
      DOCSYNC_LOGGING__LEVEL: process.env.E2E_SERVER_LOG || 'warn',
      DOCSYNC_SERVER__WORKERS: '2',
      DOCSYNC_ACTORS__ARBITERS: '2',
      DOCSYNC_TESTING__CLOCK: 'manual',
      // E2E_STATIC_FROM_DISK=1 serves static/ from disk (while developing the app without
      // rebuilding); by default the files embedded in the binary are tested, as shipped.
      ...(process.env.E2E_STATIC_FROM_DISK === '1' ? { DOCSYNC_SERVER__STATIC_DIR: path.join(ROOT, 'static') } : {}),
      ...this.extraEnv,
    };
  }

  /** Starts `docsync serve` (on the previous address after a restart). */
  async start() {
    if (!fs.existsSync(BIN)) {
      throw new Error(
        `${BIN} not found: build it with \`flock /tmp/cargo.lock cargo build -p docsync --bin docsync\` or set DOCSYNC_BIN`,
      );
    }
    const bind = this.addr || '127.0.0.1:0';
    const log = fs.openSync(this.logPath, 'a');
    fs.writeSync(log, `--- start #${++this.starts} on ${bind} at ${new Date().toISOString()}\n`);
    const child = track(
      spawn(BIN, ['serve'], {
        cwd: this.dir,
        env: { ...this.env(), DOCSYNC_SERVER__BIND: bind },
        stdio: ['ignore', 'pipe', log],
      }),
    );
    fs.closeSync(log);
    this.child = child;
    const addr = await new Promise((resolve, reject) => {
      let buf = '';
      const timer = setTimeout(() => reject(new Error(`docsync did not report its address within 30 s\n${this.logTail()}`)), 30_000);
      const onExit = (code, sig) => {
        clearTimeout(timer);
        reject(new Error(`docsync exited (${code ?? sig}) before listening\n${this.logTail()}`));
      };
      child.once('exit', onExit);
      child.stdout.on('data', (d) => {
        buf += d.toString();
        const m = /docsync listening on http:\/\/(\S+)/.exec(buf);
        if (m) {
          clearTimeout(timer);
          child.off('exit', onExit);
          resolve(m[1]);
        }
      });
    });
    // Keep draining stdout into the log so the pipe never fills.
    child.stdout.on('data', (d) => fs.appendFileSync(this.logPath, d));
    this.addr = addr;
    return this;
  }

  logTail(n = 4000) {
    try {
      const s = fs.readFileSync(this.logPath, 'utf8');
      return s.slice(-n);
    } catch {
      return '';
    }
  }

  get running() {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGKILL: no shutdown code runs, exactly like a crash. */
  async kill9() {
    const c = this.child;
    this.child = null;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  }

  /** SIGKILL (if running), then a new process on the same address and database. */
  async restart() {
    await this.kill9();
    const [host, port] = [this.addr.split(':')[0], this.port];
    await waitFor(() => portBindable(host, port), { timeout: 15_000, message: `port ${port} free again` });
    return this.start();
  }

  async stop() {
    await this.kill9();
    if (!KEEP) fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** Runs `docsync ARGS` against this server's database. */
  cli(args, stdin) {
    const r = spawnSync(BIN, args, {
      cwd: this.dir,
      env: this.env(),
      input: stdin ?? '',
      encoding: 'utf8',
      timeout: 60_000,
    });
    return { ok: r.status === 0, stdout: r.stdout || '', stderr: r.stderr || String(r.error || '') };
  }

  /**
   * Creates a user with a password (`docsync user add NAME --password-stdin`).
   * @returns {Promise<User>}
   */
  async addUser(name, opts = {}) {
    const displayName = opts.displayName || name[0].toUpperCase() + name.slice(1);
    const password = opts.password || `${name}-e2e-password`;
    const args = ['user', 'add', name, '--display-name', displayName, '--password-stdin'];
    if (opts.admin) args.push('--admin');
    const r = this.cli(args, password + '\n');
    if (!r.ok) throw new Error(`docsync ${args.join(' ')} failed: ${r.stderr}`);
    const m = /^token: (\S+)/m.exec(r.stdout);
    if (!m) throw new Error(`no token in: ${r.stdout}`);
    const token = m[1];
    const me = await this.api({ token }).json('GET', '/api/v1/me');
    return { name, displayName, password, token, id: me.id ?? me.userId, admin: !!opts.admin };
  }

  /** @param {{token: string}} user */
  api(user, base) {
    return new Api(base || this.base, user.token);
  }

  /** Moves the manual clock forward. */
  async advanceClock(ms) {
    const r = await fetch(`${this.base}/api/v1/testing/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ advanceMs: ms }),
    });
    if (!r.ok) throw new Error(`advance clock: ${r.status} ${await r.text()}`);
    return r.json();
  }

  /** One compaction pass now (admin user). */
  async compact(admin) {
    return this.api(admin).json('POST', '/api/v1/admin/compact');
  }

  async metrics() {
    const r = await fetch(`${this.base}/metrics`);
    return r.text();
  }
}

export class ApiError extends Error {
  constructor(method, p, status, body) {
    super(`${method} ${p} → ${status}: ${typeof body === 'string' ? body : JSON.stringify(body)}`);
    this.status = status;
    this.body = body;
  }
}

/** Bearer-token API client of one user. */
export class Api {
  constructor(base, token) {
    this.base = base;
    this.token = token;
  }

  async req(method, p, body) {
    const headers = { authorization: `Bearer ${this.token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const r = await fetch(this.base + p, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    let json;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = text;
    }
    return { status: r.status, body: json };
  }

  /** A request that must answer 2xx; returns the body. */
  async json(method, p, body) {
    const r = await this.req(method, p, body);
    if (r.status < 200 || r.status > 299) throw new ApiError(method, p, r.status, r.body);
    return r.body;
  }

  async createDoc(title = 'E2E document') {
    return (await this.json('POST', '/api/v1/docs', { title })).docId;
  }

  /**
   * Sets the document's shares: `[[user, 'read'|'write'], …]` (the complete list).
   * @param {string} docId @param {[User, 'read'|'write'][]} list
   */
  async setShares(docId, list) {
    return this.json(
      'PUT',
      `/api/v1/docs/${docId}/shares`,
      list.map(([u, access]) => ({ kind: 'user', id: u.id, access })),
    );
  }

  async snapshot(docId) {
    return this.json('GET', `/api/v1/docs/${docId}/snapshot`);
  }

  async sync(docId, body) {
    return this.json('POST', `/api/v1/docs/${docId}/sync`, body);
  }

  /** Inserts top-level bullets (one /sync, a throw-away client that leaves at once). */
  async insertBullets(docId, texts) {
    const clientId = newId('cl_');
    const snap = await this.snapshot(docId);
    const live = snap.blocks.filter((b) => !b.deleted && b.parentId === null);
    let key = live.length ? live[live.length - 1].orderKey : null;
    const ops = [];
    const ids = [];
    for (const t of texts) {
      key = generateKeyBetween(key, null);
      const blockId = newId('blk_');
      ids.push(blockId);
      ops.push({ opId: newId('op_'), kind: 'insert', blockId, parentId: null, orderKey: key, content: t });
    }
    const r = await this.sync(docId, { clientId, lastSeq: snap.headSeq, ops, leases: { hold: [] } });
    await this.leave(docId, clientId);
    const bad = r.results.filter((x) => x.status !== 'applied');
    if (bad.length) throw new Error(`insert refused: ${JSON.stringify(bad)}`);
    return ids;
  }

  async leave(docId, clientId) {
    return this.req('POST', `/api/v1/docs/${docId}/leave`, { clientId });
  }

  /**
   * The whole log from `from` (default: the log floor) to the head, paging over `hasMore`,
   * with a throw-away client that leaves at the end.
   */
  async readLog(docId, from) {
    const snap = await this.snapshot(docId);
    const clientId = newId('cl_');
    let lastSeq = from ?? snap.logFloor ?? 0;
    const entries = [];
    try {
      for (let page = 0; page < 10_000; page++) {
        const r = await this.sync(docId, { clientId, lastSeq, leases: { hold: [] } });
        if (r.resync) return { entries, resync: true, headSeq: r.headSeq, logFloor: snap.logFloor };
        entries.push(...r.ops);
        if (r.ops.length) lastSeq = r.ops[r.ops.length - 1].seq;
        if (!r.hasMore) return { entries, resync: false, headSeq: r.headSeq, logFloor: snap.logFloor };
      }
      throw new Error('log paging did not end');
    } finally {
      await this.leave(docId, clientId);
    }
  }

  /** Live blocks in document order: `{id, content, depth, conflictOf, …}`. */
  async liveBlocks(docId) {
    const snap = await this.snapshot(docId);
    return snap.blocks.filter((b) => !b.deleted);
  }
}

/** Counts log entries per op kind and per block, from `readLog` entries. */
export function logStats(entries) {
  const byKind = {};
  const opIds = new Set();
  let dupOpIds = 0;
  for (const e of entries) {
    byKind[e.kind] = (byKind[e.kind] || 0) + 1;
    if (opIds.has(e.opId)) dupOpIds++;
    opIds.add(e.opId);
  }
  return { byKind, dupOpIds, total: entries.length };
}

// ---------------------------------------------------------------------------------------
// nginx

export function nginxBin() {
  for (const p of ['/usr/sbin/nginx', '/usr/local/sbin/nginx', '/usr/bin/nginx']) {
    if (fs.existsSync(p)) return p;
  }
  throw new Error("nginx is not installed: the proxy scenarios need Debian's nginx (apt-get install nginx-light)");
}

export class Nginx {
  constructor(config) {
    this.config = config;
    this.dir = '';
    this.addr = '';
    /** @type {import('node:child_process').ChildProcess|null} */
    this.child = null;
  }

  get base() {
    return `http://${this.addr}`;
  }

  /**
   * Starts nginx with config/nginx/<config>, `@LISTEN@`/`@UPSTREAM@` replaced; `listen`
   * (after `stop`) brings it back on the same address.
   */
  async start(upstreamAddr, listenAddr) {
    const bin = nginxBin();
    this.upstream = upstreamAddr;
    // E2E_NGINX_DIR: try proxy configs from another folder (same file names) before
    // changing config/nginx/.
    const confDir = process.env.E2E_NGINX_DIR || path.join(ROOT, 'config', 'nginx');
    const template = fs.readFileSync(path.join(confDir, this.config), 'utf8');
    for (let attempt = 0; attempt < 5; attempt++) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docsync-e2e-nginx-'));
      if (listenAddr) {
        const [h, p] = listenAddr.split(':');
        await waitFor(() => portBindable(h, Number(p)), { timeout: 15_000, message: `port ${p} free again` });
      }
      const listen = listenAddr || `127.0.0.1:${await freePort()}`;
      const conf = template.replaceAll('@LISTEN@', listen).replaceAll('@UPSTREAM@', upstreamAddr);
      if (conf.includes('@')) throw new Error(`placeholder left in ${this.config}`);
      fs.writeFileSync(path.join(dir, 'nginx.conf'), conf);
      const errFd = fs.openSync(path.join(dir, 'stderr.log'), 'a');
      const child = track(
        spawn(
          bin,
          [
            '-p',
            `${dir}/`,
            '-c',
            `${dir}/nginx.conf`,
            '-g',
            `daemon off; master_process off; error_log ${dir}/error.log; pid ${dir}/nginx.pid;`,
          ],
          { stdio: ['ignore', 'ignore', errFd] },
        ),
      );
      fs.closeSync(errFd);
      let exited = null;
      child.once('exit', (code, sig) => (exited = code ?? sig));
      const [host, port] = listen.split(':');
      const deadline = Date.now() + 10_000;
      for (;;) {
        if (exited !== null) break;
        if (await portOpen(host, Number(port))) {
          this.dir = dir;
          this.addr = listen;
          this.child = child;
          return this;
        }
        if (Date.now() > deadline) {
          child.kill('SIGKILL');
          throw new Error(`nginx (${this.config}) did not accept connections on ${listen} within 10 s`);
        }
        await delay(20);
      }
      const log = this.readLog(dir);
      fs.rmSync(dir, { recursive: true, force: true });
      if (listenAddr || !log.includes('Address already in use')) throw new Error(`nginx (${this.config}) exited with ${exited}:\n${log}`);
    }
    throw new Error(`nginx (${this.config}) could not get a free port in 5 attempts`);
  }

  /** Stops it (connections cut) and starts it again on the same address. */
  async restart() {
    const addr = this.addr;
    await this.stop();
    return this.start(this.upstream, addr);
  }

  readLog(dir = this.dir) {
    let s = '';
    for (const f of ['error.log', 'stderr.log']) {
      try {
        s += fs.readFileSync(path.join(dir, f), 'utf8');
      } catch {
        /* none */
      }
    }
    return s;
  }

  async stop() {
    const c = this.child;
    this.child = null;
    if (c && c.exitCode === null && c.signalCode === null) {
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await exited;
    }
    if (this.dir && !KEEP) fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------
// The browser and the app's DOM contract (docs/browser.md)

export const SEL = {
  loginForm: 'form#login',
  editor: '#editor[data-doc-id]',
  title: '#doc-title',
  outline: '[role=tree]#outline',
  row: '#outline [role=treeitem][data-block-id]',
  rowText: '.row-text',
  rowLock: '.row-lock',
  stage: '#status-stage',
  pending: '#status-pending',
  notice: '#notice',
  presence: '#presence',
  accept: '.conflict-accept',
  discard: '.conflict-discard',
};

export const STAGE = {
  connecting: 'Connecting…',
  live: 'Live',
  longpoll: 'Live (long-polling)',
  interval: 'Syncing every 3 s',
  offline: 'Offline – changes saved on this device',
};

export const rowSel = (id) => `#outline [role=treeitem][data-block-id="${id}"]`;

/**
 * The outline as the page shows it: one entry per treeitem in document order.
 * @param {import('playwright-core').Page} page
 * @returns {Promise<{id: string, text: string, level: number, locked: boolean,
 *   lockName: string|null, conflictOf: string|null}[]>}
 */
export async function readRows(page) {
  return page.evaluate(() => {
    const own = (el, sel) => Array.from(el.querySelectorAll(sel)).find((x) => x.closest('[role=treeitem]') === el) || null;
    const textOf = (t) => {
      if (!t) return '';
      if ('value' in t && typeof t.value === 'string' && (t.tagName === 'TEXTAREA' || t.tagName === 'INPUT')) return t.value;
      return t.textContent || '';
    };
    return Array.from(document.querySelectorAll('#outline [role=treeitem][data-block-id]')).map((el) => {
      const lock = own(el, '.row-lock');
      return {
        id: el.getAttribute('data-block-id'),
        text: textOf(own(el, '.row-text')),
        level: Number(el.getAttribute('aria-level') || '0'),
        locked: el.getAttribute('data-locked') === 'true',
        lockName: lock && lock.offsetParent !== null ? (lock.textContent || '').trim() : lock ? (lock.textContent || '').trim() : null,
        conflictOf: el.getAttribute('data-conflict-of'),
      };
    });
  });
}

export async function readStage(page) {
  return (await page.locator(SEL.stage).textContent({ timeout: 2000 }))?.trim() ?? '';
}

export async function readNotice(page) {
  const n = page.locator(SEL.notice);
  if ((await n.count()) === 0) return '';
  return ((await n.first().textContent()) || '').trim();
}

/** The text field of one row. */
export function rowText(page, id) {
  return page.locator(`${rowSel(id)} ${SEL.rowText}`).first();
}

/** Waits until the page shows `label` in #status-stage. */
export async function waitStage(page, label, timeout = 15_000) {
  return waitFor(async () => (await readStage(page)) === label, {
    timeout,
    interval: 100,
    message: async () => `stage "${label}" (shows "${await readStage(page).catch(() => '?')}")`,
  });
}

/** Compares the texts of live blocks (API, document order) with a page's rows. */
export function outlineOf(rows) {
  return rows.map((r) => `${' '.repeat(2 * (r.level ?? r.depth ?? 0))}${r.text ?? r.content}`).join('\n');
}

/** Puts the caret at the end of a row's text (click, then End). */
export async function focusRowEnd(page, id) {
  const t = rowText(page, id);
  await t.click();
  await page.keyboard.press('End');
}

// ---------------------------------------------------------------------------------------
// The scenario wrapper

/**
 * Declares one node:test test that gets a fresh Harness, cleans everything up at the end and
 * leaves artifacts under e2e/artifacts/<test>/ when it fails.
 * @param {string} name
 * @param {(h: Harness) => Promise<void>} fn
 * @param {{timeout?: number}} [opts]
 */
export function scenario(name, fn, opts = {}) {
  const timeout = Number(process.env.E2E_TIMEOUT_MS) || opts.timeout || 120_000;
  test(name, { timeout: timeout + 60_000 }, async () => {
    const h = new Harness(name);
    let failure = null;
    try {
      await withDeadline(fn(h), timeout, `scenario "${name}" did not finish within ${timeout} ms`);
    } catch (e) {
      failure = e;
    }
    if (failure) {
      try {
        await withDeadline(h.saveArtifacts(failure), 30_000, 'saving artifacts took over 30 s');
      } catch (e) {
        console.error(`artifacts: ${e}`);
      }
    }
    await h.close();
    if (failure) throw failure;
  });
}

export class Harness {
  constructor(name) {
    this.name = name;
    this.slug = slug(name);
    /** @type {Server[]} */ this.servers = [];
    /** @type {Nginx[]} */ this.proxies = [];
    /** @type {import('playwright-core').Browser|null} */ this.browser = null;
    /** @type {{label: string, context: import('playwright-core').BrowserContext, savedTrace?: string}[]} */
    this.contexts = [];
    /** @type {string[]} */ this.console = [];
    /** @type {{name: string, fn: () => Promise<unknown>}[]} */ this.dumps = [];
    this.t0 = Date.now();
  }

  /** Registers something to write into the artifacts (as JSON) if the scenario fails. */
  dumpOnFailure(name, fn) {
    this.dumps.push({ name, fn });
  }

  log(...args) {
    const line = `[${((Date.now() - this.t0) / 1000).toFixed(1)}s] ${args.join(' ')}`;
    this.console.push(`(test) ${line}`);
    if (process.env.E2E_VERBOSE === '1') console.log(line);
  }

  /** A named part of a scenario: logged, and named in the error if it fails. */
  async step(name, fn) {
    this.log(`step: ${name}`);
    try {
      return await fn();
    } catch (e) {
      if (e instanceof Error) e.message = `[${name}] ${e.message}`;
      throw e;
    }
  }

  /** Starts a server with a manual clock and a temp database. */
  async server(opts = {}) {
    const s = new Server(opts);
    this.servers.push(s);
    await s.start();
    return s;
  }

  /** Creates users; the first one is an admin (compaction). Returns name → User. */
  async users(server, names) {
    /** @type {Record<string, User>} */
    const out = {};
    for (const [i, n] of names.entries()) out[n] = await server.addUser(n, { admin: i === 0 });
    return out;
  }

  async nginx(config, server) {
    const n = new Nginx(config);
    this.proxies.push(n);
    await n.start(server.addr);
    return n;
  }

  async launch() {
    if (this.browser) return this.browser;
    this.browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: !HEADED,
      slowMo: HEADED ? Number(process.env.SLOWMO || 100) : 0,
      args: HEADED ? CHROMIUM_ARGS.filter((a) => a !== '--headless') : CHROMIUM_ARGS,
    });
    return this.browser;
  }

  /**
   * A browser context for one person (own cookies, IndexedDB, service worker), traced.
   * @param {string} label e.g. 'alice'
   * @param {string} baseURL server or proxy base
   */
  async context(label, baseURL, opts = {}) {
    const browser = await this.launch();
    // opts.phone: a 375 px wide touch screen (Chromium's touch emulation)
    const device = opts.phone ? { viewport: { width: 375, height: 700 }, hasTouch: true, isMobile: true } : { viewport: { width: 1000, height: 800 } };
    // opts.noServiceWorker: requests reach page.route (a service worker would answer them first)
    const context = await browser.newContext({ baseURL, ...device, ...(opts.noServiceWorker ? { serviceWorkers: 'block' } : {}) });
    // A page clock that runs in real time but can jump ahead (`context.clock.fastForward`):
    // lets a test end a lease or an idle period without waiting for it.
    if (opts.fakeClock) await context.clock.install();
    context.setDefaultTimeout(15_000);
    // The trace keeps DOM snapshots of every action; the screencast (a JPEG per frame) is
    // costly while typing on 2 cores, so it is opt-in: E2E_TRACE_SCREENSHOTS=1.
    await context.tracing.start({
      screenshots: process.env.E2E_TRACE_SCREENSHOTS === '1',
      snapshots: true,
      title: `${this.name} — ${label}`,
    });
    this.contexts.push({ label, context });
    const tag = (p) => `${label}#${context.pages().indexOf(p)}`;
    context.on('page', (p) => {
      p.on('console', (m) => this.console.push(`[${tag(p)} ${m.type()}] ${m.text()}`));
      p.on('pageerror', (e) => this.console.push(`[${tag(p)} pageerror] ${e.stack || e}`));
      p.on('requestfailed', (r) => {
        const u = new URL(r.url());
        this.console.push(`[${tag(p)} requestfailed] ${r.method()} ${u.pathname} ${r.failure()?.errorText ?? ''}${r.serviceWorker() ? ' (service worker)' : ''}`);
      });
    });
    return context;
  }

  /**
   * Closes a context before the scenario ends; its trace is kept aside and lands in the
   * artifacts if the scenario fails later.
   * @param {import('playwright-core').BrowserContext} context
   */
  async closeContext(context) {
    const entry = this.contexts.find((c) => c.context === context);
    if (entry) {
      const file = path.join(os.tmpdir(), `docsync-e2e-trace-${process.pid}-${Date.now()}-${entry.label}.zip`);
      try {
        await context.tracing.stop({ path: file });
        entry.savedTrace = file;
      } catch {
        /* already stopped */
      }
    }
    await context.close();
  }

  /** A context logged in through POST /api/v1/auth/login (the login page is not under test). */
  async loggedIn(label, baseURL, user, opts = {}) {
    const context = await this.context(label, baseURL, opts);
    const r = await context.request.post('/api/v1/auth/login', {
      data: { username: user.name, password: user.password },
    });
    if (!r.ok()) throw new Error(`login ${user.name}: ${r.status()} ${await r.text()}`);
    return context;
  }

  /** Logs in through the real login form. */
  async loginViaForm(page, user) {
    await page.goto('/login');
    await page.locator(`${SEL.loginForm} [name=username]`).fill(user.name);
    await page.locator(`${SEL.loginForm} [name=password]`).fill(user.password);
    await page.locator(SEL.loginForm).evaluate((f) => /** @type {HTMLFormElement} */ (f).requestSubmit());
    await waitFor(() => !new URL(page.url()).pathname.startsWith('/login'), {
      timeout: 10_000,
      message: async () => `leaving /login after logging in as ${user.name} (error: ${await page.locator('#login-error').textContent().catch(() => '')})`,
    });
  }

  /**
   * A new page of `context` with the editor of `docId` open and loaded; `before(page)` runs
   * before the navigation (to attach request recorders).
   */
  async openDoc(context, docId, opts = {}) {
    const page = await context.newPage();
    if (opts.before) await opts.before(page);
    await page.goto(`/d/${docId}`);
    await page.locator(`#editor[data-doc-id="${docId}"]`).waitFor({ timeout: 15_000 });
    await waitFor(async () => (await readStage(page)) !== '', { timeout: 15_000, message: 'a status stage' });
    // The editor is styled: its stylesheet is applied, not only preloaded.
    await waitFor(
      () => page.evaluate(() => [...document.styleSheets].some((s) => (s.href ?? '').endsWith('/app/editor/editor.css'))),
      { timeout: 15_000, message: "the editor's stylesheet applied" },
    );
    return page;
  }

  async saveArtifacts(err) {
    const dir = path.join(ARTIFACTS, this.slug);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'error.txt'), `${err && err.stack ? err.stack : err}\n`);
    for (const { label, context, savedTrace } of this.contexts) {
      if (savedTrace) {
        try {
          fs.copyFileSync(savedTrace, path.join(dir, `${label}.trace.zip`));
        } catch (e) {
          this.console.push(`(trace ${label} failed: ${e})`);
        }
        continue;
      }
      for (const [i, p] of context.pages().entries()) {
        try {
          await p.screenshot({ path: path.join(dir, `${label}-page${i}.png`), fullPage: true, timeout: 5000 });
          fs.writeFileSync(path.join(dir, `${label}-page${i}.html`), await p.content());
        } catch (e) {
          this.console.push(`(screenshot ${label}#${i} failed: ${e})`);
        }
      }
      try {
        await context.tracing.stop({ path: path.join(dir, `${label}.trace.zip`) });
      } catch (e) {
        this.console.push(`(trace ${label} failed: ${e})`);
      }
    }
    for (const [i, s] of this.servers.entries()) {
      try {
        fs.copyFileSync(s.logPath, path.join(dir, `server${i}.log`));
      } catch {
        /* none */
      }
    }
    for (const [i, n] of this.proxies.entries()) fs.writeFileSync(path.join(dir, `nginx${i}-${n.config}.log`), n.readLog());
    for (const d of this.dumps) {
      try {
        const v = await withDeadline(d.fn(), 10_000, 'dump took over 10 s');
        fs.writeFileSync(path.join(dir, `${slug(d.name)}.json`), JSON.stringify(v, null, 1));
      } catch (e) {
        this.console.push(`(dump ${d.name} failed: ${e})`);
      }
    }
    fs.writeFileSync(path.join(dir, 'console.log'), this.console.join('\n') + '\n');
    console.error(`artifacts of "${this.name}": ${path.relative(ROOT, dir)}/`);
  }

  async close() {
    for (const c of this.contexts) if (c.savedTrace) fs.rmSync(c.savedTrace, { force: true });
    if (this.browser) {
      await withDeadline(this.browser.close(), 15_000, 'browser close').catch(() => {});
      this.browser = null;
    }
    for (const n of this.proxies) await n.stop().catch(() => {});
    for (const s of this.servers) await s.stop().catch(() => {});
  }
}
