// @ts-check
// The IndexedDB device copy: confirmed state in buckets, per-(doc, client) queues, adoption
// of orphaned queues, errors surfaced, and the in-memory Web Locks stand-in.
import { describe, it, expect, beforeEach } from 'vitest';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { openStore, bucketOf, bucketCountFor, createMemoryLocks } from '../../static/engine/store.js';

/** @param {string} id @param {Partial<import('../../static/engine/types.js').Block>} [over] */
function block(id, over = {}) {
  return {
    id, parentId: null, orderKey: 'a0', content: `text of ${id}`, type: /** @type {const} */ ('bullet'),
    checked: false, collapsed: false, language: null, conflictOf: null, conflictAuthor: null,
    conflictResolved: false, version: 1, deleted: false, deletedAt: null, updatedAt: 1, updatedBy: 'usr_1',
    ...over,
  };
}

/** @param {string} docId @param {number} lastSeq */
function meta(docId, lastSeq) {
  return {
    docId, title: 'T', titleVersion: 1, icon: null, lastSeq, role: /** @type {const} */ ('editor'),
    mode: /** @type {const} */ ('full'), shared: true, sessions: 1, savedAt: 0,
  };
}

/** @type {IDBFactory} */
let idb;
beforeEach(() => {
  idb = new IDBFactory();
});
const open = () => openStore({ indexedDB: idb, IDBKeyRange });

