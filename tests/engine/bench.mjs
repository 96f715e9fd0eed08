// @ts-check
// Engine benchmark (Node; IndexedDB is fake-indexeddb, an in-memory implementation, so the
// load figure measures the engine's own work plus fake-indexeddb's, not a browser's disk):
//
//   node tests/engine/bench.mjs            (BENCH_RUNS=400 for more samples)
//
// 1. diff of a 10,000-bullet list after one keystroke, through engine.commitRows (p50/p95);
// 2. applying 500 log entries: one /sync reply carrying 500 ops, from the reply to the new
//    state (through the engine), and the model alone (DocModel.applyEntry ×500 + rows());
// 3. loading a 10,000-bullet document from IndexedDB to the first state (engine.open()).
// Targets: < 5 ms, < 5 ms, < 150 ms.

import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { DocModel } from '../../static/engine/model.js';
import { nKeysBetween } from '../../static/engine/order-key.js';
import { diffRows } from '../../static/engine/diff.js';
import { openStore, createMemoryLocks } from '../../static/engine/store.js';

const N = 10_000;
const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const DOC = 'doc_bench';
const NOW = Date.UTC(2026, 0, 1);

/** CPU time of this process in ms (user + system): less sensitive to a busy machine than wall time. */
function cpuMs() {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
}

function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

/**
 * A 10,000-bullet document: 2,000 top-level bullets with 4 children each; some text.
 * @returns {import('../../static/engine/types.js').Block[]}
 */
function makeBlocks() {
  /** @type {import('../../static/engine/types.js').Block[]} */
  const blocks = [];
  const top = nKeysBetween(null, null, N / 5);
  const kidKeys = nKeysBetween(null, null, 4);
  let n = 0;
  /** @param {string} id @param {string|null} parentId @param {string} orderKey @returns {import('../../static/engine/types.js').Block} */
  const block = (id, parentId, orderKey) => ({
    id, parentId, orderKey, content: `bullet ${n++} with some #tag text and **bold** words`, type: 'bullet',
    checked: false, collapsed: false, language: null, conflictOf: null, conflictAuthor: null,
    conflictResolved: false, version: 1, deleted: false, deletedAt: null, updatedAt: NOW, updatedBy: 'usr_bench',
  });
  for (let i = 0; i < N / 5; i++) {
    const id = `blk_t${String(i).padStart(5, '0')}`;
    blocks.push(block(id, null, top[i]));
    for (let k = 0; k < 4; k++) blocks.push(block(`blk_c${String(i).padStart(5, '0')}_${k}`, id, kidKeys[k]));
  }
  return blocks;
}

/**
 * 500 log entries after seq 1000: set_content effects on blocks spread over the document.
 * @param {import('../../static/engine/types.js').Block[]} blocks @param {number} from
 * @returns {import('../../static/engine/types.js').LogEntry[]}
 */
function makeEntries(blocks, from) {
  /** @type {import('../../static/engine/types.js').LogEntry[]} */
  const out = [];
  for (let i = 0; i < 500; i++) {
    const b = blocks[(i * 7919) % blocks.length];
    out.push({
      seq: from + i + 1, opId: `op_bench_${i}`, kind: 'set_content', clientId: 'cl_other', userId: 'usr_other', at: NOW + i,
      effects: [{ e: /** @type {const} */ ('block'), block: { ...b, content: `${b.content} edit ${i}`, version: b.version + 1 + i, updatedAt: NOW + i, updatedBy: 'usr_other' } }],
    });
  }
  return out;
}

const results = [];
/** "wall p50 / p95, CPU p50" in ms. */
const fig = (wall, cpu, digits = 2) =>
  `wall p50 ${pct(wall, 50).toFixed(digits)}, p95 ${pct(wall, 95).toFixed(digits)}; CPU p50 ${pct(cpu, 50).toFixed(digits)} ms`;
const row = (what, figure, target, note = '') => results.push({ what, figure, target, note });

