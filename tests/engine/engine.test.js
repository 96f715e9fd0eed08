// @ts-check
// DocSyncEngine against a fake server (model.js applies the ops, as the real server's rules
// do): persistence before "saved", reload and resend, orphaned queues, merging, backoff, one
// request in flight, 403, resync, hasMore, private mode, visibility, leases, wake-ups.
import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { DocModel } from '../../static/engine/model.js';
import { openStore, createMemoryLocks } from '../../static/engine/store.js';
import { DocSyncEngine, RELOAD_LOCK_WAIT_MS, ADOPT_GRACE_MS } from '../../static/engine/engine.js';
import { memoryStorage } from './memory-storage.js';
import { diffRows } from '../../static/engine/diff.js';
import { mulberry32, helpers } from './prng.js';
import { randomEdit, randomModel } from './outline-edits.js';

const DOC = 'doc_test';
const USER = { userId: 'usr_me', name: 'Me' };

/**
 * Just enough of /snapshot, /sync and /leave: ops go through DocModel.applyOp (the server's
 * rules), idempotent by opId, each change one log entry. Requests can be held (`gate`),
 * failed as network errors (`down`) or answered with a status (`status`).
 */
class FakeServer {
  constructor() {
    this.model = DocModel.empty(DOC);
    this.model.title = 'Doc';
    /** @type {any[]} */ this.log = [];
    /** @type {Map<string, any>} */ this.results = new Map();
    this.leaseSeq = 1;
    /** @type {'owner'|'editor'|'viewer'} */ this.role = 'editor';
    /** @type {'full'|'private'} */ this.mode = 'full';
    this.pageSize = 500;
    this.down = false;
    /** The request is processed but its reply is lost. */
    this.dropReply = false;
    /** @type {number|null} */ this.status = null;
    /** @type {any[]} others' leases */ this.others = [];
    this.resyncOnce = false;
    /** @type {{path: string, body: any, init: any, at: number}[]} */ this.requests = [];
    /** @type {Promise<void>|null} */ this.gate = null;
    this.open = 0;
    this.maxOpen = 0;
    this.fetch = this.fetch.bind(this);
  }

  /** A change made by someone else, straight into the log. @param {any} op */
  apply(op, clientId = 'cl_other', userId = 'usr_other') {
    const held = (/** @type {string} */ id) => this.others.some((o) => o.blockId === id && o.clientId !== clientId);
    const a = this.model.applyOp(op, { clientId, userId, name: userId, now: 1000, heldByOthers: held, leasesEnabled: this.mode === 'full' });
    const result = { ...a.result };
    if (a.effects.length) {
      const seq = this.model.lastSeq + 1;
      this.log.push({ seq, opId: op.opId, kind: op.kind, clientId, userId, at: 1000, effects: a.effects });
      this.model.lastSeq = seq;
      result.seq = seq;
    }
    this.results.set(op.opId, result);
    return result;
  }

  /** @param {string} url @param {any} init */
  async fetch(url, init = {}) {
    const path = new URL(url).pathname.replace(`/api/v1/docs/${DOC}/`, '');
    const body = init.body ? JSON.parse(init.body) : null;
    this.requests.push({ path, body, init, at: Date.now() });
    this.open++;
    this.maxOpen = Math.max(this.maxOpen, this.open);
    try {
      if (this.gate) await this.gate;
      if (this.down) throw new TypeError('fetch failed');
      if (this.status) return reply(this.status, { error: { code: 'forbidden', message: 'no access' } });
      if (path.startsWith('snapshot')) return reply(200, this.snapshot());
      if (path === 'sync') {
        const r = reply(200, this.sync(body));
        if (this.dropReply) throw new TypeError('reply lost');
        return r;
      }
      if (path === 'leave') return reply(204, null);
      return reply(404, { error: { code: 'not_found', message: path } });
    } finally {
      this.open--;
    }
  }

  snapshot() {
    return {
      docId: DOC, title: this.model.title, titleVersion: this.model.titleVersion, icon: null,
      headSeq: this.model.lastSeq, logFloor: 0, role: this.role, shared: true, mode: this.mode, sessions: 1,
      blocks: this.model.toSnapshotBlocks(), leases: { others: this.others },
    };
  }

  /** @param {any} body */
  sync(body) {
    const results = (body.ops ?? []).map((/** @type {any} */ op) =>
      this.results.get(op.opId) ?? this.apply(op, body.clientId, USER.userId));
    const head = this.model.lastSeq;
    const resync = this.resyncOnce || body.lastSeq > head;
    this.resyncOnce = false;
    const after = this.log.filter((e) => e.seq > body.lastSeq);
    const ops = resync ? [] : after.slice(0, this.pageSize);
    return {
      results, ops, hasMore: !resync && after.length > ops.length, headSeq: head, leaseSeq: this.leaseSeq,
      leases: { granted: body.leases?.hold ?? [], denied: [], others: this.mode === 'full' ? this.others : [] },
      role: this.role, shared: true, sessions: 1, mode: this.mode, resync,
    };
  }

  /** @param {string} path */
  syncs(path = 'sync') {
    return this.requests.filter((r) => r.path === path);
  }

  /** Every opId the server was sent, with how often. */
  sentOps() {
    /** @type {Map<string, number>} */
    const m = new Map();
    for (const r of this.syncs()) for (const op of r.body.ops ?? []) m.set(op.opId, (m.get(op.opId) ?? 0) + 1);
    return m;
  }
}

/** @param {number} status @param {any} body */
function reply(status, body) {
  return {
    ok: status >= 200 && status < 300, status,
    json: async () => body,
    text: async () => (body === null ? '' : JSON.stringify(body)),
  };
}

/** A ladder stand-in: records start/stop and lets tests deliver wake-ups. */
function fakeLadder() {
  const l = {
    started: 0, stopped: 0, stage: /** @type {any} */ ('live'), trying: /** @type {any} */ ('live'),
    /** @type {any} */ opts: null, online: true,
    start() { this.started++; },
    stop() { this.stopped++; },
    /** @param {boolean} b */ setOnline(b) { this.online = b; },
    noteCursor() {},
  };
  return { l, factory: (/** @type {any} */ o) => ((l.opts = o), l) };
}

/** @type {IDBFactory} */
let idb;
/** @type {FakeServer} */
let server;
/** @type {ReturnType<typeof createMemoryLocks>} */
let locks;
/** @type {DocSyncEngine[]} */
let engines;

