// @ts-check
// Benchmark of the engine's pure modules on a 10,000-bullet document (BENCH_BULLETS=50000 for
// another size; node, prints figures):
//   node tests/engine/bench-model.mjs
// Targets: diffRows after one keystroke < 5 ms; applying 500 log entries < 5 ms.
import { DocModel } from '../../static/engine/model.js';
import { diffRows } from '../../static/engine/diff.js';
import { nKeysBetween } from '../../static/engine/order-key.js';
import { mulberry32 } from './prng.js';

const N = Number(process.env.BENCH_BULLETS) || 10_000;
const rng = mulberry32(42);
let opN = 0;
const newOpId = () => `op_${++opN}`;
const CTX = { clientId: 'cl_b', userId: 'usr_b', name: 'B', now: 1, heldByOthers: () => false, leasesEnabled: true };

/** A realistic outline: 10,000 bullets, up to 5 levels, a few hundred top-level sections. */
function snapshotBlocks() {
  const blocks = [];
  /** @type {Map<string|null, string[]>} */
  const kids = new Map();
  const ids = [];
  for (let i = 0; i < N; i++) {
    const r = rng();
    const parent = i === 0 || r < 0.03 ? null : ids[Math.max(0, ids.length - 1 - Math.floor(rng() * 20))];
    const id = `blk_${i.toString(36).padStart(6, '0')}`;
    ids.push(id);
    const list = kids.get(parent) ?? [];
    list.push(id);
    kids.set(parent, list);
    blocks.push({ id, parentId: parent, orderKey: '', content: `Bullet number ${i} with some #tag text`, type: 'bullet', checked: false, collapsed: false, language: null, conflictOf: null, conflictAuthor: null, conflictResolved: false, version: 1, deleted: false, deletedAt: null, updatedAt: 1, updatedBy: 'usr_b' });
  }
  const byId = new Map(blocks.map((b) => [b.id, b]));
  for (const list of kids.values()) {
    const keys = nKeysBetween(null, null, list.length);
    list.forEach((id, k) => { byId.get(id).orderKey = keys[k]; });
  }
  return blocks;
}

/** @param {number[]} xs */
function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (/** @type {number} */ p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return `p50 ${at(0.5).toFixed(3)} ms, p95 ${at(0.95).toFixed(3)} ms, max ${s[s.length - 1].toFixed(3)} ms`;
}

/** @param {() => void} f @param {number} runs */
function time(f, runs) {
  const out = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    f();
    out.push(performance.now() - t);
  }
  return out;
}

// Wall-clock figures suffer when other processes compete for the CPU, so each figure is
// also given as CPU time of this process (user + system) per run, averaged over all runs.
/** @param {() => void} f @param {number} runs */
function cpuPerRun(f, runs) {
  const c = process.cpuUsage();
  for (let i = 0; i < runs; i++) f();
  const d = process.cpuUsage(c);
  return `cpu ${((d.user + d.system) / 1000 / runs).toFixed(3)} ms/run`;
}

const blocks = /** @type {import('../../static/engine/types.js').Block[]} */ (snapshotBlocks());
const snapshot = { docId: 'doc_bench', title: 'Bench', titleVersion: 1, icon: null, headSeq: 0, blocks };

// Warm up the JIT a little so figures show steady state, as in a long editing session.
for (let i = 0; i < 3; i++) DocModel.fromSnapshot(snapshot).rows();

/** @param {string} what @param {() => void} f @param {number} runs */
function report(what, f, runs) {
  console.log(`${what} (${runs} runs): ${stats(time(f, runs))}; ${cpuPerRun(f, runs)}`);
}

