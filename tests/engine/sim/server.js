// @ts-check
// Starts the real `docsync` binary for the engine simulation: temp folder and SQLite file,
// a free port on loopback, the manual clock, users and tokens through the CLI; and talks
// to it over node:http (not the global fetch, whose internal timers would be caught by
// vitest's fake timers). Each test starts its own server and kills it at the end.

import { spawn, execFile } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(here, '../../..');
export const BIN = process.env.DOCSYNC_BIN || path.join(ROOT, 'target/debug/docsync');

// No keep-alive: a reused socket can meet the server closing it as idle (a reset that only
// happens on a busy machine), which would turn into a "network error" the seed did not choose.
const agent = new http.Agent({ keepAlive: false, maxSockets: 64 });

// Servers still running when this process exits (a test that was interrupted) go with it.
const running = new Set();
process.on('exit', () => {
  for (const c of running) c.kill('SIGKILL');
});

/**
 * One HTTP request over node:http. Resolves `{status, headers, text}`; rejects on a socket
 * error. Bounded by `timeoutMs` of real time.
 * @param {string} url
 * @param {{method?: string, headers?: Record<string,string>, body?: string, timeoutMs?: number}} [opts]
 */
export function httpRequest(url, opts = {}) {
  const { method = 'GET', headers = {}, body, timeoutMs = 30000 } = opts;
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const h = { ...headers };
    if (body !== undefined) h['content-length'] = String(Buffer.byteLength(body));
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers: h, agent },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`timeout after ${timeoutMs} ms: ${method} ${url}`)));
    req.on('error', reject);
    if (body !== undefined) req.write(body);
    req.end();
  });
}

/** A `fetch` with the real network underneath (node:http), returning a standard Response. */
export async function nodeFetch(input, init = {}) {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  /** @type {Record<string, string>} */
  const headers = {};
  const hin = init.headers;
  if (hin) {
    if (typeof hin.forEach === 'function' && !Array.isArray(hin)) hin.forEach((v, k) => (headers[k.toLowerCase()] = v));
    else for (const [k, v] of Array.isArray(hin) ? hin : Object.entries(hin)) headers[k.toLowerCase()] = String(v);
  }
  let body = init.body;
  if (body !== undefined && body !== null && typeof body !== 'string') body = String(body);
  const r = await httpRequest(url, { method: init.method || 'GET', headers, body: body ?? undefined });
  const out = new Headers();
  for (const [k, v] of Object.entries(r.headers)) if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(', ') : v);
  const nullBody = r.status === 204 || r.status === 304;
  return new Response(nullBody ? null : r.text, { status: r.status, headers: out });
}