beforeEach(() => {
  // setImmediate stays real: fake-indexeddb schedules its work with it.
  vi.useFakeTimers({ now: 1_000_000, toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  idb = new IDBFactory();
  server = new FakeServer();
  locks = createMemoryLocks();
  engines = [];
});
afterEach(async () => {
  for (const e of engines) e.closed = true; // no leave request noise after a test
  vi.useRealTimers();
});

/** A real turn of the event loop: lets fake-indexeddb (setImmediate) complete its work. */
const turn = () => new Promise((r) => setImmediate(r));

/**
 * Moves fake time by `ms` in small steps, letting IndexedDB and fetch promises settle
 * between steps, so timers armed after a write see the right clock.
 */
async function run(ms = 0) {
  for (let left = ms; ; left -= 50) {
    for (let i = 0; i < 10; i++) {
      await turn();
      await vi.advanceTimersByTimeAsync(0);
    }
    if (left <= 0) break;
    await vi.advanceTimersByTimeAsync(Math.min(left, 50));
  }
  for (let i = 0; i < 30; i++) {
    await turn();
    // A setTimeout(fn, 0) armed inside a fake tick is due 1 ms later (fake-timers rule), so
    // the final settling moves the clock by a few ms in all.
    await vi.advanceTimersByTimeAsync(i % 3 === 2 ? 1 : 0);
  }
}

/**
 * `transport: 'ladder'`: the real WakeLadder; default: none (syncs every 3 s).
 * @param {{clientId?: string, transport?: any, fetch?: any, WebSocket?: any, storage?: any, snapshot?: any, stored?: any}} [o]
 */
async function makeEngine(o = {}) {
  const store = await openStore({ indexedDB: idb, IDBKeyRange });
  const e = new DocSyncEngine({
    docId: DOC, clientId: o.clientId ?? 'cl_me', user: USER, store, baseUrl: 'http://test', storage: o.storage ?? null,
    snapshot: o.snapshot ?? null, stored: o.stored ?? null,
    fetch: o.fetch ?? server.fetch, locks, transport: o.transport === 'ladder' ? undefined : (o.transport ?? null),
    WebSocket: o.WebSocket ?? null, EventSource: null,
  });
  engines.push(e);
  return e;
}

/** @param {DocSyncEngine} e */
async function openEngine(e) {
  const p = e.open();
  await run();
  await p;
  return e;
}

/** Seeds the server document with top-level bullets. @param {string[]} texts */
function seed(texts) {
  let key = 'a0';
  const ids = texts.map((t, i) => {
    const id = `blk_seed${i}`;
    server.apply({ opId: `op_seed${i}`, kind: 'insert', blockId: id, parentId: null, orderKey: key, content: t });
    key = key === 'a0' ? 'a1' : `a${Number(key.slice(1)) + 1}`;
    return id;
  });
  return ids;
}

/** @param {DocSyncEngine} e @param {string} id @param {string} content */
function typeInto(e, id, content) {
  const b = /** @type {any} */ (e.view.get(id));
  return e.submitOps([{ opId: `op_${crypto.randomUUID()}`, kind: 'set_content', blockId: id, content, baseVersion: b.version }], { step: 'typing' });
}

describe('the echo of own edits', () => {
  /** Everything of a block but when the change was made (the server's clock, not ours). @param {any} b */
  const untimed = (b) => ({ ...b, updatedAt: 0, deletedAt: b?.deletedAt === null ? null : 0 });
  /** The view must be exactly confirmed + queue (but for the times). @param {DocSyncEngine} e */
  const expectViewIsConfirmedPlusQueue = (e) => {
    const v = e.confirmed.model.clone();
    for (const i of e.queue) v.applyOp(i.rec.op, e.opContext());
    expect(e.view.rows()).toEqual(v.rows());
    for (const id of ['blk_seed0', 'blk_seed1']) expect(untimed(e.view.get(id))).toEqual(untimed(v.get(id)));
  };

  it('leaves the view as it is when it only confirms what the view shows; anyone else\'s entry between is rebuilt in', async () => {
    const [b0, b1] = seed(['one', 'two']);
    const e = await openEngine(await makeEngine());
    await run(300);
    const rebuilds = vi.spyOn(e, 'rebuildView');
    for (const text of ['o', 'on', 'one', 'one!']) {
      typeInto(e, b0, text);
      await run(3500);
    }
    expect(e.queue.length).toBe(0);
    expect(server.model.get(b0)?.content).toBe('one!');
    expect(rebuilds, 'own echoes rebuilt the view').toHaveBeenCalledTimes(0);
    expectViewIsConfirmedPlusQueue(e);

    // Keystrokes typed faster than the sends merge into one queued op: the view counts the
    // version the server will give them, so their echo needs no rebuild either, and the
    // next edit is based on the server's version (no conflict copy of our own text).
    for (const text of ['one! a', 'one! ab', 'one! abc']) typeInto(e, b0, text);
    expect(e.view.get(b0)?.version).toBe((server.model.get(b0)?.version ?? 0) + 1);
    await run(3500);
    typeInto(e, b0, 'one! abcd');
    await run(3500);
    expect(server.model.get(b0)?.content).toBe('one! abcd');
    expect(server.log.filter((x) => x.effects.some((/** @type {any} */ f) => f.block?.conflictOf))).toEqual([]);
    expect(rebuilds, 'merged keystrokes\' echo rebuilt the view').toHaveBeenCalledTimes(0);
    expect(e.view.get(b0)?.version).toBe(server.model.get(b0)?.version);
    expectViewIsConfirmedPlusQueue(e);

    // Enter and Tab: a new bullet, moved under its sibling and back.
    const key = /** @type {any} */ (e.view.get(b0)).orderKey;
    e.submitOps([{ opId: 'op_enter', kind: 'insert', blockId: 'blk_new', parentId: null, orderKey: `${key}V`, content: '' }], { step: 'enter' });
    await run(3500);
    e.submitOps([{ opId: 'op_tab', kind: 'move', blockId: 'blk_new', parentId: b0, orderKey: 'a0' }], { step: 'tab' });
    await run(3500);
    e.submitOps([{ opId: 'op_untab', kind: 'move', blockId: 'blk_new', parentId: null, orderKey: `${key}V` }], { step: 'tab' });
    await run(3500);
    expect(server.model.get('blk_new')?.parentId).toBe(null);
    expect(rebuilds, 'own Enter and Tab echoes rebuilt the view').toHaveBeenCalledTimes(0);
    expectViewIsConfirmedPlusQueue(e);

    // Someone else's edit lands before ours: the reply carries it, and the view is rebuilt.
    server.apply({ opId: 'op_theirs', kind: 'set_content', blockId: b1, content: 'two (theirs)', baseVersion: 1 });
    typeInto(e, b0, 'one!!');
    await run(3500);
    expect(rebuilds.mock.calls.length).toBeGreaterThan(0);
    expect(e.view.get(b1)?.content).toBe('two (theirs)');
    expect(e.view.get(b0)?.content).toBe('one!!');
    expectViewIsConfirmedPlusQueue(e);
  });
});

describe('folds: a view setting of each person, not ops', () => {
  it('folding and unfolding sends nothing, lasts on this device, and the document keeps its own default', async () => {
    const [b0, b1] = seed(['parent', 'child']);
    server.apply({ opId: 'op_nest', kind: 'move', blockId: b1, parentId: b0, orderKey: 'a0' });
    const storage = memoryStorage();
    const e = await openEngine(await makeEngine({ storage }));
    await run(300);
    const sent = server.sentOps().size;
    const rowsBefore = e.state.rows;
    e.setFolds([[b0, true]]);
    expect(e.state.rows[0].collapsed).toBe(true);
    expect(e.state.rows[1]).toBe(rowsBefore[1]); // only the folded row is a new object
    // rows handed back with a changed fold (as the editor does) make no op either
    const r = e.commitRows(e.state.rows.map((x) => (x.id === b0 ? { ...x, collapsed: false } : x)), { step: 'props' });
    expect(r.ok && r.ops).toEqual([]);
    await run(1_000);
    expect(server.sentOps().size).toBe(sent);
    expect(server.model.get(b0)?.collapsed).toBe(false);
    await e.close();
    // The same person on this device again: still folded, also after others' changes.
    server.apply({ opId: 'op_other', kind: 'set_content', blockId: b0, content: 'parent, renamed', baseVersion: 1 });
    const again = await openEngine(await makeEngine({ storage }));
    await run(300);
    expect(again.state.rows[0]).toMatchObject({ content: 'parent, renamed', collapsed: true });
    again.setFolds([[b0, false]]);
    expect(again.state.rows[0].collapsed).toBe(false);
    await again.close();
    // Someone else (another user on this device) sees the document's default.
    const other = new DocSyncEngine({
      docId: DOC, clientId: 'cl_other', user: { userId: 'usr_other', name: 'Other' }, store: again.store, baseUrl: 'http://test',
      storage, fetch: /** @type {any} */ (server.fetch), locks, transport: null, WebSocket: null, EventSource: null,
    });
    engines.push(other);
    server.apply({ opId: 'op_default', kind: 'set_props', blockId: b0, props: { collapsed: true } });
    await openEngine(other);
    await run(300);
    expect(other.state.rows[0].collapsed).toBe(true); // the document's default (set by the API)
  });
});

describe('persistence', () => {
  it('counts an edit as pending only once IndexedDB has it, and sends it only after that', async () => {
    const [b0] = seed(['hello']);
    const e = await openEngine(await makeEngine());
    /** @type {number[]} */
    const pendings = [];
    e.subscribe((s) => pendings.push(s.pending));
    const syncsBefore = server.syncs().length;
    const r = typeInto(e, b0, 'hello world');
    expect(r.ok).toBe(true);
    expect(e.state.rows[0].content).toBe('hello world');
    expect(e.state.pending).toBe(0); // applied to the view, not yet on disk
    expect(e.state.unsaved).toBe(1); // and the status line says so ("Saving…")
    const stored = await e.store.loadQueue(DOC, e.clientId);
    await run();
    expect(stored.length + (await e.store.loadQueue(DOC, e.clientId)).length).toBeGreaterThan(0);
    expect(e.state.pending).toBe(1);
    expect(e.state.unsaved).toBe(0);
    await run(300);
    // one request carried the edit (a second one may follow: it lets go of the bullet)
    expect(server.syncs().slice(syncsBefore).filter((s) => s.body.ops?.length).length).toBe(1);
    expect(e.state.pending).toBe(0);
    expect(pendings).toContain(1);
    expect(server.model.get(b0)?.content).toBe('hello world');
    expect(await e.store.loadQueue(DOC, e.clientId)).toEqual([]);
  });

  it('the queue write begins, and asks for its commit, in the same task as the edit', async () => {
    const [b0] = seed(['hello']);
    const e = await openEngine(await makeEngine());
    /** @type {{stores: string[], mode: string, commitAsked: boolean}[]} */
    const txs = [];
    const db = /** @type {any} */ (e.store.db);
    const orig = db.transaction.bind(db);
    db.transaction = (/** @type {any} */ stores, /** @type {any} */ mode) => {
      const tx = orig(stores, mode);
      const rec = { stores: [stores].flat(), mode, commitAsked: false };
      txs.push(rec);
      const commit = tx.commit.bind(tx);
      tx.commit = () => {
        rec.commitAsked = true;
        commit();
      };
      return tx;
    };
    typeInto(e, b0, 'hello w');
    // Synchronously, before any timer, frame or IndexedDB callback: the write is under way
    // and committing, but not yet counted as saved.
    expect(txs).toEqual([{ stores: ['queue'], mode: 'readwrite', commitAsked: true }]);
    expect(e.state.pending).toBe(0);
    // pagehide right after the next keystroke: its write, too, is begun before pageHide runs.
    typeInto(e, b0, 'hello wo');
    e.pageHide();
    expect(txs).toHaveLength(2);
    expect(txs[1]).toEqual({ stores: ['queue'], mode: 'readwrite', commitAsked: true });
    await run();
    const stored = await e.store.loadQueue(DOC, e.clientId);
    expect(stored.map((r) => /** @type {any} */ (r.op).content)).toEqual(['hello wo']);
  });

  it('an op whose write has not completed is neither counted nor sent; it is once the write completes', async () => {
    const [b0] = seed(['x']);
    const e = await openEngine(await makeEngine());
    const store = e.store;
    const put = store.putQueued.bind(store);
    /** @type {() => void} */
    let release = () => {};
    const gate = new Promise((r) => { release = () => r(undefined); });
    store.putQueued = async (recs) => {
      await gate;
      return put(recs);
    };
    const before = server.syncs().length;
    typeInto(e, b0, 'slow disk');
    await run(5_000);
    expect(e.state.pending).toBe(0);
    expect(server.sentOps().size).toBe(0);
    expect(server.syncs().length - before).toBeGreaterThanOrEqual(1); // periodic syncs went, without it
    release();
    await run();
    await run(100); // at most one throttle interval after the last (periodic) exchange
    expect([...server.sentOps().keys()]).toHaveLength(1);
    expect(server.model.get(b0)?.content).toBe('slow disk');
  });

  it('reopening shows the stored state at once (offline) and resends the queue with the same opIds', async () => {
    const [b0, b1] = seed(['one', 'two']);
    const a = await openEngine(await makeEngine());
    server.down = true;
    typeInto(a, b0, 'one edited offline');
    typeInto(a, b1, 'two edited offline');
    await run(300);
    expect(a.state.stage).toBe('offline');
    expect(a.state.stageLabel).toBe('Offline – changes saved on this device');
    expect(a.state.pending).toBe(2);
    const firstIds = [...server.sentOps().keys()];
    expect(firstIds).toHaveLength(2);
    await a.close();

    // A reload days later, still offline: the stored state shows before any network.
    const b = await makeEngine();
    /** @type {any[]} */
    const states = [];
    b.subscribe((s) => states.push(s));
    const opening = b.open();
    await run();
    await opening;
    const firstLoaded = states.find((s) => s.loaded);
    expect(firstLoaded.rows.map((/** @type {any} */ r) => r.content)).toEqual(['one edited offline', 'two edited offline']);
    expect(b.state.pending).toBe(2);
    server.down = false;
    b.setOnline(true);
    await run();
    expect(b.state.pending).toBe(0);
    expect(server.model.get(b0)?.content).toBe('one edited offline');
    // Same opIds on the wire again; each applied once.
    expect([...server.sentOps().keys()].sort()).toEqual(firstIds.sort());
    expect(server.log.filter((en) => firstIds.includes(en.opId))).toHaveLength(2);
  });

  it('a failed IndexedDB write shows in storageError; the op is still sent', async () => {
    const [b0] = seed(['a']);
    const e = await openEngine(await makeEngine());
    const quota = Object.assign(new Error('quota exceeded'), { name: 'QuotaExceededError' });
    e.store.putQueued = async () => {
      throw quota;
    };
    typeInto(e, b0, 'not on disk');
    await run();
    expect(e.state.storageError).toContain('QuotaExceededError');
    expect(e.state.pending).toBe(0); // never counted as saved on this device
    await run(300);
    expect(server.model.get(b0)?.content).toBe('not on disk');
  });

  it('an orphaned queue is adopted by exactly one of two engines opening together', async () => {
    const [b0] = seed(['x']);
    const gone = await openEngine(await makeEngine({ clientId: 'cl_gone' }));
    server.down = true;
    typeInto(gone, b0, 'typed in a tab that was then closed');
    await run();
    const orphanOp = (await gone.store.loadQueue(DOC, 'cl_gone'))[0].op.opId;
    gone.closed = true;
    gone.clearTimers();
    gone.releaseOwnLock();
    server.down = false;

    const e1 = await makeEngine({ clientId: 'cl_one' });
    const e2 = await makeEngine({ clientId: 'cl_two' });
    const p = Promise.all([e1.open(), e2.open()]);
    await run();
    await p;
    await run(1000);
    expect(server.sentOps().get(orphanOp)).toBe(1);
    expect(server.model.get(b0)?.content).toBe('typed in a tab that was then closed');
    expect(await e1.store.queueOwners(DOC)).toEqual([]);
  });

  /**
   * A tab that dies (renderer crash, discard) right after a keystroke: IndexedDB never
   * committed what it was writing (its writes hang), and its lock is let go.
   * @param {DocSyncEngine} e
   */
  function crash(e) {
    e.closed = true;
    e.clearTimers();
    e.releaseOwnLock();
  }

  it('a tab that crashes before IndexedDB committed loses nothing: the journal is merged at the next start, sent once', async () => {
    const [b0] = seed(['x']);
    const storage = memoryStorage();
    const tab = await openEngine(await makeEngine({ clientId: 'cl_tab', storage }));
    server.down = true;
    typeInto(tab, b0, 'x on disk');
    await run();
    tab.store.putQueued = () => new Promise(() => {}); // the renderer dies before these commit
    typeInto(tab, b0, 'x on disk, then only in the journal');
    tab.submitOps([{ opId: 'op_new_bullet', kind: 'insert', blockId: 'blk_new', parentId: null, orderKey: 'a5', content: 'new' }], { step: 'insert' });
    tab.noteTyping('blk_new', 'new and typed but not handed over');
    expect(tab.state.unsaved).toBeGreaterThan(0);
    crash(tab);
    server.down = false;

    const reloaded = await openEngine(await makeEngine({ clientId: 'cl_tab', storage }));
    expect(reloaded.state.rows.map((r) => r.content)).toEqual(['x on disk, then only in the journal', 'new and typed but not handed over']);
    await run(1000);
    expect(server.model.get(b0)?.content).toBe('x on disk, then only in the journal');
    expect(server.model.get('blk_new')?.content).toBe('new and typed but not handed over');
    expect([...server.sentOps().values()].every((n) => n === 1)).toBe(true);
    expect(storage.map.size).toBe(0);
    expect(server.model.rows().filter((r) => r.conflictOf)).toEqual([]);
  });

  it('a crashed tab beside a live one: the live tab adopts its queue and journal when its lock frees', async () => {
    const [b0, b1] = seed(['a', 'b']);
    const storage = memoryStorage();
    const live = await openEngine(await makeEngine({ clientId: 'cl_live', storage }));
    const dying = await openEngine(await makeEngine({ clientId: 'cl_dying', storage }));
    server.down = true;
    typeInto(dying, b0, 'a from the tab that crashed');
    await run();
    dying.store.putQueued = () => new Promise(() => {});
    typeInto(dying, b1, 'b only in the journal');
    // The live tab starts again meanwhile (navigation): the dying tab's lock is busy then.
    const other = await openEngine(await makeEngine({ clientId: 'cl_other', storage }));
    expect(other.queue).toHaveLength(0);
    crash(dying);
    server.down = false;
    await run(ADOPT_GRACE_MS + 1000);
    expect(server.model.get(b0)?.content).toBe('a from the tab that crashed');
    expect(server.model.get(b1)?.content).toBe('b only in the journal');
    expect(other.state.rows.map((r) => r.content)).toEqual(['a from the tab that crashed', 'b only in the journal']);
    // The crashed tab's session (and its leases) ended before its ops went out as ours.
    const leaveAt = server.requests.findIndex((r) => r.path === 'leave' && r.body.clientId === 'cl_dying');
    const opsAt = server.requests.findIndex((r) => r.path === 'sync' && r.body.clientId === 'cl_other' && r.body.ops?.length);
    expect(leaveAt).toBeGreaterThanOrEqual(0);
    expect(leaveAt).toBeLessThan(opsAt);
    expect([...server.sentOps().values()].every((n) => n === 1)).toBe(true);
    expect(storage.map.size).toBe(0);
    live.closed = true;
  });

  it('a reloading tab takes its own queue back before a watching tab adopts it', async () => {
    const [b0] = seed(['a']);
    const storage = memoryStorage();
    const old = await openEngine(await makeEngine({ clientId: 'cl_reload', storage }));
    server.down = true;
    typeInto(old, b0, 'a typed before the reload');
    await run();
    const watcher = await openEngine(await makeEngine({ clientId: 'cl_watch', storage }));
    const reloaded = await makeEngine({ clientId: 'cl_reload', storage });
    crash(old); // the old page lets go of the lock …
    await run(300);
    const opening = reloaded.open(); // … and the reloaded one starts a moment later
    await run(ADOPT_GRACE_MS + 1000);
    await opening;
    expect(reloaded.clientId).toBe('cl_reload');
    expect(reloaded.queue).toHaveLength(1);
    expect(watcher.queue).toHaveLength(0);
    server.down = false;
    reloaded.setOnline(true);
    await run(500);
    expect(server.model.get(b0)?.content).toBe('a typed before the reload');
  });

  it('typing offline after a failed send, then a reload: the held-back text is not shown as a conflict copy', async () => {
    const [b0] = seed(['x']);
    const e = await openEngine(await makeEngine({ clientId: 'cl_tab' }));
    server.down = true;
    for (const t of ['x1', 'x12', 'x123']) typeInto(e, b0, t); // one merged op; the view counted three versions
    await run(300); // sent and failed: frozen
    typeInto(e, b0, 'x1234'); // a second op, held back behind the first
    await run();
    await e.close();
    const reloaded = await openEngine(await makeEngine({ clientId: 'cl_tab' }));
    expect(reloaded.state.rows.map((r) => [r.content, r.conflictOf ?? null])).toEqual([['x1234', null]]);
    server.down = false;
    reloaded.setOnline(true);
    await run(1000);
    expect(server.model.get(b0)?.content).toBe('x1234');
    expect(server.model.rows().filter((r) => r.conflictOf)).toEqual([]);
  });

  it('a live tab keeps its queue: its lock is not available to others', async () => {
    seed(['x']);
    const live = await openEngine(await makeEngine({ clientId: 'cl_live' }));
    server.down = true;
    typeInto(live, 'blk_seed0', 'mine');
    await run();
    const other = await openEngine(await makeEngine({ clientId: 'cl_other_tab' }));
    expect(other.queue).toHaveLength(0);
    expect(live.queue).toHaveLength(1);
  });

  it('a duplicated tab (same clientId, lock held) takes a fresh clientId', async () => {
    seed(['x']);
    const first = await openEngine(await makeEngine({ clientId: 'cl_same' }));
    const dup = await makeEngine({ clientId: 'cl_same' });
    const opening = dup.open();
    await run(RELOAD_LOCK_WAIT_MS + 500);
    await opening;
    expect(first.clientId).toBe('cl_same');
    expect(dup.clientId).not.toBe('cl_same');
    expect(dup.clientId.startsWith('cl_')).toBe(true);
  });

  it('a reloaded tab takes its lock the moment the old page lets go of it, not at some later look', async () => {
    seed(['x']);
    const old = await openEngine(await makeEngine({ clientId: 'cl_tab' }));
    const reloaded = await makeEngine({ clientId: 'cl_tab' });
    const opening = reloaded.open();
    await run(300);
    const closing = old.close();
    await run(0);
    await closing;
    // Nobody else can have it now: the new page holds it already.
    const free = await locks.request('docsync:client:cl_tab', { ifAvailable: true }, (l) => l !== null);
    expect(free).toBe(false);
    await run(100);
    await opening;
    expect(reloaded.clientId).toBe('cl_tab');
  });

  it('a reloaded tab whose old page lets go of the lock late keeps its clientId and its queue', async () => {
    const [b0] = seed(['x']);
    const old = await openEngine(await makeEngine({ clientId: 'cl_tab' }));
    server.down = true;
    typeInto(old, b0, 'x typed offline');
    await run(50);
    // The reload: the new page opens while the old one still holds the lock for a moment.
    const reloaded = await makeEngine({ clientId: 'cl_tab' });
    const opening = reloaded.open();
    await run(300);
    const closing = old.close(); // the old page goes away only now, releasing its lock
    await run(RELOAD_LOCK_WAIT_MS);
    await closing;
    await opening;
    expect(reloaded.clientId).toBe('cl_tab');
    expect(reloaded.state.rows.map((r) => r.content)).toContain('x typed offline');
  });
});

describe('opening with what the app fetched or read early', () => {
  it("this device's copy read by the app is shown without reading it again", async () => {
    seed(['on this device']);
    const first = await openEngine(await makeEngine());
    await first.close();
    const copy = await first.store.loadDoc(DOC);
    const e = await makeEngine();
    let reads = 0;
    const loadDoc = e.store.loadDoc.bind(e.store);
    e.store.loadDoc = async (id) => (reads++, loadDoc(id));
    e.earlyStored = Promise.resolve(copy);
    server.down = true; // shown from the copy alone
    await openEngine(e);
    expect(e.state.rows.map((r) => r.content)).toEqual(['on this device']);
    expect(reads).toBe(0);
  });

  const snapshotRequests = () => server.requests.filter((r) => r.path.startsWith('snapshot')).length;

  it('is used instead of a request of its own, once', async () => {
    seed(['from the early snapshot']);
    const early = { clientId: 'cl_me', promise: Promise.resolve(server.snapshot()) };
    const e = await openEngine(await makeEngine({ snapshot: early }));
    expect(e.state.rows.map((r) => r.content)).toEqual(['from the early snapshot']);
    expect(snapshotRequests()).toBe(0);
    expect(e.inbound.earlySnapshot).toBeNull();
  });

  it('a failed one, or one for another clientId, is not used: the engine asks itself', async () => {
    seed(['asked again']);
    const failed = { clientId: 'cl_me', promise: Promise.reject(new Error('offline')) };
    failed.promise.catch(() => {});
    const a = await openEngine(await makeEngine({ snapshot: failed }));
    expect(a.state.rows.map((r) => r.content)).toEqual(['asked again']);
    expect(snapshotRequests()).toBe(1);
    idb = new IDBFactory(); // another device: nothing stored
    const other = { clientId: 'cl_someone_else', promise: Promise.resolve({ ...server.snapshot(), blocks: [] }) };
    const b = await openEngine(await makeEngine({ clientId: 'cl_b', snapshot: other }));
    expect(b.state.rows.map((r) => r.content)).toEqual(['asked again']);
    expect(snapshotRequests()).toBe(2);
  });
});

describe('the send loop', () => {
  it('sends a change at once when the line is idle, then at most every 100 ms with the changes made meanwhile merged (keeping the FIRST baseVersion)', async () => {
    const [b0] = seed(['v1']);
    const e = await openEngine(await makeEngine());
    await run(200); // the opening exchange is over 100 ms ago: the line is idle
    const base = /** @type {number} */ (e.view.get(b0)?.version);
    const from = server.syncs().length;
    typeInto(e, b0, 'v1 a');
    await run(); // leading edge: stored, then sent in the same turn of timers
    expect(server.syncs().slice(from).flatMap((r) => r.body.ops ?? []).map((o) => o.content)).toEqual(['v1 a']);
    typeInto(e, b0, 'v1 ab'); // the view's version is now base+1; the merge must keep it
    await run(20);
    typeInto(e, b0, 'v1 abc');
    await run(20);
    typeInto(e, b0, 'v1 abcd');
    await run(20);
    await run(300);
    const syncs = server.syncs().slice(from).filter((r) => (r.body.ops ?? []).length > 0);
    const sent = syncs.flatMap((r) => r.body.ops);
    expect(sent.map((o) => [o.content, o.baseVersion])).toEqual([['v1 a', base], ['v1 abcd', base + 1]]);
    expect(syncs[1].at - syncs[0].at).toBeGreaterThanOrEqual(100);
    expect(syncs[1].at - syncs[0].at).toBeLessThan(150);
    expect(server.model.get(b0)?.content).toBe('v1 abcd');
  });

  it('a continuous typist costs at most ~10 /sync a second', async () => {
    const [b0] = seed(['']);
    const e = await openEngine(await makeEngine());
    await run(200);
    const from = server.syncs().length;
    let text = '';
    for (let i = 0; i < 100; i++) {
      text += 'x';
      typeInto(e, b0, text);
      await run(20); // 50 keys a second for 2 s
    }
    await run(300);
    const times = server.syncs().slice(from).map((r) => r.at);
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(100);
    expect(Math.max(...gaps)).toBeLessThan(150); // and no slower: every 100 ms while typing
    expect(server.model.get(b0)?.content).toBe(text);
  });

  it('never merges into an op that was already on the wire', async () => {
    const [b0] = seed(['v1']);
    const e = await openEngine(await makeEngine());
    /** @type {() => void} */
    let release = () => {};
    server.gate = new Promise((r) => (release = () => r(undefined)));
    typeInto(e, b0, 'first');
    await run(300);
    typeInto(e, b0, 'second'); // the first is in flight now
    server.gate = null;
    release();
    await run(300);
    const sent = server.syncs().flatMap((r) => r.body.ops ?? []);
    expect(sent.map((o) => o.content)).toEqual(['first', 'second']);
    expect(server.model.get(b0)?.content).toBe('second');
  });

  it('holds a text op back until the earlier one of its bullet is answered, then bases it on the outcome', async () => {
    const [b0] = seed(['x']);
    const e = await openEngine(await makeEngine());
    server.apply({ opId: 'op_r', kind: 'set_content', blockId: b0, content: 'x theirs', baseVersion: 1 }); // v2, unseen
    server.dropReply = true;
    typeInto(e, b0, 'x mine'); // baseVersion 1: conflicts on the server; we never hear
    await run(300);
    typeInto(e, b0, 'x mine more'); // view says v2, but v2 is THEIR text
    await run(500);
    // Not sent while the first one's outcome is unknown.
    expect(server.syncs().flatMap((r) => r.body.ops ?? []).map((o) => o.content)).toEqual(['x mine']);
    server.dropReply = false;
    await run(2000);
    const sent = server.syncs().flatMap((r) => r.body.ops ?? []);
    const second = sent.find((o) => o.content === 'x mine more');
    expect(second?.baseVersion).toBe(1); // the first conflicted: the version stays 1
    const texts = server.model.toSnapshotBlocks().filter((b) => !b.deleted).map((b) => b.content);
    expect(texts).toContain('x theirs');
    expect(texts).toContain('x mine more');
  });

  it('typing split over several ops by a failed send ends in ONE conflict copy with the whole text', async () => {
    const [b0] = seed(['plan']);
    const e = await openEngine(await makeEngine());
    server.down = true;
    typeInto(e, b0, 'plan (bob');
    await run(300); // this attempt fails: the op is frozen (it may have reached the server)
    typeInto(e, b0, 'plan (bob: one)');
    await run(500);
    server.apply({ opId: 'op_alice', kind: 'set_content', blockId: b0, content: 'plan (alice: two)', baseVersion: 1 });
    server.down = false;
    e.setOnline(true);
    await run(3000);
    const live = server.model.toSnapshotBlocks().filter((b) => !b.deleted);
    expect(live.map((b) => [b.content, b.conflictOf])).toEqual([
      ['plan (alice: two)', null],
      ['plan (bob: one)', b0],
    ]);
    expect(e.state.rows.map((r) => r.content)).toEqual(['plan (alice: two)', 'plan (bob: one)']);
    expect(e.state.pending).toBe(0);
  });

  it('typing split by a failed send, then a reload: the second op is based on the first one\'s version, no conflict copy', async () => {
    const [b0] = seed(['Edit me 4']);
    const a = await openEngine(await makeEngine());
    server.down = true;
    const typeRow = (/** @type {string} */ text) =>
      a.commitRows(a.state.rows.map((r) => (r.id === b0 ? { ...r, content: text } : r)), { step: 'typing' });
    typeRow('Edit me 4 (bob');
    await run(300); // the send fails: this op is frozen
    typeRow('Edit me 4 (bob, offline d');
    typeRow('Edit me 4 (bob, offline day 4)');
    await run(100);
    expect(a.queue.map((i) => [/** @type {any} */ (i.rec.op).content, /** @type {any} */ (i.rec.op).baseVersion])).toEqual([
      ['Edit me 4 (bob', 1],
      ['Edit me 4 (bob, offline day 4)', 2],
    ]);
    await a.close();
    const b = await openEngine(await makeEngine());
    expect(b.state.rows.map((r) => [r.content, r.conflictOf])).toEqual([['Edit me 4 (bob, offline day 4)', null]]);
    server.down = false;
    b.setOnline(true);
    await run(3000);
    expect(server.model.toSnapshotBlocks().filter((x) => !x.deleted).map((x) => [x.content, x.conflictOf])).toEqual([
      ['Edit me 4 (bob, offline day 4)', null],
    ]);
    expect(b.state.pending).toBe(0);
  });

  it('after an applied text op, the next one is based on the version it produced', async () => {
    const [b0] = seed(['x']);
    const e = await openEngine(await makeEngine());
    /** @type {() => void} */
    let release = () => {};
    server.gate = new Promise((r) => (release = () => r(undefined)));
    typeInto(e, b0, 'x1');
    await run(300);
    typeInto(e, b0, 'x12'); // the first is in flight: a second op, held back
    server.gate = null;
    release();
    await run(1000);
    const sent = server.syncs().flatMap((r) => r.body.ops ?? []);
    expect(sent.map((o) => [o.content, o.baseVersion])).toEqual([['x1', 1], ['x12', 2]]);
    expect(server.model.get(b0)?.content).toBe('x12');
    expect(e.state.rows.filter((r) => r.conflictOf)).toEqual([]);
  });

  it('keeps one /sync in flight; edits meanwhile go in the next request', async () => {
    const [b0, b1] = seed(['a', 'b']);
    const e = await openEngine(await makeEngine());
    /** @type {() => void} */
    let release = () => {};
    server.gate = new Promise((r) => (release = () => r(undefined)));
    server.maxOpen = 0;
    typeInto(e, b0, 'a1');
    await run(300);
    typeInto(e, b1, 'b1');
    e.focus(b1); // a lease request wants a sync at once, but one is in flight
    await run(5000);
    expect(server.maxOpen).toBe(1);
    const n = server.syncs().length;
    server.gate = null;
    release();
    await run(300);
    expect(server.syncs().length).toBeGreaterThan(n);
    expect(server.maxOpen).toBe(1);
    expect(server.model.get(b1)?.content).toBe('b1');
  });

  it('a full document or a spent write budget keeps the text queued and retries it', async () => {
    const [b0] = seed(['a']);
    const e = await openEngine(await makeEngine());
    const real = server.fetch.bind(server);
    let refusals = 3;
    e.fetchFn = async (url, init) => {
      const body = init?.body ? JSON.parse(/** @type {string} */ (init.body)) : null;
      if (body?.ops?.length && refusals > 0) {
        refusals--;
        server.requests.push({ path: 'sync', body, init, at: Date.now() });
        const code = refusals % 2 ? 'document_full' : 'write_budget';
        return reply(code === 'document_full' ? 413 : 429, { error: { code, message: 'budget' } });
      }
      return real(url, init);
    };
    typeInto(e, b0, 'kept text');
    await run(300);
    await run(2_000); // refused twice so far (backoff 1 s, 2 s): nothing dropped
    expect(e.state.pending).toBeGreaterThan(0);
    expect(server.model.get(b0)?.content).toBe('a');
    await run(30_000);
    expect(server.model.get(b0)?.content).toBe('kept text');
    expect(e.state.pending).toBe(0);
  });

  it('an op the server calls invalid is found by splitting and dropped alone; a refused request drops nothing', async () => {
    const [b0, b1] = seed(['a', 'b']);
    const e = await openEngine(await makeEngine());
    const real = server.fetch.bind(server);
    /** @type {string|null} */
    let refuse = 'ops';
    e.fetchFn = async (url, init) => {
      const body = init?.body ? JSON.parse(/** @type {string} */ (init.body)) : null;
      const bad = body?.ops?.some((/** @type {any} */ op) => op.blockId === b1);
      if (refuse === 'ops' && bad) return reply(400, { error: { code: 'bad_request', message: `ops[${body.ops.length - 1}].content: not allowed` } });
      if (refuse === 'request' && body?.ops?.length) return reply(400, { error: { code: 'bad_request', message: 'leases.hold: 1001 entries (limit 1000)' } });
      return real(url, init);
    };
    typeInto(e, b0, 'good');
    typeInto(e, b1, 'bad');
    await run(5_000);
    expect(server.model.get(b0)?.content).toBe('good');
    expect(server.model.get(b1)?.content).toBe('b');
    expect(e.state.pending).toBe(0);
    expect(e.state.notice).toMatch(/could not be saved/);
    // A refusal of the request as a whole: the op stays queued and goes once it is accepted.
    refuse = 'request';
    typeInto(e, b0, 'kept');
    await run(5_000);
    expect(e.state.pending).toBe(1);
    expect(e.state.notice).toMatch(/Your text is kept/);
    refuse = null;
    await run(40_000);
    expect(server.model.get(b0)?.content).toBe('kept');
    expect(e.state.pending).toBe(0);
  });

  it('retries with backoff 1, 2, 4 … 30 s', async () => {
    const [b0] = seed(['a']);
    const e = await openEngine(await makeEngine());
    server.down = true;
    const from = server.syncs().length;
    typeInto(e, b0, 'x');
    await run(300);
    await run(200_000);
    const times = server.syncs().slice(from).map((r) => r.at);
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    expect(gaps.slice(0, 8)).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    server.down = false;
    await run(30_000);
    expect(e.state.pending).toBe(0);
    expect(e.state.stage).not.toBe('offline');
  });

  it('a proxy page instead of JSON is a server failure: retried with backoff, not shown as offline', async () => {
    const [b0] = seed(['a']);
    const e = await openEngine(await makeEngine());
    const real = server.fetch;
    let html = 2;
    e.fetchFn = async (url, init) => {
      if (html-- > 0) {
        server.requests.push({ path: 'html', body: null, init, at: Date.now() });
        return { ok: true, status: 200, json: async () => { throw new SyntaxError('<'); }, text: async () => '<html>portal</html>' };
      }
      return real(url, init);
    };
    typeInto(e, b0, 'through the portal');
    await run(300);
    expect(e.state.stage).not.toBe('offline');
    expect(e.state.pending).toBe(1);
    await run(3000); // retries after 1 s, then 2 s
    expect(server.model.get(b0)?.content).toBe('through the portal');
    expect(e.state.pending).toBe(0);
  });

  it('403 keeps the queue, stops sending and sets the error', async () => {
    const [b0] = seed(['a']);
    const e = await openEngine(await makeEngine());
    server.status = 403;
    typeInto(e, b0, 'kept');
    await run(300);
    expect(e.state.error).toMatchObject({ status: 403 });
    expect(e.state.pending).toBe(1);
    const n = server.requests.length;
    typeInto(e, b0, 'kept too');
    await run(120_000);
    expect(server.requests.length).toBe(n);
    // 'kept' was on the wire (frozen), so 'kept too' is a second op; both stay on the device.
    expect((await e.store.loadQueue(DOC, e.clientId)).map((r) => /** @type {any} */ (r.op).content)).toEqual(['kept', 'kept too']);
  });

  it('resync: reloads the snapshot and re-applies the queue on top', async () => {
    const [b0, b1] = seed(['a', 'b']);
    const e = await openEngine(await makeEngine());
    server.down = true;
    typeInto(e, b1, 'mine, unsent');
    await run(300);
    server.apply({ opId: 'op_theirs', kind: 'set_content', blockId: b0, content: 'theirs', baseVersion: 1 });
    server.resyncOnce = true;
    server.down = false;
    // The first reply says resync (and applies nothing new for us thanks to results): the
    // engine then GETs the snapshot and shows it with the queue on top.
    await run(1000);
    expect(server.requests.some((r) => r.path.startsWith('snapshot'))).toBe(true);
    expect(e.state.rows.map((r) => r.content)).toEqual(['theirs', 'mine, unsent']);
    await run(1000);
    expect(server.model.get(b1)?.content).toBe('mine, unsent');
  });

  it('ops acknowledged beyond a rolled-back server head are sent again after the resync', async () => {
    const [b0] = seed(['a']);
    const e = await openEngine(await makeEngine());
    typeInto(e, b0, 'acked then lost');
    // The reply acknowledges the op but carries no entries (as if the page ended there).
    const realSync = server.sync.bind(server);
    server.sync = (body) => ({ ...realSync(body), ops: [], headSeq: e.state.lastSeq, hasMore: false });
    await run(300);
    expect(e.queue[0]?.rec.ackedSeq).toBe(2);
    // The server is restored from a backup taken before that op.
    server.sync = realSync;
    server.model = DocModel.fromSnapshot({ docId: DOC, title: 'Doc', titleVersion: 1, icon: null, headSeq: 1, blocks: server.model.toSnapshotBlocks().map((b) => ({ ...b, content: 'a', version: 1 })) });
    server.log = server.log.slice(0, 1);
    server.results = new Map([...server.results].filter(([k]) => k.startsWith('op_seed')));
    server.resyncOnce = true;
    e.syncNow();
    await run(1000);
    expect(server.model.get(b0)?.content).toBe('acked then lost');
    expect(e.state.pending).toBe(0);
  });

  it('a gap in seq reloads the snapshot too', async () => {
    const [b0] = seed(['a']);
    const e = await openEngine(await makeEngine());
    server.apply({ opId: 'op_t1', kind: 'set_content', blockId: b0, content: 't1', baseVersion: 1 });
    server.apply({ opId: 'op_t2', kind: 'set_content', blockId: b0, content: 't2', baseVersion: 2 });
    server.log = server.log.filter((en) => en.opId !== 'op_t1'); // as if compacted away
    const snaps = server.syncs('snapshot').length;
    e.syncNow();
    await run();
    expect(server.requests.filter((r) => r.path.startsWith('snapshot')).length).toBeGreaterThan(snaps);
    expect(e.state.rows[0].content).toBe('t2');
    expect(e.state.lastSeq).toBe(server.model.lastSeq);
  });

  it('hasMore: keeps pulling until caught up', async () => {
    seed(['a', 'b', 'c', 'd', 'e']);
    server.pageSize = 2;
    const e = await makeEngine();
    // Start from an empty stored copy at seq 0 so the log is read in pages.
    await e.store.saveSnapshot({ docId: DOC, title: 'Doc', titleVersion: 1, icon: null, lastSeq: 0, role: 'editor', mode: 'full', shared: true, sessions: 1, savedAt: 0 }, []);
    await openEngine(e);
    expect(server.syncs().map((r) => r.body.lastSeq)).toEqual([0, 2, 4]);
    expect(e.state.lastSeq).toBe(5);
    expect(e.state.rows.map((r) => r.content)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('a rejected op is dropped with a notice; a conflict copy arrives through the log', async () => {
    const [b0, b1] = seed(['a', 'b']);
    const e = await openEngine(await makeEngine());
    server.others = [{ blockId: b0, clientId: 'cl_x', userId: 'usr_x', name: 'Xena', expiresInMs: 10000 }];
    // The engine does not know of the lease yet: the server refuses the move, conflicts the text.
    e.submitOps([{ opId: 'op_mv', kind: 'move', blockId: b0, parentId: b1, orderKey: 'a0' }], { step: 'move' });
    e.submitOps([{ opId: 'op_tx', kind: 'set_content', blockId: b0, content: 'mine', baseVersion: 1 }], { step: 'typing' });
    await run(300);
    expect(e.state.notice).toContain('someone else is editing');
    expect(e.state.pending).toBe(0);
    const copy = e.state.rows.find((r) => r.conflictOf === b0);
    expect(copy?.content).toBe('mine');
    expect(e.state.rows.find((r) => r.id === b0)?.content).toBe('a');
    expect(e.state.locks.get(b0)).toEqual({ blockId: b0, userId: 'usr_x', name: 'Xena' });
  });
});

describe("others' leases", () => {
  it('offline, a colleague\'s lease ends here when its time has passed; online, the server\'s list rules', async () => {
    const [b0] = seed(['a']);
    server.others = [{ blockId: b0, clientId: 'cl_x', userId: 'usr_x', name: 'Xena', expiresInMs: 20_000 }];
    const e = await openEngine(await makeEngine());
    expect(e.state.locks.get(b0)?.name).toBe('Xena');
    expect(typeInto(e, b0, 'mine').ok).toBe(false);
    server.down = true;
    e.setOnline(false);
    await run(19_000);
    expect(e.state.locks.has(b0)).toBe(true);
    const before = e.state.locks;
    await run(1_500);
    expect(e.state.locks.has(b0)).toBe(false); // not frozen at the moment we went offline
    expect(before.has(b0)).toBe(true); // a new map: the state a UI holds is never changed under it
    expect(typeInto(e, b0, 'mine now').ok).toBe(true);
    // Back online: the server still lists a lease (renewed meanwhile): it holds again.
    server.down = false;
    e.setOnline(true);
    await run(100);
    expect(e.state.locks.get(b0)?.name).toBe('Xena');
  });

  it('our own other tab is not another person: its lease never locks us out', async () => {
    const [b0] = seed(['a']);
    const e0 = await makeEngine();
    const own = e0.user.userId;
    server.others = [{ blockId: b0, clientId: 'cl_my_other_tab', userId: own, name: 'Me', expiresInMs: 20_000 }];
    const e = await openEngine(e0);
    expect(e.state.locks.has(b0)).toBe(false);
    expect(typeInto(e, b0, 'mine').ok).toBe(true);
  });
});

describe('edits, locks and conflicts', () => {
  it('refuses an edit of a bullet another client holds, and any edit by a viewer', async () => {
    const [b0] = seed(['a']);
    server.others = [{ blockId: b0, clientId: 'cl_x', userId: 'usr_x', name: 'Xena', expiresInMs: 10000 }];
    const e = await openEngine(await makeEngine());
    const r = typeInto(e, b0, 'nope');
    expect(r).toMatchObject({ ok: false, reason: 'locked', heldBy: 'Xena' });
    expect(e.state.rows[0].content).toBe('a');
    expect(e.state.notice).toContain('Xena');
    // An insert below the locked bullet is fine.
    const ins = e.submitOps([{ opId: 'op_i', kind: 'insert', blockId: 'blk_new', parentId: null, orderKey: 'a0V', content: 'below' }], { step: 'insert' });
    expect(ins.ok).toBe(true);
    const del = e.submitOps([{ opId: 'op_d', kind: 'delete', blockId: b0 }], { step: 'delete' });
    expect(del.ok).toBe(false);

    server.role = 'viewer';
    server.others = [];
    await e.syncNow();
    await run();
    expect(typeInto(e, 'blk_new', 'x')).toMatchObject({ ok: false, reason: 'viewer' });
  });

  it('acceptConflict: the original takes the copy text (against its current version), the copy goes', async () => {
    const [b0] = seed(['original']);
    const e = await openEngine(await makeEngine());
    // Someone else's rejected text became a conflict copy of b0.
    server.apply({ opId: 'op_other1', kind: 'set_content', blockId: b0, content: 'theirs', baseVersion: 0 });
    await e.syncNow();
    await run();
    const copy = e.state.rows.find((r) => r.conflictOf === b0);
    expect(copy).toBeTruthy();
    const r = e.acceptConflict(/** @type {any} */ (copy).id);
    expect(r.ok).toBe(true);
    await run(300);
    expect(server.model.get(b0)?.content).toBe('theirs');
    expect(server.model.get(/** @type {any} */ (copy).id)?.deleted).toBe(true);
    expect(e.state.rows.map((x) => x.content)).toEqual(['theirs']);
  });

  it('accepting a copy whose original was deleted keeps both texts: the copy is marked resolved', async () => {
    const [b0] = seed(['original']);
    const e = await openEngine(await makeEngine());
    server.apply({ opId: 'op_other1', kind: 'set_content', blockId: b0, content: 'theirs', baseVersion: 0 });
    server.apply({ opId: 'op_del', kind: 'delete', blockId: b0 });
    await e.syncNow();
    await run();
    const copy = /** @type {any} */ (e.state.rows.find((r) => r.conflictOf === b0));
    expect(e.acceptConflict(copy.id).ok).toBe(true);
    await run(300);
    expect(server.model.get(b0)).toMatchObject({ deleted: true, content: 'original' });
    expect(server.model.get(copy.id)).toMatchObject({ deleted: false, content: 'theirs', conflictResolved: true });
  });

  it('keepConflict: both texts stay, the copy is marked resolved and counts as no open conflict', async () => {
    const [b0] = seed(['original']);
    const e = await openEngine(await makeEngine());
    server.apply({ opId: 'op_other1', kind: 'set_content', blockId: b0, content: 'theirs', baseVersion: 0 });
    await e.syncNow();
    await run();
    const copy = /** @type {any} */ (e.state.rows.find((r) => r.conflictOf === b0));
    expect(e.keepConflict(copy.id).ok).toBe(true);
    await run(300);
    expect(server.model.get(copy.id)).toMatchObject({ deleted: false, content: 'theirs', conflictResolved: true });
    expect(e.state.rows.map((x) => [x.content, x.conflictResolved])).toEqual([['original', false], ['theirs', true]]);
    expect(e.keepConflict('blk_nope')).toMatchObject({ ok: false });
  });

  it('accept and discard are refused while another client holds the copy or original', async () => {
    const [b0] = seed(['original']);
    const e = await openEngine(await makeEngine());
    server.apply({ opId: 'op_other1', kind: 'set_content', blockId: b0, content: 'theirs', baseVersion: 0 });
    server.others = [{ blockId: b0, clientId: 'cl_x', userId: 'usr_x', name: 'Xena', expiresInMs: 10000 }];
    await e.syncNow();
    await run();
    const copy = /** @type {any} */ (e.state.rows.find((r) => r.conflictOf === b0));
    expect(e.acceptConflict(copy.id)).toMatchObject({ ok: false, reason: 'locked' });
    expect(e.discardConflict(copy.id)).toMatchObject({ ok: false, reason: 'locked' });
    server.others = [];
    await e.syncNow();
    await run();
    expect(e.discardConflict(copy.id).ok).toBe(true);
    expect(e.state.rows.map((x) => x.content)).toEqual(['original']);
  });
});

describe('modes, visibility and leases', () => {
  it('private mode: no hold list and no wake-ups until the server says full', async () => {
    const [b0] = seed(['a']);
    server.mode = 'private';
    const { l, factory } = fakeLadder();
    const e = await openEngine(await makeEngine({ transport: factory }));
    e.focus(b0);
    await run(300);
    expect(l.started).toBe(0);
    expect(server.syncs().every((r) => r.body.leases === undefined)).toBe(true);
    // Only the 30 s sync in private mode.
    const n = server.syncs().length;
    await run(29_000);
    expect(server.syncs().length).toBe(n);
    server.mode = 'full';
    await run(1_000);
    expect(server.syncs().length).toBeGreaterThan(n);
    expect(e.state.mode).toBe('full');
    expect(l.started).toBe(1);
    await run(100);
    // The focused bullet is asked for at once after the switch.
    expect(server.syncs().at(-1)?.body.leases).toEqual({ hold: [b0] });
  });

  it('hidden: pending ops go with keepalive and hold: []; pagehide sends leave with keepalive', async () => {
    const [b0] = seed(['a']);
    const e = await openEngine(await makeEngine());
    e.focus(b0);
    await run();
    typeInto(e, b0, 'last words');
    await run(); // saved, not yet sent (300 ms)
    e.setVisible(false);
    const ka = server.syncs().at(-1);
    expect(ka?.init.keepalive).toBe(true);
    expect(ka?.body.leases).toEqual({ hold: [] });
    expect(ka?.body.ops.map((/** @type {any} */ o) => o.content)).toEqual(['last words']);
    e.pageHide();
    const leave = server.requests.at(-1);
    expect(leave?.path).toBe('leave');
    expect(leave?.init.keepalive).toBe(true);
    expect(leave?.body).toEqual({ clientId: e.clientId });
    // Visible again: sync at once, asking for the focused bullet again.
    await run();
    const before = server.syncs().length;
    e.setVisible(true);
    await run();
    expect(server.syncs().length).toBe(before + 1);
    expect(server.syncs().at(-1)?.body.leases).toEqual({ hold: [b0] });
  });

  it('focus requests at once; a left bullet goes once the server has its text (at most 20 s); the focused one after 60 s idle', async () => {
    const [b0, b1, b2] = seed(['a', 'b', 'c']);
    const { factory } = fakeLadder();
    const e = await openEngine(await makeEngine({ transport: factory }));
    await run(100);
    const holds = () => server.syncs().at(-1)?.body.leases?.hold;
    const n = server.syncs().length;
    e.focus(b0);
    await run(); // no 300 ms wait for a lease
    expect(server.syncs().length).toBe(n + 1);
    expect(holds()).toEqual([b0]);
    await run(5_000);
    // Left with nothing typed: let go with the request for the next one.
    e.focus(b1);
    await run();
    expect(holds()).toEqual([b1]);
    // Left with text on its way: held while the text waits (offline here), let go right
    // after the server acknowledged it — not 20 s later.
    typeInto(e, b1, 'b typed');
    server.down = true;
    await run(300);
    e.focus(b2);
    await run(1_000);
    expect(e.leases.list().sort()).toEqual([b1, b2].sort());
    server.down = false;
    e.setOnline(true);
    await run(300);
    expect(server.model.get(b1)?.content).toBe('b typed');
    expect(holds()).toEqual([b2]);
    // Renewal every 7 s while holding leases.
    const t = Date.now();
    await run(7_000);
    expect(server.syncs().at(-1)?.at).toBeGreaterThan(t);
    await run(60_000); // no input since the focus on b2
    expect(holds()).toEqual([]);
    // Typing brings the lease back.
    typeInto(e, b2, 'c again');
    await run(300);
    expect(holds()).toEqual([b2]);
  });

  it('new bullets are held by their creator', async () => {
    seed(['a']);
    const { factory } = fakeLadder();
    const e = await openEngine(await makeEngine({ transport: factory }));
    const from = server.syncs().length;
    e.submitOps([{ opId: 'op_n', kind: 'insert', blockId: 'blk_mine', parentId: null, orderKey: 'a5', content: '' }], { step: 'insert' });
    await run(300);
    const carrying = server.syncs().slice(from).find((s) => s.body.ops?.some((/** @type {any} */ op) => op.opId === 'op_n'));
    expect(carrying?.body.leases?.hold).toEqual(['blk_mine']);
    // Not focused, and the server has it: let go right after.
    expect(server.syncs().at(-1)?.body.leases?.hold).toEqual([]);
  });
});

describe('wake-ups', () => {
  it('entries contiguous with lastSeq are applied without a /sync; a gap pulls', async () => {
    const [b0] = seed(['a']);
    const { l, factory } = fakeLadder();
    const e = await openEngine(await makeEngine({ transport: factory }));
    await run(100);
    const n = server.syncs().length;
    server.apply({ opId: 'op_w1', kind: 'set_content', blockId: b0, content: 'woken', baseVersion: 1 });
    const entry = server.log.at(-1);
    l.opts.onWake({ headSeq: entry.seq, leaseSeq: server.leaseSeq, entries: [entry] });
    await run();
    expect(e.state.rows[0].content).toBe('woken');
    expect(e.state.lastSeq).toBe(entry.seq);
    expect(server.syncs().length).toBe(n);

    server.apply({ opId: 'op_w2', kind: 'set_content', blockId: b0, content: 'w2', baseVersion: 2 });
    server.apply({ opId: 'op_w3', kind: 'set_content', blockId: b0, content: 'w3', baseVersion: 3 });
    const last = server.log.at(-1);
    l.opts.onWake({ headSeq: last.seq, leaseSeq: server.leaseSeq, entries: [last] }); // seq-1 missing
    await run();
    expect(server.syncs().length).toBe(n + 1);
    expect(e.state.rows[0].content).toBe('w3');
  });

  it('entries are applied under a queued own op, which is re-applied on top', async () => {
    const [b0, b1] = seed(['a', 'b']);
    const { l, factory } = fakeLadder();
    const e = await openEngine(await makeEngine({ transport: factory }));
    await run(100);
    server.down = true;
    typeInto(e, b1, 'mine');
    await run(300);
    server.down = false;
    server.apply({ opId: 'op_w1', kind: 'set_content', blockId: b0, content: 'theirs', baseVersion: 1 });
    const entry = server.log.at(-1);
    l.opts.onWake({ headSeq: entry.seq, leaseSeq: server.leaseSeq, entries: [entry] });
    expect(e.state.rows.map((r) => r.content)).toEqual(['theirs', 'mine']);
  });

  it('a wake-up with only a new head or lease news pulls; an old head does not', async () => {
    seed(['a']);
    const { l, factory } = fakeLadder();
    const e = await openEngine(await makeEngine({ transport: factory }));
    await run(100);
    const n = server.syncs().length;
    l.opts.onWake({ headSeq: e.state.lastSeq, leaseSeq: server.leaseSeq });
    await run();
    expect(server.syncs().length).toBe(n);
    l.opts.onWake({ headSeq: e.state.lastSeq, leaseSeq: server.leaseSeq + 1 });
    await run();
    expect(server.syncs().length).toBe(n + 1);
  });
});

describe('wake-ups with entries (PROTOCOL §4): apply only exactly at lastSeq + 1, else pull', () => {
  /** An engine on a seeded document with a fake ladder, settled. */
  async function woken() {
    const [b0] = seed(['a']);
    const { l, factory } = fakeLadder();
    const e = await openEngine(await makeEngine({ transport: factory }));
    await run(100);
    /** @param {any[]} entries @param {number} [headSeq] */
    const wake = (entries, headSeq) =>
      l.opts.onWake({ headSeq: headSeq ?? server.model.lastSeq, leaseSeq: server.leaseSeq, entries });
    /** Someone else sets the bullet's text; returns the log entry. @param {string} text */
    const edit = (text) => {
      server.apply({ opId: `op_${text.replace(/\W/g, '')}`, kind: 'set_content', blockId: b0, content: text, baseVersion: server.model.get(b0)?.version });
      return server.log.at(-1);
    };
    return { e, b0, l, wake, edit, syncs: () => server.syncs().length };
  }

  it('exactly contiguous: applied without a pull, lastSeq advances, persisted', async () => {
    const { e, wake, edit, syncs } = await woken();
    const n = syncs();
    const e1 = edit('one');
    const e2 = edit('two');
    wake([e1, e2]);
    expect(e.state.rows[0].content).toBe('two');
    expect(e.state.lastSeq).toBe(e2.seq);
    await run();
    expect(syncs()).toBe(n);
    expect((await e.store.loadDoc(DOC))?.meta.lastSeq).toBe(e2.seq);
  });

  it('a gap (an earlier entry never came): nothing applied locally, one pull brings both', async () => {
    const { e, wake, edit, syncs } = await woken();
    const n = syncs();
    const before = e.state.lastSeq;
    edit('lost');
    const e2 = edit('after the gap');
    wake([e2]);
    expect(e.state.lastSeq).toBe(before); // not applied over the gap
    await run();
    expect(syncs()).toBe(n + 1);
    expect(e.state.lastSeq).toBe(e2.seq);
    expect(e.state.rows[0].content).toBe('after the gap');
  });

  it('reordered: entries out of order in one message, or messages out of order, pull; a late one is ignored', async () => {
    const { e, wake, edit, syncs } = await woken();
    let n = syncs();
    const e1 = edit('r1');
    const e2 = edit('r2');
    const e2b = edit('r2b');
    wake([e1, e2b, e2]); // within one message: starts right, then out of order
    wake([e2, e1]);
    expect(e.state.lastSeq).toBe(e1.seq - 1);
    await run();
    expect(syncs()).toBe(n + 1);
    expect(e.state.rows[0].content).toBe('r2b');

    n = syncs();
    const e3 = edit('r3');
    const e4 = edit('r4');
    wake([e4], e4.seq); // the later message first: a gap, pulled
    await run();
    expect(syncs()).toBe(n + 1);
    expect(e.state.lastSeq).toBe(e4.seq);
    wake([e3], e3.seq); // then the earlier one: already had, neither applied again nor pulled
    await run();
    expect(syncs()).toBe(n + 1);
    expect(e.state.rows[0].content).toBe('r4');
    expect(e.state.lastSeq).toBe(e4.seq);
  });

  it('a lost message, then the next one: pulled, and the same message twice is applied once', async () => {
    const { e, wake, edit, syncs } = await woken();
    const n = syncs();
    const e1 = edit('first');
    wake([e1]);
    wake([e1]); // delivered twice
    await run();
    expect(syncs()).toBe(n);
    expect(e.state.lastSeq).toBe(e1.seq);
    edit('second, its wake-up lost');
    const e3 = edit('third');
    wake([e3]);
    await run();
    expect(syncs()).toBe(n + 1);
    expect(e.state.rows[0].content).toBe('third');
    expect(e.state.lastSeq).toBe(e3.seq);
  });

  it('a bullet guest\'s view entry (since): applied at exactly that cursor over a seq jump, else pulled', async () => {
    const { e, b0, l, syncs } = await woken();
    const n = syncs();
    const at = e.state.lastSeq;
    const block = { ...server.model.get(b0), content: 'seen by a guest' };
    const entry = { seq: at + 5, opId: `view-${at + 5}`, kind: 'view', clientId: '', userId: '', at: 0, effects: [{ e: 'block', block }] };
    // Another cursor: not applied; its head is not ahead, so nothing to pull either.
    l.opts.onWake({ headSeq: at, leaseSeq: server.leaseSeq, entries: [entry], since: at - 1 });
    await run();
    expect(e.state.lastSeq).toBe(at);
    expect(e.state.rows[0].content).toBe('a');
    expect(syncs()).toBe(n);
    // Exactly at its cursor: applied without a pull, over the jump.
    l.opts.onWake({ headSeq: at + 5, leaseSeq: server.leaseSeq, entries: [entry], since: at });
    expect(e.state.lastSeq).toBe(at + 5);
    expect(e.state.rows[0].content).toBe('seen by a guest');
    await run();
    expect(syncs()).toBe(n);
    // The same again (now behind): ignored.
    l.opts.onWake({ headSeq: at + 5, leaseSeq: server.leaseSeq, entries: [entry], since: at });
    await run();
    expect(syncs()).toBe(n);
    expect(e.state.lastSeq).toBe(at + 5);
  });

  it('a reader behind (offline meanwhile, or a pull in flight) does not apply, and pulls', async () => {
    const { e, wake, edit, syncs } = await woken();
    // Behind: three changes happened while no wake-up reached it.
    edit('b1');
    edit('b2');
    edit('b3');
    let n = syncs();
    const e4 = edit('b4');
    wake([e4]);
    expect(e.state.rows[0].content).toBe('a');
    await run();
    expect(syncs()).toBe(n + 1);
    expect(e.state.rows[0].content).toBe('b4');

    // A pull in flight: its reply is applied against lastSeq, so contiguous entries wait for it.
    /** @type {() => void} */
    let open = () => {};
    server.gate = new Promise((r) => { open = () => r(undefined); });
    n = syncs();
    e.syncNow();
    await run();
    expect(e.inFlight).toBe(true);
    const e5 = edit('b5');
    wake([e5]);
    expect(e.state.rows[0].content).toBe('b4'); // not applied under the pull
    server.gate = null;
    open();
    await run();
    expect(e.state.rows[0].content).toBe('b5');
    expect(e.state.lastSeq).toBe(e5.seq);
    expect(syncs() - n).toBeLessThanOrEqual(2);
  });

  it('partial: entries that end before headSeq are applied and the rest pulled', async () => {
    const { e, wake, edit, syncs } = await woken();
    const n = syncs();
    const e1 = edit('p1');
    const e2 = edit('p2');
    wake([e1], e2.seq);
    expect(e.state.rows[0].content).toBe('p1');
    await run();
    expect(syncs()).toBe(n + 1);
    expect(e.state.rows[0].content).toBe('p2');
    expect(e.state.lastSeq).toBe(e2.seq);
  });

  /**
   * An engine whose /sync replies are held until `onReply` ran: what the real server does
   * when it commits, announces the wake-up, and only then answers.
   * @param {(l: any) => void} onReply
   */
  async function writerWithWakeBeforeReply(onReply) {
    const [b0] = seed(['a']);
    const { l, factory } = fakeLadder();
    let armed = false;
    const fetch = async (/** @type {string} */ url, /** @type {any} */ init) => {
      const res = await server.fetch(url, init);
      if (armed && url.endsWith('/sync')) {
        armed = false;
        onReply(l);
      }
      return res;
    };
    const e = await openEngine(await makeEngine({ transport: factory, fetch }));
    await run(100);
    return { e, b0, arm: () => { armed = true; } };
  }

  it("a writer's own wake-up during its /sync costs no second /sync", async () => {
    const { e, b0, arm } = await writerWithWakeBeforeReply((l) => {
      const own = server.log.at(-1);
      l.opts.onWake({ headSeq: own.seq, leaseSeq: server.leaseSeq, entries: [own] });
    });
    // Typed in the focused bullet, as in the editor (a bullet typed in without the focus is
    // let go of with one more /sync once the server has its text).
    e.focus(b0);
    await run();
    const n = server.syncs().length;
    arm();
    typeInto(e, b0, 'mine');
    await run(1_000);
    expect(server.syncs().length).toBe(n + 1);
    expect(e.state.pending).toBe(0);
    expect(e.state.lastSeq).toBe(server.model.lastSeq);
  });

  it('a wake-up during a /sync that announced more than the reply brought pulls again', async () => {
    const { e, b0, arm } = await writerWithWakeBeforeReply((l) => {
      // Someone else's change lands after our reply was made.
      server.apply({ opId: 'op_late', kind: 'insert', blockId: 'blk_late', parentId: null, orderKey: 'a5', content: 'late' });
      const late = server.log.at(-1);
      l.opts.onWake({ headSeq: late.seq, leaseSeq: server.leaseSeq, entries: [late] });
    });
    // Typed in the focused bullet, as in the editor (a bullet typed in without the focus is
    // let go of with one more /sync once the server has its text).
    e.focus(b0);
    await run();
    const n = server.syncs().length;
    arm();
    typeInto(e, b0, 'mine');
    await run(1_000);
    expect(server.syncs().length).toBe(n + 2);
    expect(e.state.rows.map((r) => r.content)).toEqual(['mine', 'late']);
    expect(e.state.lastSeq).toBe(server.model.lastSeq);
  });

  it('lease news or "anything may have happened" during a /sync pulls again', async () => {
    for (const wake of [(/** @type {number} */ head) => ({ headSeq: head, leaseSeq: server.leaseSeq + 1 }), () => ({})]) {
      const { e, b0, arm } = await writerWithWakeBeforeReply((l) => l.opts.onWake(wake(server.model.lastSeq)));
      const n = server.syncs().length;
      arm();
      typeInto(e, b0, 'mine');
      await run(1_000);
      expect(server.syncs().length).toBe(n + 2);
      await e.close();
      server = new FakeServer();
      idb = new IDBFactory();
    }
  });

  it('malformed entries are pulled instead, without an exception', async () => {
    const { e, wake, edit, syncs } = await woken();
    const n = syncs();
    const e1 = edit('m1');
    const { effects: _effects, ...noEffects } = e1;
    expect(() => wake([noEffects])).not.toThrow();
    expect(() => wake([{ ...e1, seq: String(e1.seq) }])).not.toThrow();
    expect(() => wake([null])).not.toThrow();
    expect(e.state.lastSeq).toBe(e1.seq - 1);
    await run();
    expect(syncs()).toBe(n + 1);
    expect(e.state.rows[0].content).toBe('m1');
  });

  it('no read access any more (403): wake-ups with entries are neither applied nor pulled', async () => {
    const { e, wake, edit, syncs } = await woken();
    server.status = 403;
    e.syncNow();
    await run();
    expect(e.state.error).not.toBeNull();
    const n = syncs();
    const shown = e.state.rows[0].content;
    server.status = null;
    const e1 = edit('secret');
    wake([e1]);
    await run(5_000);
    expect(e.state.rows[0].content).toBe(shown);
    expect(e.state.lastSeq).toBe(e1.seq - 1);
    expect(syncs()).toBe(n);
  });

  it('a document it no longer reads (closed engine): wake-ups with entries are ignored', async () => {
    const { e, wake, edit, syncs } = await woken();
    await e.close();
    const n = syncs();
    const e1 = edit('after close');
    wake([e1]);
    await run(1_000);
    expect(e.state.rows[0].content).toBe('a');
    expect(syncs()).toBe(n);
  });

  it('an own op seen in the entries before its /sync reply: acknowledged and dropped from the queue', async () => {
    const { e, b0, wake, syncs } = await woken();
    server.dropReply = true; // the server applies it, the reply is lost
    typeInto(e, b0, 'mine');
    await run(300);
    server.dropReply = false;
    const own = server.log.at(-1);
    expect(own.clientId).toBe(e.clientId);
    const n = syncs();
    wake([own]);
    await run();
    expect(e.queue).toHaveLength(0);
    expect(e.state.pending).toBe(0);
    expect(e.state.rows[0].content).toBe('mine');
    expect(e.state.lastSeq).toBe(own.seq);
    expect(await e.store.loadQueue(DOC, e.clientId)).toEqual([]);
    expect(syncs() - n).toBeLessThanOrEqual(1); // the retry of the lost reply may still go
  });
});

describe('with the real wake-up ladder', () => {
  /** A WebSocket the server side of which is this test. */
  class TestSocket {
    /** @type {TestSocket[]} */
    static all = [];
    constructor() {
      /** @type {any[]} */ this.sent = [];
      this.readyState = 0;
      /** @type {any} */ this.onopen = null;
      /** @type {any} */ this.onmessage = null;
      /** @type {any} */ this.onerror = null;
      /** @type {any} */ this.onclose = null;
      TestSocket.all.push(this);
    }
    /** @param {string} m */
    send(m) {
      this.sent.push(JSON.parse(m));
    }
    close() {
      this.readyState = 3;
    }
    /** @param {any} m */
    push(m) {
      this.onmessage?.({ data: JSON.stringify(m) });
    }
  }

  it('WebSocket live: label "Live"; DOC_SEQ with entries applies them without a /sync', async () => {
    TestSocket.all = [];
    const [b0] = seed(['a']);
    const e = await openEngine(await makeEngine({ transport: 'ladder', WebSocket: TestSocket }));
    const ws = TestSocket.all[0];
    ws.readyState = 1;
    ws.onopen();
    expect(ws.sent[0]).toEqual({ type: 'JOIN', room: `doc:${DOC}`, clientId: e.clientId });
    ws.push({ type: 'JOINED', room: `doc:${DOC}` });
    await run();
    expect(e.state.stageLabel).toBe('Live');
    const n = server.syncs().length;
    server.apply({ opId: 'op_ws', kind: 'set_content', blockId: b0, content: 'via ws', baseVersion: 1 });
    ws.push({ type: 'DOC_SEQ', docId: DOC, headSeq: server.model.lastSeq, leaseSeq: server.leaseSeq, entries: [server.log.at(-1)] });
    await run();
    expect(e.state.rows[0].content).toBe('via ws');
    expect(server.syncs().length).toBe(n);
  });

  it('nothing works but /sync: down the ladder to "Syncing every 3 s", and a sync every 3 s', async () => {
    TestSocket.all = [];
    seed(['a']);
    const e = await openEngine(await makeEngine({ transport: 'ladder', WebSocket: TestSocket }));
    TestSocket.all[0].onerror(); // blocked WebSocket; no EventSource; /changes answers 404
    await run(5_000);
    expect(server.requests.filter((r) => r.path.startsWith('changes'))).toHaveLength(3);
    expect(e.state.stage).toBe('interval');
    expect(e.state.stageLabel).toBe('Syncing every 3 s');
    const n = server.syncs().length;
    await run(9_000);
    expect(server.syncs().length - n).toBe(3);
  });
});

describe('undo', () => {
  it('undoes and redoes an own text change through normal ops', async () => {
    const [b0] = seed(['before']);
    const e = await openEngine(await makeEngine());
    typeInto(e, b0, 'after');
    await run(300);
    const u = e.undo();
    expect(u.done).toBe(true);
    expect(e.state.rows[0].content).toBe('before');
    await run(1300);
    expect(server.model.get(b0)?.content).toBe('before');
    expect(e.redo().done).toBe(true);
    await run(300);
    expect(server.model.get(b0)?.content).toBe('after');
  });
});

describe('rows: identity and the O(changed) typing path', () => {
  /** The editor's way: the engine's Row objects for unchanged rows, a copy for the changed one. @param {any[]} rows @param {number} i @param {any} patch */
  const edited = (rows, i, patch) => {
    const next = rows.slice();
    next[i] = { ...rows[i], ...patch };
    return next;
  };
  /** @param {any[]} ops */
  const shape = (ops) => ops.map(({ opId, ...rest }) => rest);

  it('typing and props edits replace only the changed Row object; the rest stay the same objects', async () => {
    seed(['a', 'b', 'c', 'd']);
    const e = await openEngine(await makeEngine());
    const before = e.state.rows;
    expect(e.commitRows(edited(before, 1, { content: 'bx' }), { step: 'typing' }).ok).toBe(true);
    const after = e.state.rows;
    expect(after).not.toBe(before);
    expect(after[1]).not.toBe(before[1]);
    expect(after[1]).toMatchObject({ content: 'bx', version: 2 });
    for (const i of [0, 2, 3]) expect(after[i]).toBe(before[i]);
    expect(after).toEqual(e.view.rows());

    expect(e.commitRows(edited(after, 2, { type: 'todo', checked: true }), { step: 'props' }).ok).toBe(true);
    const props = e.state.rows;
    expect(props[2]).toMatchObject({ type: 'todo', checked: true });
    for (const i of [0, 1, 3]) expect(props[i]).toBe(after[i]);
    expect(props).toEqual(e.view.rows());

    // The reply confirming both changes nothing visible: the very same array.
    await run(300);
    expect(e.state.pending).toBe(0);
    expect(e.state.rows).toBe(props);
    // Nothing changed at all: no op, same rows.
    expect(e.commitRows(props, { step: 'typing' })).toEqual({ ok: true, ops: [] });
    expect(e.state.rows).toBe(props);
  });

  it('a structural change recomputes the rows but keeps the objects of unchanged rows', async () => {
    seed(['a', 'b', 'c']);
    const e = await openEngine(await makeEngine());
    const before = e.state.rows;
    const next = [before[0], { id: e.newBlockId(), depth: 0, content: 'new' }, before[1], before[2]];
    expect(e.commitRows(next, { step: 'insert' }).ok).toBe(true);
    const after = e.state.rows;
    expect(after.map((r) => r.content)).toEqual(['a', 'new', 'b', 'c']);
    expect(after[0]).toBe(before[0]);
    expect(after[2]).toBe(before[1]);
    expect(after[3]).toBe(before[2]);
    // Indenting c under b changes c's depth and b's hasChildren: both new objects.
    const indented = edited(after, 3, { depth: 1 });
    expect(e.commitRows(indented, { step: 'indent' }).ok).toBe(true);
    const ind = e.state.rows;
    expect(ind[2]).not.toBe(after[2]);
    expect(ind[2].hasChildren).toBe(true);
    expect(ind[3]).toMatchObject({ depth: 1, content: 'c' });
    expect(ind[0]).toBe(after[0]);
    expect(ind[1]).toBe(after[1]);
    expect(ind).toEqual(e.view.rows());
  });

  it('a change by someone else replaces only the rows it touched', async () => {
    const [b0, b1] = seed(['a', 'b', 'c']);
    const e = await openEngine(await makeEngine());
    const before = e.state.rows;
    server.apply({ opId: 'op_o1', kind: 'set_content', blockId: b1, content: 'theirs', baseVersion: 1 });
    await e.syncNow();
    await run();
    const after = e.state.rows;
    expect(after[1]).toMatchObject({ id: b1, content: 'theirs' });
    expect(after[0]).toBe(before[0]);
    expect(after[2]).toBe(before[2]);
    expect(after[0].id).toBe(b0);
  });

  it('random edits (editor style, with syncs and undo): rows equal the view, same object = same values, ops as diffRows', async () => {
    for (let seedNo = 1; seedNo <= 6; seedNo++) {
      const rng = mulberry32(seedNo * 7919);
      const { int, chance } = helpers(rng);
      let n = 0;
      server = new FakeServer();
      server.model = randomModel(rng, 30, () => `op_seed_${seedNo}_${n++}`);
      server.model.title = 'Doc';
      idb = new IDBFactory();
      const e = await openEngine(await makeEngine({ clientId: `cl_r${seedNo}` }));
      const st = { n: 0, graveyard: /** @type {any[]} */ ([]) };
      let oid = 0;
      for (let step = 0; step < 40; step++) {
        const prev = e.state.rows;
        if (chance(0.1)) {
          e.undo();
        } else {
          /** @type {any[]} */
          let next;
          if (prev.length > 0 && chance(0.5)) {
            const i = int(prev.length);
            next = chance(0.7)
              ? edited(prev, i, { content: `${prev[i].content}${step}` })
              : edited(prev, i, { type: chance(0.5) ? 'todo' : 'bullet', checked: chance(0.5) });
            if (chance(0.3) && prev.length > 1) {
              const j = int(prev.length);
              next[j] = { ...next[j], content: `${next[j].content}+` };
            }
          } else {
            // A structural edit; rows the edit left alone go back as the engine's objects.
            const byId = new Map(prev.map((r) => [r.id, r]));
            next = randomEdit(rng, prev, st)[1].map((r, i) => {
              const o = byId.get(r.id);
              const same = o && prev[i] === o && r.depth === o.depth && r.content === o.content && r.type === o.type &&
                r.checked === o.checked && r.collapsed === o.collapsed && r.language === o.language && r.conflictResolved === o.conflictResolved;
              return same ? o : r;
            });
          }
          const want = diffRows(e.view.clone(), next, () => `op_want_${oid++}`);
          const res = e.commitRows(next, { step: 'typing' });
          expect(res.ok, `seed ${seedNo} step ${step}`).toBe(true);
          if (res.ok) expect(shape(res.ops), `seed ${seedNo} step ${step}`).toEqual(shape(want));
        }
        if (chance(0.2)) await run(300);
        const rows = e.state.rows;
        expect(rows, `seed ${seedNo} step ${step}`).toEqual(e.view.rows());
        const old = new Map(prev.map((r) => [r.id, r]));
        for (const r of rows) {
          const o = old.get(r.id);
          if (!o) continue;
          const sameValues = JSON.stringify(o) === JSON.stringify(r);
          expect(o === r, `seed ${seedNo} step ${step} ${r.id}: same object exactly when unchanged`).toBe(sameValues);
        }
      }
      await run(300);
      expect(e.state.pending).toBe(0);
      expect(e.state.rows).toEqual(server.model.rows());
    }
  });
});

describe('notices', () => {
  it('noticeSeq counts every notice, also the same refusal twice in a row', async () => {
    const [b0] = seed(['a']);
    server.others = [{ blockId: b0, clientId: 'cl_x', userId: 'usr_x', name: 'Xena', expiresInMs: 10000 }];
    const e = await openEngine(await makeEngine());
    expect(e.state.noticeSeq).toBe(0);
    expect(typeInto(e, b0, 'nope').ok).toBe(false);
    const first = e.state;
    expect(first.noticeSeq).toBe(1);
    expect(typeInto(e, b0, 'nope').ok).toBe(false);
    expect(e.state.notice).toBe(first.notice);
    expect(e.state.noticeSeq).toBe(2);
    // A skipped undo step and a server rejection count too.
    server.others = [];
    await e.syncNow();
    await run();
    e.submitOps([{ opId: 'op_mv', kind: 'move', blockId: b0, parentId: 'blk_nowhere', orderKey: 'a0' }], { step: 'move' });
    await run(300);
    expect(e.state.notice).toContain('not applied');
    expect(e.state.noticeSeq).toBe(3);
  });
});
