// @ts-check
// Drives several DocSyncEngines against the real server through the lossy network, one
// seeded run at a time. See docs/browser.md, "Proof: engine against the real server".

import { vi } from 'vitest';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { openStore, createMemoryLocks } from '../../../static/engine/store.js';
import { Rng } from './rng.js';
import { TestServer } from './server.js';
import { Network, idle, trackImmediates } from './network.js';
import { randomEdit, flat } from './edits.js';
import { checkConvergence, checkTree, checkExactlyOnce, checkNoTextLost, TOKEN } from './checks.js';

const DAY = 86_400_000;
/** Compaction every this many steps (at least), each after moving the server clock 8 days. */
export const COMPACT_EVERY = 25;
const COMPACT_DAYS = 8;
/** Idempotency results are kept 90 days (PROTOCOL §6): a run stays inside that. */
const RESULTS_DAYS = 90;

/** Fake only the timer functions and Date: fake-indexeddb (setImmediate) and node:http stay real. */
/** @type {('setTimeout'|'clearTimeout'|'setInterval'|'clearInterval'|'Date')[]} */
const FAKE = ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'];

/**
 * Broken variants for the counter-check:
 * - 'forgetQueue': a reloaded tab's store loses the queue it should adopt (the records of the
 *   old clientId are deleted, not moved);
 * - 'latestBase': every outgoing set_content/set_title has its baseVersion rewritten (in the
 *   network shim) to the server's current version: last writer wins;
 * - 'staleStore': the store drops the block changes of every confirmed-state write (what a
 *   sync brings never reaches IndexedDB; the engine's memory is fine).
 * @typedef {'none'|'forgetQueue'|'latestBase'|'staleStore'} Variant
 */

/** crypto.randomUUID from the seed, so block/op/client IDs repeat with the seed. */
function seedUuids(rng) {
  const orig = globalThis.crypto.randomUUID;
  const fake = () => {
    const h = rng.uuid();
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  };
  Object.defineProperty(globalThis.crypto, 'randomUUID', { value: fake, configurable: true, writable: true });
  return () => Object.defineProperty(globalThis.crypto, 'randomUUID', { value: orig, configurable: true, writable: true });
}

/**
 * A store wrapper that records every op the engine puts into its queue (the checker's list
 * of "ops an engine ever queued"); for the 'forgetQueue' variant it also loses adopted queues.
 */
function recordingStore(store, engineName, queued, variant) {
  const note = (recs) => {
    for (const r of recs ?? []) if (r?.op?.opId) queued.set(r.op.opId, { op: r.op, engine: engineName });
  };
  return new Proxy(store, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (typeof v !== 'function') return v;
      if (prop === 'putQueued') return (records) => (note(records), v.call(target, records));
      if (prop === 'saveSnapshot' || prop === 'saveConfirmed') {
        return (...args) => {
          const q = args[prop === 'saveSnapshot' ? 2 : 3];
          note(q?.put);
          // Broken on purpose ('staleStore'): block changes from log entries never reach disk.
          if (variant === 'staleStore' && prop === 'saveConfirmed') args = [args[0], [], args[2], args[3]];
          return v.apply(target, args);
        };
      }
      if (prop === 'takeQueue' && variant === 'forgetQueue') {
        // Broken on purpose: the old tab's queue is dropped instead of moved.
        return async (docId, from, to, journal) => {
          const moved = await v.call(target, docId, from, to, journal);
          if (from === to) return moved;
          await target.deleteQueued(docId, moved.map((r) => ({ clientId: r.clientId, n: r.n })));
          return [];
        };
      }
      return v.bind(target);
    },
  });
}