function execCli(env, cwd, args, stdin) {
  return new Promise((resolve, reject) => {
    const child = execFile(BIN, args, { env, cwd, timeout: 30000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`docsync ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve(String(stdout));
    });
    if (stdin !== undefined) child.stdin?.end(stdin);
  });
}

export class TestServer {
  /** @param {Record<string,string>} [env] extra DOCSYNC_* settings */
  static async start(env = {}) {
    if (!fs.existsSync(BIN)) {
      throw new Error(`${BIN} is missing: build it with flock /tmp/cargo.lock cargo build -p docsync --bin docsync`);
    }
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docsync-engine-sim-'));
    const s = new TestServer(dir, env);
    await s.spawn();
    return s;
  }

  constructor(dir, env) {
    this.dir = dir;
    this.dbPath = path.join(dir, 'docsync.db');
    this.env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? dir,
      DOCSYNC_STORAGE__PATH: this.dbPath,
      DOCSYNC_LOGGING__LEVEL: 'error',
      DOCSYNC_SERVER__WORKERS: '2',
      DOCSYNC_ACTORS__ARBITERS: '2',
      DOCSYNC_STORAGE__SYNCHRONOUS: 'normal',
      ...env,
    };
    this.base = '';
    this.child = null;
  }

  async spawn() {
    const child = spawn(BIN, ['serve'], {
      cwd: this.dir,
      env: { ...this.env, DOCSYNC_SERVER__BIND: '127.0.0.1:0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    running.add(child);
    child.on('exit', () => running.delete(child));
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
      if (stderr.length > 20000) stderr = stderr.slice(-10000);
    });
    this.base = await new Promise((resolve, reject) => {
      let buf = '';
      const timer = setRealTimeout(() => reject(new Error(`server did not start in 30 s\n${stderr}`)), 30000);
      child.stdout.on('data', (d) => {
        buf += d;
        const m = /docsync listening on (\S+)/.exec(buf);
        if (m) {
          clearRealTimeout(timer);
          resolve(m[1].startsWith('http') ? m[1] : `http://${m[1]}`);
        }
      });
      child.on('exit', (code) => reject(new Error(`server exited (${code}) before listening\n${stderr}`)));
    });
    child.stdout.resume();
  }

  /** SIGKILL and remove the temp folder. */
  async stop() {
    if (this.child && this.child.exitCode === null) {
      const exited = new Promise((r) => this.child.once('exit', r));
      this.child.kill('SIGKILL');
      await exited;
    }
    this.child = null;
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  cli(args, stdin) {
    return execCli(this.env, this.dir, args, stdin);
  }

  /** Creates a user through the CLI; returns `{name, token, userId}`. */
  async addUser(name, { admin = false } = {}) {
    const out = await this.cli(['user', 'add', name, ...(admin ? ['--admin'] : [])]);
    const line = out.split('\n').find((l) => l.startsWith('token: '));
    if (!line) throw new Error(`no token line in: ${out}`);
    const token = line.slice('token: '.length).trim();
    const me = await this.api(token, 'GET', '/api/v1/me');
    if (me.status !== 200) throw new Error(`me: ${me.status} ${JSON.stringify(me.body)}`);
    return { name, token, userId: me.body.id, displayName: me.body.name ?? name };
  }

  /** JSON request with a bearer token (or none). */
  async api(token, method, p, body) {
    const headers = { accept: 'application/json' };
    if (token) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const r = await httpRequest(this.base + p, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let parsed;
    try {
      parsed = r.text ? JSON.parse(r.text) : null;
    } catch {
      parsed = r.text;
    }
    return { status: r.status, body: parsed };
  }

  async ok(token, method, p, body, want = 200) {
    const r = await this.api(token, method, p, body);
    if (r.status !== want) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  }

  /** Moves the manual clock forward. */
  advanceClock(ms) {
    return this.ok(null, 'POST', '/api/v1/testing/clock', { advanceMs: Math.round(ms) });
  }

  /** One compaction pass (admin token); returns the summary. */
  compact(adminToken) {
    return this.ok(adminToken, 'POST', '/api/v1/admin/compact', {});
  }

  snapshot(token, docId) {
    return this.ok(token, 'GET', `/api/v1/docs/${docId}/snapshot`);
  }

  /** Read-only SQL over the server's database (sqlite3 CLI, JSON rows). */
  sql(query) {
    return new Promise((resolve, reject) => {
      execFile(
        'sqlite3',
        ['-readonly', '-json', this.dbPath, query],
        { maxBuffer: 256 * 1024 * 1024, timeout: 30000 },
        (err, stdout, stderr) => {
          if (err && /** @type {any} */ (err).code === 'ENOENT') {
            return reject(new Error('the engine simulation reads the server database with the sqlite3 command: apt-get install sqlite3'));
          }
          if (err) return reject(new Error(`sqlite3: ${err.message}\n${stderr}`));
          const t = String(stdout).trim();
          resolve(t ? JSON.parse(t) : []);
        },
      );
    });
  }
}

// Real timers, captured before any test installs fake ones.
const setRealTimeout = globalThis.setTimeout.bind(globalThis);
const clearRealTimeout = globalThis.clearTimeout.bind(globalThis);
export { setRealTimeout, clearRealTimeout };