describe('confirmed state', () => {
  it('returns null for a document never stored', async () => {
    const s = await open();
    expect(await s.loadDoc('doc_x')).toBeNull();
  });

  it('reads buckets stored as arrays of blocks (before they were JSON text) and updates them', async () => {
    const s = await open();
    await s.saveSnapshot(meta('doc_o', 1), [block('blk_a'), block('blk_b')]);
    // Put the buckets back the way an older version of the app stored them.
    const raw = /** @type {IDBDatabase} */ (/** @type {any} */ (s).db);
    const tx = raw.transaction(['blocks'], 'readwrite');
    tx.objectStore('blocks').put([block('blk_a'), block('blk_b', { content: 'old form' })], ['doc_o', 0]);
    await new Promise((ok) => (tx.oncomplete = ok));
    expect((await s.loadDoc('doc_o'))?.blocks.map((b) => b.content).sort()).toEqual(['old form', 'text of blk_a']);
    await s.saveConfirmed(meta('doc_o', 2), [block('blk_c')], []);
    expect((await s.loadDoc('doc_o'))?.blocks.map((b) => b.id).sort()).toEqual(['blk_a', 'blk_b', 'blk_c']);
  });

  it('round-trips a snapshot, strips depth, and survives reopening the database', async () => {
    const s = await open();
    await s.saveSnapshot(meta('doc_a', 7), [{ ...block('blk_1'), depth: 0 }, block('blk_2')]);
    s.close();
    const again = await open();
    const got = await again.loadDoc('doc_a');
    expect(got?.meta.lastSeq).toBe(7);
    expect(got?.meta.buckets).toBe(1);
    expect(got?.blocks.map((b) => b.id).sort()).toEqual(['blk_1', 'blk_2']);
    expect(got?.blocks.every((b) => b.depth === undefined)).toBe(true);
  });

  it('keeps documents apart and replaces the old blocks on a new snapshot', async () => {
    const s = await open();
    await s.saveSnapshot(meta('doc_a', 1), [block('blk_1'), block('blk_2')]);
    await s.saveSnapshot(meta('doc_b', 1), [block('blk_9')]);
    await s.saveSnapshot(meta('doc_a', 5), [block('blk_3')]);
    expect((await s.loadDoc('doc_a'))?.blocks.map((b) => b.id)).toEqual(['blk_3']);
    expect((await s.loadDoc('doc_b'))?.blocks.map((b) => b.id)).toEqual(['blk_9']);
  });

  it('a snapshot older than the stored state does not replace it, unless the server went back', async () => {
    const s = await open();
    await s.saveSnapshot(meta('doc_a', 5), [block('blk_new')]);
    // A deferred write of an older snapshot, or another tab behind: only moves forward.
    await s.saveSnapshot(meta('doc_a', 3), [block('blk_old')]);
    expect((await s.loadDoc('doc_a'))?.blocks.map((b) => b.id)).toEqual(['blk_new']);
    // The server was restored from a backup: its older state is the truth.
    await s.saveSnapshot(meta('doc_a', 3), [block('blk_old')], {}, { back: true });
    expect((await s.loadDoc('doc_a'))?.meta.lastSeq).toBe(3);
    expect((await s.loadDoc('doc_a'))?.blocks.map((b) => b.id)).toEqual(['blk_old']);
  });

  it('applies upserts and purges to only the touched buckets', async () => {
    const s = await open();
    const blocks = Array.from({ length: 1000 }, (_, i) => block(`blk_${i}`));
    await s.saveSnapshot(meta('doc_a', 1), blocks);
    await s.saveConfirmed(meta('doc_a', 2), [block('blk_5', { content: 'changed' }), block('blk_new')], ['blk_7']);
    const got = await s.loadDoc('doc_a');
    expect(got?.meta.lastSeq).toBe(2);
    expect(got?.meta.buckets).toBe(bucketCountFor(1000));
    const byId = new Map(got?.blocks.map((b) => [b.id, b]));
    expect(byId.size).toBe(1000);
    expect(byId.get('blk_5')?.content).toBe('changed');
    expect(byId.has('blk_new')).toBe(true);
    expect(byId.has('blk_7')).toBe(false);
  });

  /** The raw keys of a document's records in the blocks store. @param {any} s @param {string} docId */
  const rawKeys = async (s, docId) => {
    const tx = /** @type {IDBDatabase} */ (s.db).transaction(['blocks'], 'readonly');
    const req = tx.objectStore('blocks').getAllKeys(IDBKeyRange.bound([docId], [docId, []]));
    await new Promise((ok) => (req.onsuccess = ok));
    return /** @type {any[][]} */ (req.result);
  };

  it('a save touching many buckets writes one change record and folds a few buckets, later saves fold the rest', async () => {
    const s = await open();
    await s.saveSnapshot(meta('doc_a', 1), Array.from({ length: 4000 }, (_, i) => block(`blk_${i}`)));
    const buckets = bucketCountFor(4000);
    const pasted = Array.from({ length: 100 }, (_, i) => block(`blk_new_${i}`));
    expect(new Set(pasted.map((b) => bucketOf(b.id, buckets))).size).toBeGreaterThan(8);
    await s.saveConfirmed(meta('doc_a', 2), pasted, []);
    let changes = (await rawKeys(s, 'doc_a')).filter((k) => k[1] === 'c');
    expect(changes.length).toBe(1);
    const got = await s.loadDoc('doc_a');
    expect(got?.blocks.length).toBe(4100);
    expect(got?.blocks.filter((b) => b.id.startsWith('blk_new_')).length).toBe(100);
    // quiet saves (a keystroke each) fold the record away, a few buckets at a time
    for (let n = 3; n < 3 + buckets; n++) await s.saveConfirmed(meta('doc_a', n), [block('blk_1', { content: `v${n}` })], []);
    changes = (await rawKeys(s, 'doc_a')).filter((k) => k[1] === 'c');
    expect(changes.length).toBe(0);
    const after = await s.loadDoc('doc_a');
    expect(after?.blocks.length).toBe(4100);
    expect(after?.blocks.find((b) => b.id === 'blk_1')?.content).toBe(`v${2 + buckets}`);
    // past 2,000 entries in records a save folds them all
    await s.saveConfirmed(meta('doc_a', 100), Array.from({ length: 2100 }, (_, i) => block(`blk_big_${i}`)), []);
    expect((await rawKeys(s, 'doc_a')).filter((k) => k[1] === 'c')).toEqual([]);
    expect((await s.loadDoc('doc_a'))?.blocks.length).toBe(6200);
  });

  it('change records and buckets together always give every save applied in order (randomized)', async () => {
    let seed = 7;
    const rand = (/** @type {number} */ n) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const s = await open();
    /** @type {Map<string, string>} what the document must hold: id → content */
    const want = new Map(Array.from({ length: 6000 }, (_, i) => [`blk_${i}`, 'first']));
    await s.saveSnapshot(meta('doc_r', 1), [...want].map(([id, content]) => block(id, { content })));
    for (let seq = 2; seq < 80; seq++) {
      const up = [];
      const rm = [];
      const n = rand(4) === 0 ? 150 + rand(900) : 1 + rand(5);
      for (let k = 0; k < n; k++) {
        const id = `blk_${rand(9000)}`;
        if (rand(5) === 0) {
          rm.push(id);
          want.delete(id);
        } else up.push(id);
      }
      // one save removes, then upserts (an ID in both ends up present)
      for (const id of up) want.set(id, `v${seq}`);
      await s.saveConfirmed(meta('doc_r', seq), up.map((id) => block(id, { content: `v${seq}` })), rm);
      if (seq % 10 === 0 || seq === 79) {
        const got = await s.loadDoc('doc_r');
        expect(new Map(got?.blocks.map((b) => [b.id, b.content]))).toEqual(want);
        expect(got?.blocks.length).toBe(want.size);
      }
    }
  });

  it('a new snapshot and forgetting the document remove its change records', async () => {
    const s = await open();
    await s.saveSnapshot(meta('doc_a', 1), Array.from({ length: 2000 }, (_, i) => block(`blk_${i}`)));
    await s.saveConfirmed(meta('doc_a', 2), Array.from({ length: 300 }, (_, i) => block(`blk_n${i}`)), ['blk_3']);
    expect((await rawKeys(s, 'doc_a')).some((k) => k[1] === 'c')).toBe(true);
    await s.saveSnapshot(meta('doc_a', 3), [block('blk_only')]);
    expect((await s.loadDoc('doc_a'))?.blocks.map((b) => b.id)).toEqual(['blk_only']);
    expect((await rawKeys(s, 'doc_a')).some((k) => k[1] === 'c')).toBe(false);
    await s.saveConfirmed(meta('doc_a', 4), Array.from({ length: 50 }, (_, i) => block(`blk_m${i}`)), []);
    await s.forgetDoc('doc_a');
    expect(await rawKeys(s, 'doc_a')).toEqual([]);
    expect(await s.loadDoc('doc_a')).toBeNull();
  });

  it('bucketOf is stable and spreads ids', () => {
    expect(bucketOf('blk_abc', 8)).toBe(bucketOf('blk_abc', 8));
    const used = new Set(Array.from({ length: 200 }, (_, i) => bucketOf(`blk_${i}`, 8)));
    expect(used.size).toBe(8);
  });

  it('loads a 10,000-block document quickly', async () => {
    const s = await open();
    const blocks = Array.from({ length: 10000 }, (_, i) =>
      block(`blk_${String(i).padStart(6, '0')}_${'x'.repeat(20)}`, { content: 'some words '.repeat(6) }),
    );
    await s.saveSnapshot(meta('doc_big', 1), blocks);
    const t0 = performance.now();
    const got = await s.loadDoc('doc_big');
    const ms = performance.now() - t0;
    expect(got?.blocks.length).toBe(10000);
    // fake-indexeddb structured-clones in JS; a browser is faster. Generous bound for CI.
    expect(ms).toBeLessThan(2000);
    console.log(`store: loaded 10,000 blocks in ${ms.toFixed(0)} ms (${got?.meta.buckets} buckets, fake-indexeddb)`);
  });
});