export class SimRun {
  /**
   * @param {{seed: number, steps: number, variant?: Variant, tabs?: number, reloadRate?: number,
   *   offlineRate?: number, offlineSteps?: [number, number], Engine?: any}} o  `Engine`: the engine class (default: DocSyncEngine of static/engine/engine.js)
   */
  constructor(o) {
    this.Engine = o.Engine ?? null;
    this.seed = o.seed;
    this.steps = o.steps;
    this.variant = o.variant ?? 'none';
    /** @type {string[]|undefined} every request, with SIM_TRACE */
    this.trace = undefined;
    /** @type {{step: number, from: string, to: string, opIds: string[], tab: string}[]|undefined} queues taken over by reloads */
    this.reloadQueues = undefined;
    this.rng = new Rng(o.seed);
    this.actRng = this.rng.fork('actions');
    this.tabCount = o.tabs ?? 3;
    this.reloadRate = o.reloadRate ?? 0.015;
    this.offlineRate = o.offlineRate ?? 0.025;
    this.offlineSteps = o.offlineSteps ?? [5, 60];
    // At most 10 compactions (80 days): every op's stored result must still be there at the end.
    this.compactEvery = Math.max(COMPACT_EVERY, Math.ceil(this.steps / 10));
    if (Math.floor(this.steps / this.compactEvery) * COMPACT_DAYS >= RESULTS_DAYS) throw new Error('run longer than the results retention');
    /** opId → {op, engine} */
    this.queued = new Map();
    /** `${tab}|${target}` → {engine, target, text, step} */
    this.typed = new Map();
    this.purgedText = [];
    /** tokens a user replaced on purpose (accepting a conflict copy over the original) */
    this.replaced = new Set();
    this.tokenCounter = 0;
    this.step = 0;
    this.figures = {
      edits: 0, refused: 0, noop: 0, undos: 0, undoSkipped: 0, redos: 0, titles: 0, focus: 0, hides: 0,
      accepted: 0, discarded: 0, reloads: 0, pageHides: 0, adopted: 0,
      offline: 0, compactions: 0, purged: 0, conflictCopies: 0, resyncs: 0, snapshots: 0, ops: 0, retries: 0,
    };
    this.failures = [];
  }

  log(msg) {
    if (process.env.SIM_VERBOSE) console.log(`[seed ${this.seed} step ${this.step}] ${msg}`);
  }

  async setup() {
    this.Engine ??= (await import('../../../static/engine/engine.js')).DocSyncEngine;
    this.restoreUuid = seedUuids(this.rng.fork('ids'));
    this.restoreImmediate = trackImmediates();
    const page = this.seed % 2 === 0 ? '16' : '500';
    this.server = await TestServer.start({
      DOCSYNC_TESTING__CLOCK: 'manual',
      DOCSYNC_COMPACTION__RUN_AT_START: 'false',
      DOCSYNC_ACTORS__LOG_PAGE: page,
      // Shorter than the defaults (30 days) so that, with the clock moved 8 days per
      // compaction, the log floor passes engines that were offline (resync) and tombstones
      // get purged within one run.
      DOCSYNC_COMPACTION__SHARED_LOG_DAYS: '10',
      DOCSYNC_COMPACTION__TOMBSTONE_DAYS: '10',
    });
    const s = this.server;
    this.admin = await s.addUser('root', { admin: true });
    const alice = await s.addUser('alice');
    const bob = await s.addUser('bob');
    this.users = [alice, bob];
    const created = await s.ok(alice.token, 'POST', '/api/v1/docs', { title: `Sim ${this.seed}` }, 201);
    this.docId = created.docId;
    await s.ok(alice.token, 'PUT', `/api/v1/docs/${this.docId}/shares`, [{ kind: 'user', id: bob.userId, access: 'write' }]);
    this.net = new Network({
      rng: this.rng.fork('net'),
      base: s.base,
      docId: this.docId,
      rewrite: this.variant === 'latestBase' ? (link, path, body) => this.latestBase(body) : null,
    });
    if (process.env.SIM_TRACE) this.net.onTrace = (line) => (this.trace ??= []).push(line);
    vi.useFakeTimers({ toFake: FAKE, now: Date.UTC(2026, 0, 1) });
    // Devices: alice on two devices, bob on one (each its own IndexedDB and Web Locks).
    this.devices = [];
    for (let d = 0; d < this.tabCount; d++) {
      this.devices.push({ slot: d, user: this.users[d === this.tabCount - 1 ? 1 : 0], idb: new IDBFactory(), locks: createMemoryLocks(), gen: 0 });
    }
    this.tabs = [];
    for (const dev of this.devices) this.tabs.push(await this.openTab(dev));
    await this.settle(1000);
  }

