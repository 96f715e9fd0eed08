// @ts-check
// The lossy network between the engines and the real server: a `fetch` per engine ("link")
// that, by the seed's RNG, drops requests, drops replies after the server processed them,
// duplicates requests (both copies really reach the server, concurrently), delays replies
// (in fake time), and goes offline for a while. Underneath is node:http to the real binary.
//
// Wake-ups: engines in Node have no WebSocket/EventSource and fall back to long-polling
// `/changes`. A real long-poll holds a socket up to 25 s of *real* time, so the shim parks
// `/changes` requests instead and answers them itself, as the server would (PROTOCOL §3:
// "answers as soon as headSeq > N or the lease state differs from M, at the latest after
// `wait` seconds"), from the newest headSeq it has seen in any reply of the real server
// (see _wakePolls for why not leaseSeq); `wait` runs on the (fake) engine clock. Wake-ups carry no data, so everything the
// checks look at still comes from the real server over /snapshot and /sync.
//
// Everything that crosses the wire is recorded for the checker: every op sent (by opId,
// with its body), every result the server returned for it (delivered or lost), every log
// entry any reply carried.

import { nodeFetch } from './server.js';

/** Cumulative thresholds of one roll per request (outside offline periods). */
export const FATES = { dropRequest: 0.08, dropReply: 0.16, duplicate: 0.22, delay: 0.34 };

export class Network {
  /**
   * @param {{rng: import('./rng.js').Rng, base: string, docId: string,
   *   realFetch?: typeof fetch, lossy?: boolean,
   *   rewrite?: (link: Link, path: string, body: any) => Promise<any>}} opts
   */
  constructor(opts) {
    this.rng = opts.rng;
    this.base = opts.base;
    this.docId = opts.docId;
    this.realFetch = opts.realFetch ?? nodeFetch;
    this.lossy = opts.lossy ?? true;
    this.rewrite = opts.rewrite ?? null;
    /** @type {((line: string) => void)|null} where a trace of every request goes (SIM_TRACE) */
    this.onTrace = null;
    /** @type {string|undefined} the first error of the harness or machine itself */
    this.realErrorText = undefined;
    /** @type {Set<Promise<unknown>>} real requests on the wire */
    this.inflight = new Set();
    /** @type {Promise<unknown>} the end of the request chain */
    this._tail = Promise.resolve();
    /** @type {Map<string, Link>} */
    this.links = new Map();
    this.knownHead = 0;
    this.knownLeaseSeq = 0;
    this.stats = {
      requests: 0, syncs: 0, snapshots: 0, polls: 0, leaves: 0, other: 0,
      droppedRequests: 0, droppedReplies: 0, duplicated: 0, delayed: 0, offlineRefused: 0,
      pollsAnswered: 0, pollsFailed: 0, resyncReplies: 0, http4xx: 0, http5xx: 0, realErrors: 0,
    };
    /** opId → {op, clientIds:Set, sends:number} */
    this.sentOps = new Map();
    /** opId → results seen on the wire (each with how the reply fared) */
    this.results = new Map();
    /** seq → log entry (JSON text, every copy must be equal) */
    this.entries = new Map();
    this.entryMismatch = [];
    this.serverErrors = [];
  }

  /** A new link (one engine's fetch). */
  link(name) {
    const l = new Link(this, name);
    this.links.set(name, l);
    return l;
  }

  /**
   * Real request through the wire, tracked so the harness can wait for it. Requests go out
   * one at a time (`count` copies at once for a duplicate) in the order the engines made
   * them, and the next one waits until the engines had time to digest the previous reply:
   * that keeps the server's op order the same on every run of a seed.
   */
  _real(url, init, count = 1) {
    const run = async () => {
      // Nothing else may be running while a request is on the wire: then the reply's
      // effects (and the requests they cause) come in the same order on every run.
      await idle(IDLE_TURNS);
      const one = () =>
        this.realFetch(url, init).then(
          async (res) => ({ status: res.status, headers: res.headers, text: await res.text() }),
          (e) => {
            // Not a fault the seed chose: the harness or the machine failed. Counted and
            // reported (a run with these is not a clean replay of its seed).
            this.stats.realErrors++;
            this.realErrorText ??= String(e?.message ?? e);
            throw e;
          },
        );
      if (process.env.SIM_VERBOSE === '3') console.log('real >', init.method, url.slice(-40));
      const out = await Promise.all(Array.from({ length: count }, one));
      if (process.env.SIM_VERBOSE === '3') console.log('real <', out.map((o) => o.status));
      return out;
    };
    const p = this._tail.then(run, run);
    // The lock is released only after the caller has had its reply and a few idle turns.
    const released = p.then(() => idle(IDLE_TURNS), () => idle(IDLE_TURNS));
    this._tail = released;
    this.inflight.add(released);
    const done = () => this.inflight.delete(released);
    released.then(done, done);
    return p;
  }