describe('queue', () => {
  /** @param {string} clientId @param {number} n */
  const rec = (clientId, n, docId = 'doc_a') => ({
    docId, clientId, n, ackedSeq: null,
    op: { opId: `op_${clientId}_${n}`, kind: /** @type {const} */ ('set_content'), blockId: 'blk_1', content: `v${n}`, baseVersion: 1 },
  });

  it('keeps queues per (doc, client), in order, replaceable and deletable', async () => {
    const s = await open();
    await s.putQueued([rec('cl_a', 2), rec('cl_a', 1), rec('cl_b', 1), rec('cl_a', 1, 'doc_b')]);
    expect((await s.loadQueue('doc_a', 'cl_a')).map((r) => r.n)).toEqual([1, 2]);
    await s.putQueued([{ ...rec('cl_a', 1), op: { ...rec('cl_a', 1).op, content: 'merged' } }]);
    expect(/** @type {any} */ ((await s.loadQueue('doc_a', 'cl_a'))[0].op).content).toBe('merged');
    await s.deleteQueued('doc_a', [{ clientId: 'cl_a', n: 1 }]);
    expect((await s.loadQueue('doc_a', 'cl_a')).map((r) => r.n)).toEqual([2]);
    expect((await s.queueOwners('doc_a')).sort()).toEqual(['cl_a', 'cl_b']);
  });

  it('commits confirmed state and queue changes in one transaction', async () => {
    const s = await open();
    await s.saveSnapshot(meta('doc_a', 1), [block('blk_1')]);
    await s.putQueued([rec('cl_a', 1), rec('cl_a', 2)]);
    await s.saveConfirmed(meta('doc_a', 3), [block('blk_1', { content: 'v1' })], [], {
      del: [{ clientId: 'cl_a', n: 1 }],
      put: [{ ...rec('cl_a', 2), ackedSeq: 4 }],
    });
    const q = await s.loadQueue('doc_a', 'cl_a');
    expect(q.map((r) => [r.n, r.ackedSeq])).toEqual([[2, 4]]);
  });

  it('adopts an orphaned queue to the end of its own, keeping opIds', async () => {
    const s = await open();
    await s.putQueued([rec('cl_mine', 1), rec('cl_old', 1), rec('cl_old', 2)]);
    const moved = await s.takeQueue('doc_a', 'cl_old', 'cl_mine');
    expect(moved.map((r) => r.op.opId)).toEqual(['op_cl_old_1', 'op_cl_old_2']);
    const q = await s.loadQueue('doc_a', 'cl_mine');
    expect(q.map((r) => [r.n, r.op.opId])).toEqual([[1, 'op_cl_mine_1'], [2, 'op_cl_old_1'], [3, 'op_cl_old_2']]);
    expect(await s.loadQueue('doc_a', 'cl_old')).toEqual([]);
    expect(await s.takeQueue('doc_a', 'cl_old', 'cl_mine')).toEqual([]);
  });

  it('every write asks for its commit itself; the plain ones in the very call that issued them', async () => {
    const s = await open();
    /** @type {{stores: string[], commitAsked: boolean}[]} */
    const txs = [];
    const db = /** @type {any} */ (s.db);
    const orig = db.transaction.bind(db);
    db.transaction = (/** @type {any} */ stores, /** @type {any} */ mode) => {
      const tx = orig(stores, mode);
      if (mode === 'readwrite') {
        const rec = { stores: [stores].flat(), commitAsked: false };
        txs.push(rec);
        const commit = tx.commit.bind(tx);
        tx.commit = () => {
          rec.commitAsked = true;
          commit();
        };
      }
      return tx;
    };
    // Synchronously, before the returned promise is awaited (as in a pagehide handler):
    const plain = [
      s.putQueued([rec('cl_a', 1), rec('cl_old', 1)]),
      s.deleteQueued('doc_a', [{ clientId: 'cl_a', n: 9 }]),
    ];
    expect(txs.map((t) => t.commitAsked)).toEqual([true, true]);
    await Promise.all(plain);
    // Those that read first ask once their writes are issued, before completing.
    await s.saveSnapshot(meta('doc_a', 1), [block('blk_1')]);
    await s.saveConfirmed(meta('doc_a', 2), [block('blk_1', { content: 'v2' })], [], { put: [rec('cl_a', 2)] });
    await s.takeQueue('doc_a', 'cl_old', 'cl_a');
    const forget = s.forgetDoc('doc_b');
    expect(txs.at(-1)?.commitAsked).toBe(true);
    await forget;
    expect(txs).toHaveLength(6);
    expect(txs.every((t) => t.commitAsked)).toBe(true);
  });

  it('surfaces a failed write as a rejected promise', async () => {
    const s = await open();
    // A record without its key path fields cannot be stored: the transaction fails.
    const bad = /** @type {any} */ ({ op: {} });
    await expect(s.putQueued([bad])).rejects.toBeTruthy();
  });

  it('forgets a document entirely', async () => {
    const s = await open();
    await s.saveSnapshot(meta('doc_a', 1), [block('blk_1')]);
    await s.putQueued([rec('cl_a', 1)]);
    await s.forgetDoc('doc_a');
    expect(await s.loadDoc('doc_a')).toBeNull();
    expect(await s.queueOwners('doc_a')).toEqual([]);
  });
});