  /** Rewrites baseVersions to the server's current ones (the 'latestBase' broken variant). */
  async latestBase(body) {
    if (!body.ops?.some((o) => o.kind === 'set_content' || o.kind === 'set_title')) return body;
    const snap = await this.server.snapshot(this.users[0].token, this.docId);
    const ver = new Map(snap.blocks.map((b) => [b.id, b.version]));
    return {
      ...body,
      ops: body.ops.map((o) => {
        if (o.kind === 'set_content' && ver.has(o.blockId)) return { ...o, baseVersion: ver.get(o.blockId) };
        if (o.kind === 'set_title') return { ...o, baseVersion: snap.titleVersion };
        return o;
      }),
    };
  }

  async openTab(dev) {
    const name = `${'abcdefgh'[dev.slot]}${dev.gen}`;
    const link = this.net.link(name);
    const raw = await openStore({ indexedDB: dev.idb, IDBKeyRange });
    const store = recordingStore(raw, name, this.queued, this.variant);
    const clientId = `cl_${crypto.randomUUID()}`;
    const engine = new this.Engine({
      docId: this.docId,
      clientId,
      user: { userId: dev.user.userId, name: dev.user.displayName },
      store,
      baseUrl: this.server.base,
      fetch: link.fetch,
      WebSocket: null,
      EventSource: null,
      locks: dev.locks,
      headers: { Authorization: `Bearer ${dev.user.token}` },
    });
    const tab = { name, dev, link, engine, store: raw, clientId, state: null, off: null };
    tab.off = engine.subscribe((st) => (tab.state = st));
    await this.pump(engine.open(), `open ${name}`);
    tab.state = engine.state ?? tab.state;
    return tab;
  }

  /**
   * Awaits an engine promise while fake time moves on (in 100 ms chunks), so that an engine
   * waiting on a timer or a delayed reply gets there; bounded by 120 s of fake time.
   */
  async pump(promise, what) {
    let done = false;
    let error = null;
    promise.then(
      () => (done = true),
      (e) => ((done = true), (error = e)),
    );
    for (let i = 0; i < 1200 && !done; i++) await this.settle(i === 0 ? 0 : 100);
    if (!done) throw new Error(`${what}: not done after 120 s of fake time`);
    if (error) throw error;
  }

  current(tab) {
    return tab.engine.state ?? tab.state;
  }

  token(tab) {
    this.tokenCounter++;
    return `${tab.name[0]}${tab.dev.gen}x${this.tokenCounter}`;
  }

  /**
   * Lets the engines run for `ms` of fake time, one timer at a time: after each timer that
   * fires, every real request it caused is awaited and IndexedDB is let go idle before the
   * next one, so a real reply never races a fake timer and a seed replays exactly.
   */
  async settle(ms) {
    const target = Date.now() + ms;
    await this.quiesce();
    if (ms <= 0) return;
    // A sentinel timer at the target, so "the next timer" never lies beyond it.
    let reached = false;
    setTimeout(() => (reached = true), ms);
    for (let i = 0; i < 100000 && !reached; i++) {
      await vi.advanceTimersToNextTimerAsync();
      await this.quiesce();
    }
    if (Date.now() !== target) throw new Error(`settle: fake time ${Date.now()} != ${target}`);
  }

  async quiesce() {
    await this.net.drain();
    this.net.wake();
    await this.net.drain();
  }

