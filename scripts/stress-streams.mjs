#!/usr/bin/env node
// Reconnect-loop stress for the wake-up channels (issue 15 item 5): clients that open an SSE
// stream (or a long-poll), read its first bytes and close their socket, over and over, as a
// page stuck in a reconnect loop does. Prints what the server still holds afterwards: open
// subscribers (GET /metrics), open TCP sockets and resident memory of the server process.
//
// It starts its own server (a fresh database in a temp folder) so the figures are the
// server's alone:
//   node scripts/stress-streams.mjs [--bin target/release/docsync] [--kind sse|longpoll]
//        [--n 15000] [--concurrency 64] [--users 1] [--env KEY=VALUE ...]
// e.g. the limits off, to see how many dead streams could pile up:
//   --env DOCSYNC_LIMITS__MAX_STREAMS_PER_USER=1000000 --env DOCSYNC_LIMITS__MAX_STREAMS_PER_ADDRESS=1000000
// (a binary older than those keys must not get them: it refuses unknown keys).
//
// Measured (release builds, 2 cores), 15,000 SSE reconnects at concurrency 64: before the
// fix (half-closed connections kept) the server held 15,000 streams, 15,009 sockets and
// grew from 15 to 226 MB, none released 3 s later; after it, 0 streams, 9 sockets, 15 to
// 20 MB (14 reconnects met the per-user limit of 64, with 64 in flight). 5,000 long-poll
// reconnects: before 4,992 waiters and 5,001 sockets, 120 MB; after 9 sockets at once and
// 0 waiters within the actors' next tick, 18 MB.

import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function args() {
  const a = { bin: 'target/release/docsync', kind: 'sse', n: 15000, concurrency: 64, users: 1, env: [] };
  const v = process.argv.slice(2);
  for (let i = 0; i < v.length; i += 2) {
    const [k, val] = [v[i].replace(/^--/, ''), v[i + 1]];
    if (k === 'env') a.env.push(val);
    else if (k === 'bin' || k === 'kind') a[k] = val;
    else a[k] = Number(val);
  }
  return a;
}

const opt = args();
const dir = mkdtempSync(join(tmpdir(), 'docsync-stress-'));
const env = {
  ...process.env,
  DOCSYNC_STORAGE__PATH: join(dir, 'docsync.db'),
  DOCSYNC_SERVER__BIND: '127.0.0.1:0',
  DOCSYNC_LOGGING__LEVEL: 'error',
};
for (const kv of opt.env) {
  const i = kv.indexOf('=');
  env[kv.slice(0, i)] = kv.slice(i + 1);
}

const tokens = [];
for (let u = 0; u < opt.users; u++) {
  const out = execFileSync(opt.bin, ['user', 'add', `stress${u}`], { env, cwd: dir }).toString();
  tokens.push(out.match(/token: (\S+)/)[1]);
}

const server = spawn(opt.bin, ['serve'], { env, cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
const base = await new Promise((resolve, reject) => {
  let buf = '';
  server.stdout.on('data', (d) => {
    buf += d;
    const m = buf.match(/docsync listening on http:\/\/(\S+)/);
    if (m) resolve(m[1]);
  });
  server.on('exit', (c) => reject(new Error(`server exited ${c}`)));
});
const [host, port] = [base.split(':')[0], Number(base.split(':')[1])];

function request(method, path, token, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host, port, method, path, headers: {
      authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close',
    } }, (res) => {
      let t = '';
      res.on('data', (d) => (t += d));
      res.on('end', () => resolve({ status: res.statusCode, text: t }));
    });
    req.on('error', reject);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

const docs = [];
for (const t of tokens) {
  const r = await request('POST', '/api/v1/docs', t, { title: 'stress' });
  docs.push(JSON.parse(r.text).docId);
}

/** The server process: RSS in MB and open TCP sockets. */
function serverFigures() {
  const status = readFileSync(`/proc/${server.pid}/status`, 'utf8');
  const rssMb = Number(status.match(/VmRSS:\s+(\d+)/)[1]) / 1024;
  let sockets = 0;
  for (const fd of readdirSync(`/proc/${server.pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${server.pid}/fd/${fd}`).startsWith('socket:')) sockets++;
    } catch { /* closed meanwhile */ }
  }
  return { rssMb: Math.round(rssMb * 10) / 10, sockets };
}

async function subscribers() {
  const r = await request('GET', '/metrics', tokens[0]);
  const get = (ch) => Number((r.text.match(new RegExp(`docsync_subscribers\\{channel="${ch}"\\} (\\d+)`)) || [0, 0])[1]);
  return { sse: get('sse'), longPoll: get('long_poll') };
}

// One client: open, wait for the first bytes (the stream or waiter now exists), close the
// socket the way a closing tab does (FIN, nothing unread).
let refused = 0;
let other = 0;
function once(i) {
  const u = i % tokens.length;
  const path = opt.kind === 'sse'
    ? `/api/v1/docs/${docs[u]}/events`
    : `/api/v1/docs/${docs[u]}/changes?since=1000000&wait=25`;
  return new Promise((resolve) => {
    const req = http.request({ host, port, path, agent: false, headers: { authorization: `Bearer ${tokens[u]}` } });
    req.on('response', (res) => {
      if (res.statusCode === 429) refused++;
      else if (res.statusCode !== 200) other++;
      if (res.statusCode !== 200 || opt.kind === 'sse') {
        res.once('data', () => { req.destroy(); resolve(); });
        res.once('end', () => { req.destroy(); resolve(); });
      }
    });
    req.on('error', () => resolve());
    req.end();
    if (opt.kind === 'longpoll') {
      // A long-poll sends nothing until it is answered: give the server a moment to
      // register it, then hang up.
      setTimeout(() => { req.destroy(); resolve(); }, 20);
    }
  });
}

const before = { ...serverFigures(), ...(await subscribers()) };
const started = Date.now();
let next = 0;
await Promise.all(Array.from({ length: opt.concurrency }, async () => {
  while (next < opt.n) await once(next++);
}));
const seconds = (Date.now() - started) / 1000;
const right = { ...serverFigures(), ...(await subscribers()) };
await new Promise((r) => setTimeout(r, 3000));
const settled = { ...serverFigures(), ...(await subscribers()) };

console.log(JSON.stringify({
  bin: opt.bin, kind: opt.kind, reconnects: opt.n, concurrency: opt.concurrency, seconds,
  refused429: refused, otherErrors: other, before, rightAfter: right, after3s: settled,
}, null, 1));
server.kill('SIGTERM');
await new Promise((r) => server.on('exit', r));
rmSync(dir, { recursive: true, force: true });