describe('memory locks', () => {
  it('gives a held lock to nobody with ifAvailable and queues a plain request', async () => {
    const locks = createMemoryLocks();
    /** @type {() => void} */
    let release = () => {};
    const holding = locks.request('L', () => new Promise((r) => (release = () => r(undefined))));
    await Promise.resolve();
    expect(await locks.request('L', { ifAvailable: true }, (l) => l)).toBeNull();
    const order = [];
    const waiter = locks.request('L', async (l) => order.push(l?.name));
    await Promise.resolve();
    expect(order).toEqual([]);
    release();
    await holding;
    await waiter;
    expect(order).toEqual(['L']);
    expect(await locks.request('L', { ifAvailable: true }, (l) => l?.name)).toBe('L');
  });
});

describe('what the device holds (logout)', () => {
  it('counts documents and unconfirmed ops; acknowledged ones are not pending; deleting empties it', async () => {
    const { deleteStore } = await import('../../static/engine/store.js');
    const s = await open();
    expect(await s.counts()).toEqual({ docs: 0, pending: 0 });
    await s.saveSnapshot(meta('doc_a', 1), [block('blk_1')]);
    await s.saveSnapshot(meta('doc_b', 1), [block('blk_2')]);
    const op = { opId: 'op_1', kind: 'set_content', blockId: 'blk_1', content: 'x', baseVersion: 1 };
    await s.putQueued([
      { docId: 'doc_a', clientId: 'cl_1', n: 1, op: /** @type {any} */ (op), ackedSeq: null },
      { docId: 'doc_a', clientId: 'cl_1', n: 2, op: /** @type {any} */ ({ ...op, opId: 'op_2' }), ackedSeq: 5 },
    ]);
    expect(await s.counts()).toEqual({ docs: 2, pending: 1 });
    s.close();
    await deleteStore({ indexedDB: idb });
    const again = await open();
    expect(await again.counts()).toEqual({ docs: 0, pending: 0 });
  });
});