  /** Remembers what `tab` typed: rows/title whose text changed through its own action. */
  noteTyping(tab, before, after, kind) {
    const was = new Map(before.rows.map((r) => [r.id, r.content]));
    const now = new Map(after.rows.map((r) => [r.id, r.content]));
    for (const [id, text] of now) {
      if (was.get(id) !== text) this.typed.set(`${tab.name}|${id}`, { engine: tab.name, target: id, text, step: this.step, kind });
    }
    // Rows its own action removed (delete, merge, undo of an insert): what it typed there
    // was deliberately removed (it stays in the tombstone, but the engine may coalesce).
    for (const id of was.keys()) if (!now.has(id)) this.typed.delete(`${tab.name}|${id}`);
    if (before.title !== after.title) this.typed.set(`${tab.name}|title`, { engine: tab.name, target: 'title', text: after.title, step: this.step, kind });
  }

  async act(tab) {
    const e = tab.engine;
    const before = this.current(tab);
    if (!before?.loaded) return;
    const roll = this.actRng.f();
    let kind;
    if (roll < 0.07) {
      kind = 'undo';
      const r = e.undo();
      this.figures.undos++;
      if (r?.skipped?.length) this.figures.undoSkipped += r.skipped.length;
    } else if (roll < 0.09) {
      kind = 'redo';
      e.redo();
      this.figures.redos++;
    } else if (roll < 0.13) {
      kind = 'title';
      e.setTitle(before.title ? `${before.title} ${this.token(tab)}` : this.token(tab));
      this.figures.titles++;
    } else if (roll < 0.16) {
      kind = 'focus';
      const row = this.actRng.pick(before.rows);
      e.focus(row ? row.id : null);
      this.figures.focus++;
      return;
    } else if (roll < 0.18) {
      // The tab goes to the background (pending ops go with keepalive, leases are released)
      // or comes back.
      kind = 'visibility';
      tab.hidden = !tab.hidden;
      e.setVisible(!tab.hidden);
      this.figures.hides += tab.hidden ? 1 : 0;
      return;
    } else if (roll < 0.21) {
      // Accept or discard a conflict copy. Accepting replaces the original's text, which
      // this user saw: the tokens only the original had are deliberately gone.
      kind = 'conflict';
      const copy = this.actRng.pick(before.rows.filter((r) => r.conflictOf));
      if (!copy) return;
      const orig = copy.conflictOf === 'title' ? before.title : before.rows.find((r) => r.id === copy.conflictOf)?.content;
      const accept = this.actRng.chance(0.5);
      const r = accept ? e.acceptConflict(copy.id) : e.discardConflict(copy.id);
      if (r && r.ok === false) {
        this.figures.refused++;
        return;
      }
      if (accept) {
        this.figures.accepted++;
        const keep = new Set(copy.content.match(TOKEN) ?? []);
        for (const t of (orig ?? '').match(TOKEN) ?? []) if (!keep.has(t)) this.replaced.add(t);
      } else this.figures.discarded++;
    } else {
      const locked = new Set(before.locks ? [...before.locks.keys()] : []);
      const ed = randomEdit(this.actRng, before.rows, { token: () => this.token(tab), newId: () => e.newBlockId(), locked });
      if (!ed) {
        this.figures.noop++;
        return;
      }
      kind = ed.kind;
      const r = e.commitRows(ed.rows, { step: ed.step });
      if (this.trace) this.trace.push(`  ${tab.name} ${ed.kind} → ${r.ok ? r.ops.map((o) => `${o.kind}:${o.opId.slice(3, 9)}`).join(',') : r.reason} queue=${e.queue?.map((q) => `${q.rec.op.opId.slice(3, 9)}${q.sent ? 's' : ''}${q.saved ? 'd' : ''}`).join(',')}`);
      this.figures.edits++;
      if (r && r.ok === false) {
        this.figures.refused++;
        return;
      }
    }
    await Promise.resolve();
    this.noteTyping(tab, before, this.current(tab), kind);
  }