  /** Resolves once no real request is queued or on the wire, and the engines are idle. */
  async drain() {
    for (let i = 0; i < 1000; i++) {
      await idle(IDLE_TURNS);
      if (this.inflight.size === 0) return;
      await Promise.allSettled([...this.inflight]);
    }
    throw new Error('network never drained');
  }

  /** Answers parked long-polls whose condition holds (called by the harness every step). */
  wake() {
    for (const l of this.links.values()) l._wakePolls();
  }

  _observe(path, reqBody, res, how) {
    if (res.status >= 500) this.serverErrors.push(`${path}: ${res.status} ${res.text.slice(0, 300)}`);
    if (res.status >= 400) (res.status >= 500 ? this.stats.http5xx++ : this.stats.http4xx++);
    if (res.status !== 200) return;
    let body;
    try {
      body = JSON.parse(res.text);
    } catch {
      return;
    }
    if (typeof body.headSeq === 'number') this.knownHead = Math.max(this.knownHead, body.headSeq);
    if (typeof body.leaseSeq === 'number' && path.endsWith('/sync')) this.knownLeaseSeq = body.leaseSeq;
    if (!path.endsWith('/sync')) return;
    if (body.resync) this.stats.resyncReplies++;
    for (const r of body.results ?? []) {
      if (!this.results.has(r.opId)) this.results.set(r.opId, []);
      this.results.get(r.opId).push({ how, result: r, clientId: reqBody?.clientId });
    }
    for (const e of body.ops ?? []) {
      const t = JSON.stringify(e);
      const had = this.entries.get(e.seq);
      if (had === undefined) this.entries.set(e.seq, t);
      else if (had !== t) this.entryMismatch.push({ seq: e.seq, a: had, b: t });
    }
  }
}

export class Link {
  constructor(net, name) {
    this.net = net;
    this.name = name;
    this.rng = net.rng.fork(`link:${name}`);
    /** down: the harness took this link offline (for a number of steps) */
    this.down = false;
    /** dead: every request fails (an engine that was "reloaded" away) */
    this.dead = false;
    /** lossless: the network is healed (final phase) */
    this.healed = false;
    /** @type {string|null} every request gets this fate (scripted scenarios) */
    this.forced = null;
    this.parked = new Set();
    this.fetch = (input, init) => this._fetch(input, init);
  }

  offline() {
    return this.dead || this.down;
  }

  setDown(down) {
    this.down = down;
    if (down) for (const p of [...this.parked]) p.fail('offline');
  }

  kill() {
    this.dead = true;
    for (const p of [...this.parked]) p.fail('link closed');
  }

  _fate() {
    const r = this.rng.f();
    if (this.forced) return this.forced;
    if (!this.net.lossy || this.healed) return 'deliver';
    if (r < FATES.dropRequest) return 'dropRequest';
    if (r < FATES.dropReply) return 'dropReply';
    if (r < FATES.duplicate) return 'duplicate';
    if (r < FATES.delay) return 'delay';
    return 'deliver';
  }

  async _fetch(input, init = {}) {
    const net = this.net;
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const u = new URL(url, net.base);
    const path = u.pathname;
    net.stats.requests++;
    const signal = init.signal;
    if (signal?.aborted) throw abortError();
    // Yield once so that a refusal is asynchronous, like a real fetch.
    await Promise.resolve();
    if (this.offline()) {
      net.stats.offlineRefused++;
      throw new TypeError(`fetch failed (${this.name} offline)`);
    }
    if (path.endsWith('/changes')) return this._poll(u, signal);
    let body = init.body;
    let parsed;
    if (typeof body === 'string' && body.length) {
      try {
        parsed = JSON.parse(body);
      } catch {
        parsed = undefined;
      }
    }
    if (path.endsWith('/sync')) {
      net.stats.syncs++;
      // Recorded as the engine sent it (before any rewrite of a broken variant).
      for (const op of parsed?.ops ?? []) {
        const rec = net.sentOps.get(op.opId);
        if (rec) {
          rec.sends++;
          rec.clientIds.add(parsed.clientId);
          rec.bodies.add(JSON.stringify(op));
        } else net.sentOps.set(op.opId, { op, sends: 1, clientIds: new Set([parsed.clientId]), bodies: new Set([JSON.stringify(op)]) });
      }
      if (parsed && net.rewrite) {
        parsed = await net.rewrite(this, path, parsed);
        body = JSON.stringify(parsed);
      }
    } else if (path.endsWith('/snapshot')) net.stats.snapshots++;
    else if (path.endsWith('/leave')) net.stats.leaves++;
    else net.stats.other++;

    const fate = path.endsWith('/leave') ? 'deliver' : this._fate();
    net.onTrace?.(`  ${Date.now()} ${this.name} ${path.split('/').pop()} ${fate} lastSeq=${parsed?.lastSeq} ops=${parsed?.ops?.length ?? 0}`);
    const realInit = { method: init.method ?? 'GET', headers: init.headers, body };
    if (fate === 'dropRequest') {
      net.stats.droppedRequests++;
      throw new TypeError(`fetch failed (request dropped on ${this.name})`);
    }
    let res;
    if (fate === 'duplicate') {
      net.stats.duplicated++;
      const [a, b] = await net._real(url, realInit, 2);
      net._observe(path, parsed, a, 'duplicate-first');
      res = b;
    } else {
      [res] = await net._real(url, realInit);
    }
    if (fate === 'dropReply') {
      net._observe(path, parsed, res, 'dropped');
      net.stats.droppedReplies++;
      throw new TypeError(`fetch failed (reply dropped on ${this.name})`);
    }
    if (fate === 'delay') {
      net.stats.delayed++;
      const ms = this.rng.range(50, 2500);
      await new Promise((r) => setTimeout(r, ms));
      if (this.offline()) {
        // The reply was on its way when the link went down: lost.
        net._observe(path, parsed, res, 'dropped');
        net.stats.droppedReplies++;
        throw new TypeError(`fetch failed (reply lost, ${this.name} went offline)`);
      }
    }
    net._observe(path, parsed, res, 'delivered');
    if (signal?.aborted) throw abortError();
    const nullBody = res.status === 204 || res.status === 304;
    return new Response(nullBody ? null : res.text, { status: res.status, headers: res.headers });
  }