describe('two tabs of one document', () => {
  it('a tab that is behind never writes older blocks over newer ones; its queue changes still land', async () => {
    const a = await open();
    const b = await open();
    await a.saveSnapshot(meta('doc_t', 8), [block('blk_1', { content: 'a', version: 1 })]);
    // Tab A is ahead: it saved seq 10 with the bullet at version 2.
    await a.saveConfirmed(meta('doc_t', 10), [block('blk_1', { content: 'ab', version: 2 })], []);
    // Tab B applies seq 9 (an older change of the same bullet) afterwards.
    const op = { opId: 'op_b', kind: 'set_content', blockId: 'blk_1', content: 'x', baseVersion: 1 };
    await b.saveConfirmed(meta('doc_t', 9), [block('blk_1', { content: 'a', version: 1 })], [], {
      put: [{ docId: 'doc_t', clientId: 'cl_b', n: 1, op: /** @type {any} */ (op), ackedSeq: null }],
    });
    const got = await a.loadDoc('doc_t');
    expect(got?.meta.lastSeq).toBe(10);
    expect(got?.blocks.find((x) => x.id === 'blk_1')).toMatchObject({ content: 'ab', version: 2 });
    expect(await a.loadQueue('doc_t', 'cl_b')).toHaveLength(1);
    // Catching up moves it on as usual.
    await b.saveConfirmed(meta('doc_t', 11), [block('blk_1', { content: 'abc', version: 3 })], []);
    expect((await a.loadDoc('doc_t'))?.blocks[0]).toMatchObject({ content: 'abc', version: 3 });
  });
});