  /** Close a tab without flushing (its link dies first) and open a new engine on its IndexedDB. */
  async reload(i) {
    const old = this.tabs[i];
    const q = await old.store.loadQueue(this.docId, old.clientId);
    if (this.actRng.chance(0.4)) {
      // A normal tab close: pagehide sends the pending ops and `leave` with keepalive (they
      // may still be lost); the new tab adopts the same ops and sends them again.
      old.engine.pageHide();
      await this.net.drain();
      this.figures.pageHides++;
    }
    old.link.kill();
    old.off?.();
    try {
      await this.pump(Promise.resolve(old.engine.close()), `close ${old.name}`);
    } catch {
      // leave over a dead link fails; the tab is gone either way
    }
    old.store.close();
    old.dev.gen++;
    const tab = await this.openTab(old.dev);
    this.tabs[i] = tab;
    this.figures.reloads++;
    this.figures.adopted += q.filter((r) => r.ackedSeq === null || r.ackedSeq === undefined).length;
    this.reloadQueues ??= [];
    this.reloadQueues.push({ step: this.step, from: old.clientId, to: tab.clientId, opIds: q.map((r) => r.op.opId), tab: tab.name });
    this.log(`reload ${old.name} → ${tab.name} (${q.length} queued)`);
  }

  async compact() {
    const s = this.server;
    const before = await s.snapshot(this.users[0].token, this.docId);
    await s.advanceClock(COMPACT_DAYS * DAY);
    const sum = await s.compact(this.admin.token);
    if (sum.failed) this.failures.push(`compaction failed: ${JSON.stringify(sum)}`);
    const after = await s.snapshot(this.users[0].token, this.docId);
    const still = new Set(after.blocks.map((b) => b.id));
    for (const b of before.blocks) {
      if (!still.has(b.id)) {
        this.purgedText.push(b.content);
        this.figures.purged++;
      }
    }
    this.figures.compactions++;
  }

  async run() {
    this.t0 = performance.now();
    await this.setup();
    try {
      const offlineUntil = new Array(this.tabs.length).fill(-1);
      for (this.step = 0; this.step < this.steps; this.step++) {
        if (this.step % 10 === 0) this.log(`step (${Math.round(performance.now() - this.t0)} ms real)`);
        if (this.step > 0 && this.step % this.compactEvery === 0) await this.compact();
        for (let i = 0; i < this.tabs.length; i++) {
          if (offlineUntil[i] === this.step) {
            this.tabs[i].link.setDown(false);
            this.tabs[i].engine.setOnline(true);
          }
        }
        const i = this.actRng.below(this.tabs.length);
        const tab = this.tabs[i];
        const roll = this.actRng.f();
        if (process.env.SIM_VERBOSE === '2') this.log(`${tab.name} roll ${roll.toFixed(3)}`);
        if (roll < this.reloadRate) {
          // Often right after an edit: the op is in IndexedDB (real idle turns, no fake time,
          // so a throttled send may not have fired) but not sent when the tab goes away.
          if (this.actRng.chance(0.6)) {
            await this.act(tab);
            await idle(3);
          }
          await this.reload(i);
        } else if (roll < this.reloadRate + this.offlineRate && offlineUntil[i] < this.step) {
          offlineUntil[i] = this.step + this.actRng.range(this.offlineSteps[0], this.offlineSteps[1]);
          tab.link.setDown(true);
          if (this.actRng.chance(0.5)) tab.engine.setOnline(false);
          this.figures.offline++;
        } else {
          await this.act(tab);
          if (this.actRng.chance(0.3)) await this.act(this.tabs[this.actRng.below(this.tabs.length)]);
        }
        if (process.env.SIM_TRACE) {
          this.trace ??= [];
          this.trace.push(`${this.step} ${this.tabs.map((t) => `${t.name}:${t.engine.state.lastSeq}/${t.engine.state.pending}/${t.engine.state.rows.length}`).join(' ')} req=${this.net.stats.requests} syncs=${this.net.stats.syncs} polls=${this.net.stats.polls} head=${this.net.knownHead} ls=${this.net.knownLeaseSeq}`);
        }
        const ms = this.actRng.range(150, 1500);
        await s_advance(this.server, ms);
        await this.settle(ms);
      }
      await this.heal();
      await this.check();
    } finally {
      await this.teardown();
    }
    return this;
  }