report(`fromSnapshot(${N} blocks)`, () => DocModel.fromSnapshot(snapshot), 20);
// A device copy comes back from IndexedDB bucket by bucket (blocks hashed by ID): out of order.
const hashed = { ...snapshot, blocks: [...blocks].sort((a, b) => (a.id.slice(-6) < b.id.slice(-6) ? -1 : a.id.slice(-6) > b.id.slice(-6) ? 1 : 0)) };
report(`fromSnapshot(${N} blocks out of order, as from this device's copy)`, () => DocModel.fromSnapshot(hashed), 20);
const model = DocModel.fromSnapshot(snapshot);
report(`rows() of ${N}, uncached`, () => { model._rows = null; model.rows(); }, 50);
report(`clone() of ${N}`, () => model.clone(), 50);

// diffRows after one keystroke: the editor hands over a new flat list with one text changed.
// The list is prepared outside the timed part (the editor builds it anyway).
const flat = model.rows().map((r) => ({ id: r.id, depth: r.depth, content: r.content }));
let k = 0;
/** @param {(rows: typeof flat) => void} edit */
function prepared(edit) {
  const lists = [];
  for (let i = 0; i < 400; i++) {
    const next = flat.slice();
    edit(next);
    lists.push(next);
  }
  let at = 0;
  return () => diffRows(model, lists[at++ % lists.length], newOpId);
}
const keystroke = prepared((next) => {
  const i = Math.floor(rng() * next.length);
  next[i] = { ...next[i], content: next[i].content + String.fromCharCode(97 + (k++ % 26)) };
});
const check = keystroke();
if (check.length !== 1 || check[0].kind !== 'set_content') throw new Error('expected one set_content');
report(`diffRows(${N} rows, one keystroke)`, keystroke, 200);
report(`diffRows(${N} rows, one indent: structural edit)`, prepared((next) => {
  let i = 1 + Math.floor(rng() * (next.length - 2));
  while (next[i - 1].depth < next[i].depth) i++;
  next[i] = { ...next[i], depth: next[i].depth + 1 };
}), 50);
report(`diffRows(${N} rows, paste of 200 bullets)`, prepared((next) => {
  const at = Math.floor(rng() * next.length);
  const depth = next[at].depth;
  next.splice(at + 1, 0, ...Array.from({ length: 200 }, (_, j) => ({ id: `blk_paste${k++}_${j}`, depth, content: `pasted ${j}` })));
}), 50);

// 500 log entries (typing, inserts, moves, deletes from other clients) onto a 10,000-block model.
const producer = model.clone();
const entries = [];
const rowsNow = producer.rows();
for (let s = 1; s <= 500; s++) {
  const r = rowsNow[Math.floor(rng() * rowsNow.length)];
  const b = producer.get(r.id);
  const x = rng();
  /** @type {any} */
  let op;
  if (x < 0.7) op = { opId: newOpId(), kind: 'set_content', blockId: b.id, content: b.content + '!', baseVersion: b.version };
  else if (x < 0.85) op = { opId: newOpId(), kind: 'insert', blockId: `blk_new${s}`, parentId: b.parentId, orderKey: producer.keyRightAfter(b.id), content: 'new' };
  else if (x < 0.95) op = { opId: newOpId(), kind: 'move', blockId: b.id, parentId: null, orderKey: producer.keyAtEnd(null) };
  else op = { opId: newOpId(), kind: 'delete', blockId: b.id };
  const { effects } = producer.applyOp(op, CTX);
  entries.push({ seq: s, opId: op.opId, kind: op.kind, clientId: 'cl_b', userId: 'usr_b', at: 1, effects });
}
// Each run applies the 500 entries to its own clone, made outside the timed part.
const targets = Array.from({ length: 40 }, () => model.clone());
let ti = 0;
report(`applyEntry × 500 onto ${N} blocks`, () => {
  const target = targets[ti++];
  for (const e of entries) target.applyEntry(e);
  if (target.lastSeq !== 500) throw new Error('entries not applied');
}, 20);
report('  … plus clone() before and the rows() the UI reads after', () => {
  const target = model.clone();
  for (const e of entries) target.applyEntry(e);
  target.rows();
}, 20);