// ---- the model alone (always available) ----
const blocks = makeBlocks();
const snapshot = { docId: DOC, title: 'Bench', titleVersion: 1, icon: null, headSeq: 1000, blocks };
{
  const times = [];
  const cpus = [];
  for (let r = 0; r < 40; r++) {
    const m = DocModel.fromSnapshot(snapshot);
    m.rows();
    const entries = makeEntries(blocks, 1000);
    const c0 = cpuMs();
    const t0 = performance.now();
    for (const e of entries) m.applyEntry(e);
    const rows = m.rows();
    // The first 10 runs warm the JIT up and are not counted.
    if (r >= 10) {
      times.push(performance.now() - t0);
      cpus.push(cpuMs() - c0);
    }
    if (rows.length !== N) throw new Error('model rows');
  }
  row('apply 500 log entries (model: applyEntry ×500 + rows())', fig(times, cpus), '< 5 ms');
}

// ---- through the engine ----
let DocSyncEngine = null;
try {
  ({ DocSyncEngine } = await import('../../static/engine/engine.js'));
} catch (e) {
  row('engine', 'static/engine/engine.js not importable', '', String(e.message).slice(0, 80));
}

if (DocSyncEngine) {
  // Every section gets its own IndexedDB holding the 10,000-bullet document (so no section
  // adopts another one's queue).
  const seededIdb = async () => {
    const idb = new IDBFactory();
    const seed = await openStore({ indexedDB: idb, IDBKeyRange });
    await seed.saveSnapshot(
      { docId: DOC, title: 'Bench', titleVersion: 1, icon: null, lastSeq: 1000, role: 'owner', mode: 'private', shared: false, sessions: 1, savedAt: NOW },
      blocks,
    );
    seed.close();
    return idb;
  };
  let idb = await seededIdb();
  const offline = async () => {
    throw new TypeError('fetch failed (bench: offline)');
  };
  const makeEngine = async (fetchFn, clientId) => {
    const store = await openStore({ indexedDB: idb, IDBKeyRange });
    const engine = new DocSyncEngine({
      docId: DOC, clientId, user: { userId: 'usr_bench', name: 'bench' }, store, baseUrl: 'http://127.0.0.1:9',
      fetch: fetchFn, WebSocket: null, EventSource: null, locks: createMemoryLocks(), headers: {},
    });
    return { engine, store };
  };
  const stateOf = (engine, last) => engine.state ?? last;

  // 3. load from IndexedDB to the first state with all rows.
  {
    idb = await seededIdb();
    const times = [];
    const cpus = [];
    for (let r = 0; r < 10; r++) {
      const { engine, store } = await makeEngine(offline, `cl_load${r}`);
      let first = null;
      const c0 = cpuMs();
      const t0 = performance.now();
      const got = new Promise((resolve) => {
        const off = engine.subscribe((st) => {
          if (!first && st.loaded && st.rows.length === N) {
            first = performance.now() - t0;
            cpus.push(cpuMs() - c0);
            off?.();
            resolve();
          }
        });
      });
      const opened = engine.open();
      await Promise.race([got, opened.then(() => got)]);
      times.push(first);
      await engine.close().catch(() => {});
      store.close();
    }
    row('load 10,000 bullets from IndexedDB to first state (fake-indexeddb)', fig(times, cpus, 1), '< 150 ms', '10 opens');
  }

  // 1. one keystroke in a 10,000-bullet list through commitRows.
  {
    idb = await seededIdb();
    const { engine, store } = await makeEngine(offline, 'cl_keys');
    let st = null;
    engine.subscribe((s) => (st = s));
    await engine.open();
    st = stateOf(engine, st);
    if (st.rows.length !== N) throw new Error(`engine rows ${st.rows.length}`);
    const times = [];
    const diffTimes = [];
    const cpus = [];
    const diffCpus = [];
    for (let r = 0; r < RUNS + 20; r++) {
      st = stateOf(engine, st);
      const rows = st.rows.map((x) => ({ id: x.id, depth: x.depth, content: x.content, type: x.type, checked: x.checked, collapsed: x.collapsed, language: x.language, conflictResolved: x.conflictResolved }));
      const i = (r * 2477) % rows.length;
      rows[i] = { ...rows[i], content: rows[i].content + 'x' };
      let n = 0;
      const dc0 = cpuMs();
      const d0 = performance.now();
      const ops = diffRows(engine.view, rows, () => `op_bench_diff_${n++}`);
      const d1 = performance.now();
      const dc1 = cpuMs();
      if (ops.length !== 1) throw new Error(`one keystroke gave ${ops.length} ops`);
      const c0 = cpuMs();
      const t0 = performance.now();
      const res = engine.commitRows(rows, { step: 'typing' });
      const t1 = performance.now();
      const c1 = cpuMs();
      // The first 20 keystrokes warm the JIT up and are not counted.
      if (r >= 20) {
        times.push(t1 - t0);
        cpus.push(c1 - c0);
        diffTimes.push(d1 - d0);
        diffCpus.push(dc1 - dc0);
      }
      if (res && res.ok === false) throw new Error(`commitRows refused: ${res.message}`);
      if (r % 20 === 19) await new Promise((x) => setImmediate(x));
    }
    row('one keystroke in 10,000 bullets: diffRows alone', fig(diffTimes, diffCpus), '', `${RUNS} keystrokes`);
    row('one keystroke in 10,000 bullets: engine.commitRows (diff, undo step, queue, new state)', fig(times, cpus), '< 5 ms', `${RUNS} keystrokes`);
    await engine.close().catch(() => {});
    store.close();
  }

  // 2. one /sync reply with 500 ops, from the reply to the engine's new state.
  {
    const times = [];
    const inner = [];
    const innerCpu = [];
    for (let r = 0; r < 8; r++) {
      idb = await seededIdb();
      let head = 1000;
      let tReply = 0;
      let entries = null;
      const fetchFn = async (url, init) => {
        const path = new URL(url).pathname;
        if (path.endsWith('/snapshot')) return new Response('{}', { status: 503 });
        if (path.endsWith('/sync')) {
          const body = JSON.parse(init.body);
          const ops = entries && body.lastSeq === 1000 ? entries : [];
          if (ops.length) head = 1500;
          const reply = {
            results: (body.ops ?? []).map((o) => ({ opId: o.opId, status: 'applied', seq: null })),
            ops, hasMore: false, headSeq: head, leaseSeq: 1, leases: { granted: [], denied: [], others: [] },
            role: 'owner', shared: false, sessions: 1, mode: 'private', resync: false, icon: null,
          };
          const text = JSON.stringify(reply);
          tReply = performance.now();
          return new Response(text, { status: 200, headers: { 'content-type': 'application/json' } });
        }
        if (path.endsWith('/changes')) return new Promise(() => {});
        return new Response('{}', { status: 200 });
      };
      const { engine, store } = await makeEngine(fetchFn, `cl_apply${r}`);
      // The engine's own handling of the parsed reply (results, 500 entries, view, state
      // transaction started), timed around the reply method of its inbound part.
      const orig = engine.inbound.reply;
      engine.inbound.reply = async function (reply) {
        const c = cpuMs();
        const t = performance.now();
        await orig.call(this, reply);
        if (reply.ops?.length === 500 && r >= 2) {
          inner.push(performance.now() - t);
          innerCpu.push(cpuMs() - c);
        }
      };
      let applied = null;
      const done = new Promise((resolve) => {
        engine.subscribe((s) => {
          if (applied === null && s.lastSeq === 1500) {
            applied = performance.now() - tReply;
            resolve();
          }
        });
      });
      await engine.open();
      entries = makeEntries(blocks, 1000);
      engine.setOnline(true);
      await Promise.race([done, new Promise((x) => setTimeout(x, 5000))]);
      if (r >= 2) times.push(applied ?? NaN);
      await engine.close().catch(() => {});
      store.close();
    }
    row('apply a /sync reply with 500 ops: engine applyReply (parsed reply)', fig(inner, innerCpu), '< 5 ms', `${inner.length} runs`);
    row('apply a /sync reply with 500 ops: fetch resolved → state emitted', `p50 ${pct(times, 50).toFixed(2)} ms, max ${Math.max(...times).toFixed(2)} ms`, '', 'text + JSON.parse (~250 KB) + emit');
  }
}

const os = await import('node:os');
console.log(`docsync engine benchmark (Node ${process.version}; IndexedDB = fake-indexeddb, in memory; ` +
  `load average ${os.loadavg()[0].toFixed(1)} on ${os.cpus().length} CPUs)`);
for (const r of results) console.log(`${r.what.padEnd(88)} ${r.figure.padEnd(44)} ${r.target.padEnd(9)} ${r.note}`);
process.exit(0);