  /** Network healed, everyone online: run until every engine has sent everything and caught up. */
  async heal() {
    for (const t of this.tabs) {
      t.link.setDown(false);
      t.link.healed = true;
      t.engine.setOnline(true);
      if (t.hidden) t.engine.setVisible(true);
      t.hidden = false;
    }
    const token = this.users[0].token;
    for (let round = 0; round < 400; round++) {
      await s_advance(this.server, 1000);
      await this.settle(1000);
      const snap = await this.server.snapshot(token, this.docId);
      const done = this.tabs.every((t) => {
        const st = this.current(t);
        return st && st.pending === 0 && st.lastSeq === snap.headSeq;
      });
      if (done) return;
    }
    this.failures.push('heal: the engines did not catch up within 400 s of fake time');
  }

  async check() {
    const s = this.server;
    const snap = await s.snapshot(this.users[0].token, this.docId);
    this.snap = snap;
    const opRows = await s.sql(`SELECT op_id, seq, kind FROM doc_ops WHERE doc_id = '${this.docId}' ORDER BY seq`);
    const resultRows = await s.sql(`SELECT op_id, result FROM doc_op_results WHERE doc_id = '${this.docId}'`);
    const f = this.failures;
    for (const t of this.tabs) f.push(...checkConvergence(t.name, this.current(t), snap));
    f.push(...(await this.checkStoredCopies(snap)));
    f.push(...checkTree(snap));
    f.push(...checkExactlyOnce({ opRows, resultRows, snap, queued: this.queued, net: this.net }));
    f.push(...checkNoTextLost({ typed: this.typed, snap, purgedText: this.purgedText, replaced: this.replaced }));
    if (this.net.serverErrors.length) f.push(`server 5xx: ${this.net.serverErrors.slice(0, 3).join(' | ')}`);
    if (this.net.stats.realErrors) f.push(`harness: ${this.net.stats.realErrors} real requests failed (${this.net.realErrorText})`);
    // Reloaded tabs: the adopted queue went out, each op applied exactly once.
    const stored = new Set(resultRows.map((r) => r.op_id));
    for (const r of this.reloadQueues ?? []) {
      const lost = r.opIds.filter((id) => !stored.has(id));
      if (lost.length) f.push(`reload at step ${r.step} (${r.from} → ${r.tab}): ${lost.length} of ${r.opIds.length} queued ops never applied`);
    }
    if (process.env.SIM_EXPLAIN) await this.explain(process.env.SIM_EXPLAIN);
    if (process.env.SIM_TRACE) (await import('node:fs')).writeFileSync(`${process.env.SIM_TRACE}-${this.seed}-${this.variant}.txt`, this.trace.join('\n'));
    const fig = this.figures;
    fig.ops = this.queued.size;
    fig.retries = [...this.net.sentOps.values()].reduce((a, r) => a + r.sends - 1, 0);
    fig.conflictCopies = snap.blocks.filter((b) => b.conflictOf).length;
    fig.resyncs = this.net.stats.resyncReplies;
    fig.snapshots = this.net.stats.snapshots;
    fig.headSeq = snap.headSeq;
    fig.logFloor = snap.logFloor;
    fig.blocks = snap.blocks.length;
    fig.typedTexts = this.typed.size;
  }