  /** A parked long-poll: answered by wake() or after `wait` seconds of fake time. */
  _poll(u, signal) {
    const net = this.net;
    net.stats.polls++;
    const since = Number(u.searchParams.get('since') ?? 0);
    const leaseSeq = Number(u.searchParams.get('leaseSeq') ?? -1);
    const wait = Math.min(25, Math.max(1, Number(u.searchParams.get('wait') ?? 25)));
    return new Promise((resolve, reject) => {
      const p = {
        since,
        leaseSeq,
        settled: false,
        answer: () => {
          if (p.settled) return;
          p.settled = true;
          cleanup();
          net.stats.pollsAnswered++;
          const body = JSON.stringify({ headSeq: net.knownHead, leaseSeq: net.knownLeaseSeq });
          resolve(new Response(body, { status: 200, headers: { 'content-type': 'application/json' } }));
        },
        fail: (why) => {
          if (p.settled) return;
          p.settled = true;
          cleanup();
          net.stats.pollsFailed++;
          reject(why === 'abort' ? abortError() : new TypeError(`fetch failed (${why})`));
        },
      };
      const timer = setTimeout(() => p.answer(), wait * 1000);
      const onAbort = () => p.fail('abort');
      signal?.addEventListener?.('abort', onAbort);
      const cleanup = () => {
        clearTimeout(timer);
        this.parked.delete(p);
        signal?.removeEventListener?.('abort', onAbort);
      };
      this.parked.add(p);
      // A lossy long-poll sometimes breaks.
      if (net.lossy && !this.healed && this.rng.chance(0.05)) {
        setTimeout(() => p.fail('long-poll connection reset'), this.rng.range(100, 5000));
      }
      // Already due: answer on the next (fake) timer turn, never synchronously, so an engine
      // that re-polls at once cannot spin without time moving.
      setTimeout(() => this._wakePolls(), 0);
    });
  }

  _wakePolls() {
    const net = this.net;
    for (const p of [...this.parked]) {
      // Only a new headSeq wakes (and `wait` running out). The real server also answers when
      // the lease state moves, but leaseSeq depends on when the server's 1-second real-time
      // actor tick expires leases against the manual clock, which would make a seed's run
      // depend on wall time. Lease news still reach the engines through their syncs (every 7 s
      // while they hold leases, 30 s otherwise).
      if (net.knownHead > p.since) p.answer();
    }
  }
}

const IDLE_TURNS = 3;

// fake-indexeddb runs every request and commit on `globalThis.setImmediate` (looked up at
// call time). While a run is going, the harness counts pending immediates, so "idle" means
// really idle: no IndexedDB work queued, not just "a few turns went by".
const realSetImmediate = globalThis.setImmediate;
let pendingImmediates = 0;

/** Installs the counting setImmediate; returns the function that restores the real one. */
export function trackImmediates() {
  const counting = (fn, ...args) => {
    pendingImmediates++;
    return realSetImmediate(() => {
      pendingImmediates--;
      fn(...args);
    });
  };
  globalThis.setImmediate = /** @type {any} */ (counting);
  return () => {
    globalThis.setImmediate = realSetImmediate;
  };
}

/**
 * Resolves after `quietTurns` consecutive real setImmediate turns with no other immediate
 * pending (microtasks run in between), i.e. once the engines' IndexedDB work has settled.
 */
export async function idle(quietTurns) {
  let quiet = 0;
  for (let i = 0; i < 100000; i++) {
    await new Promise((r) => realSetImmediate(r));
    if (pendingImmediates === 0) {
      if (++quiet >= quietTurns) return;
    } else quiet = 0;
  }
  throw new Error('IndexedDB never went idle');
}

function abortError() {
  const e = new Error('The operation was aborted');
  e.name = 'AbortError';
  return e;
}