  /**
   * What each device has in IndexedDB: a new engine opened offline on it (as a tab opened
   * with no network) must show exactly the server's state at once, with nothing pending.
   */
  async checkStoredCopies(snap) {
    const out = [];
    await this.settle(0);
    for (const t of this.tabs) {
      const name = `${t.name}-probe`;
      const link = this.net.link(name);
      link.setDown(true);
      const raw = await openStore({ indexedDB: t.dev.idb, IDBKeyRange });
      const engine = new this.Engine({
        docId: this.docId,
        clientId: `cl_${crypto.randomUUID()}`,
        user: { userId: t.dev.user.userId, name: t.dev.user.displayName },
        store: raw,
        baseUrl: this.server.base,
        fetch: link.fetch,
        WebSocket: null,
        EventSource: null,
        locks: t.dev.locks,
        headers: { Authorization: `Bearer ${t.dev.user.token}` },
      });
      try {
        await this.pump(engine.open(), `open ${name}`);
        out.push(...checkConvergence(`${t.name}'s IndexedDB (opened offline)`, { ...engine.state, error: null }, snap));
      } finally {
        link.kill();
        await this.pump(Promise.resolve(engine.close()), `close ${name}`).catch(() => {});
        raw.close();
      }
    }
    return out;
  }

  /** Debugging aid (SIM_EXPLAIN=token or block id): everything about it, in order. */
  async explain(needle) {
    const out = [];
    for (const [opId, q] of this.queued) if (JSON.stringify(q.op).includes(needle)) out.push(`queued by ${q.engine}: ${JSON.stringify(q.op)}`);
    for (const [opId, r] of this.net.sentOps) if (JSON.stringify(r.op).includes(needle)) out.push(`sent ${r.sends}× by ${[...r.clientIds].map((c) => c.slice(0, 11)).join(',')}: ${[...r.bodies].join(' | ')}; results: ${JSON.stringify((this.net.results.get(opId) ?? []).map((x) => x.result))}`);
    const rows = await this.server.sql(`SELECT seq, op_id, kind, client_id, entry FROM doc_ops WHERE doc_id = '${this.docId}' ORDER BY seq`);
    const seen = new Map(this.net.entries);
    for (const r of rows) seen.set(r.seq, r.entry);
    const ids = new Set([needle]);
    for (const e of seen.values()) if (e.includes(needle)) for (const f of JSON.parse(e).effects) if (f.e === 'block') ids.add(f.block.id);
    for (const [seq, e] of [...seen].sort((a, b) => a[0] - b[0])) if ([...ids].some((id) => e.includes(id))) {
      const x = JSON.parse(e);
      out.push(`log ${seq} ${x.kind} by ${x.clientId.slice(0, 11)} op ${x.opId}: ${x.effects.map((f) => f.e === 'block' ? `${f.block.id.slice(0, 12)} v${f.block.version} ${f.block.deleted ? 'DELETED ' : ''}${JSON.stringify(f.block.content)}` : JSON.stringify(f)).join('; ')}`);
    }
    for (const [opId, q] of this.queued) if ([...ids].some((id) => JSON.stringify(q.op).includes(id)) && !JSON.stringify(q.op).includes(needle)) out.push(`queued by ${q.engine} (touches it): ${JSON.stringify(q.op)} → ${JSON.stringify((this.net.results.get(opId) ?? []).map((x) => x.result.status + ':' + x.result.seq))}`);
    for (const t of this.tabs) out.push(`${t.name} = ${t.clientId.slice(0, 11)}`);
    for (const r of this.reloadQueues ?? []) out.push(`reload at step ${r.step}: ${r.from.slice(0, 11)} → ${r.tab} ${r.to.slice(0, 11)}`);
    console.log(`explain ${needle}:\n  ${out.join('\n  ')}`);
  }

  async teardown() {
    for (const t of this.tabs ?? []) {
      t.link.kill();
      try {
        t.off?.();
        await this.pump(Promise.resolve(t.engine.close()), `close ${t.name}`);
      } catch {
        // closing over a dead link
      }
    }
    try {
      await vi.advanceTimersByTimeAsync(0);
    } catch {
      // timers already real
    }
    await idle(3);
    vi.useRealTimers();
    for (const t of this.tabs ?? []) {
      try {
        t.store.close();
      } catch {
        // already closed
      }
    }
    this.restoreUuid?.();
    this.restoreImmediate?.();
    await this.server?.stop();
  }
}

function s_advance(server, ms) {
  return server.advanceClock(ms);
}
