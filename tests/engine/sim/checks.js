// @ts-check
// The end-of-run checks of the engine simulation. Each returns a list of failure strings
// (empty = passed); the test asserts that the list is empty (and, for the counter-check,
// that the broken variants produce failures).

/** The fields of a Row (types.js) the engines and the snapshot must agree on. */
const ROW_FIELDS = ['id', 'parentId', 'depth', 'content', 'type', 'checked', 'collapsed', 'language',
  'conflictOf', 'conflictResolved', 'version', 'hasChildren'];

/** Rows as the server's snapshot implies them: live blocks, document order, depth, hasChildren. */
export function rowsFromSnapshot(snap) {
  const live = snap.blocks.filter((b) => !b.deleted);
  const hasKids = new Set(live.map((b) => b.parentId).filter((p) => p !== null));
  return live.map((b) => {
    const r = {};
    for (const f of ROW_FIELDS) r[f] = f === 'hasChildren' ? hasKids.has(b.id) : b[f];
    return r;
  });
}

function pickRow(row) {
  const r = {};
  for (const f of ROW_FIELDS) r[f] = row[f] === undefined ? null : row[f];
  return r;
}

function canon(v) {
  if (Array.isArray(v)) return v.map(canon);
  if (v && typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v).sort()) o[k] = canon(v[k]);
    return o;
  }
  return v;
}

export const same = (a, b) => JSON.stringify(canon(a)) === JSON.stringify(canon(b));

/**
 * Convergence: the engine's view (rows, title, lastSeq) equals the snapshot, nothing pending.
 * @param {string} name @param {any} state EngineState @param {any} snap
 */
export function checkConvergence(name, state, snap) {
  const out = [];
  if (state.title !== snap.title) out.push(`${name}: title ${JSON.stringify(state.title)} != server ${JSON.stringify(snap.title)}`);
  if (state.lastSeq !== snap.headSeq) out.push(`${name}: lastSeq ${state.lastSeq} != headSeq ${snap.headSeq}`);
  if (state.pending !== 0) out.push(`${name}: ${state.pending} ops still pending`);
  if (state.error) out.push(`${name}: error ${JSON.stringify(state.error)}`);
  const want = rowsFromSnapshot(snap);
  const got = state.rows.map(pickRow);
  if (!same(got.map(pickRow), want.map(pickRow))) {
    const n = Math.max(got.length, want.length);
    let first = -1;
    for (let i = 0; i < n; i++) if (!same(got[i] ?? null, want[i] ?? null)) { first = i; break; }
    out.push(`${name}: rows differ from the snapshot (engine ${got.length}, server ${want.length}; first at ${first}: ` +
      `engine ${JSON.stringify(got[first] ?? null)} server ${JSON.stringify(want[first] ?? null)})`);
  }
  return out;
}

/**
 * A valid tree: live blocks under live parents (or top level), no cycles, the snapshot in
 * pre-order (siblings by orderKey, then id) with consistent depths.
 */
export function checkTree(snap) {
  const out = [];
  const byId = new Map(snap.blocks.map((b) => [b.id, b]));
  const live = snap.blocks.filter((b) => !b.deleted);
  for (const b of live) {
    if (b.parentId !== null) {
      const p = byId.get(b.parentId);
      if (!p) out.push(`tree: live ${b.id} has unknown parent ${b.parentId}`);
      else if (p.deleted) out.push(`tree: live ${b.id} under deleted parent ${b.parentId}`);
    }
    const seen = new Set();
    for (let cur = b; cur && cur.parentId !== null; cur = byId.get(cur.parentId)) {
      if (seen.has(cur.id)) { out.push(`tree: cycle through ${b.id}`); break; }
      seen.add(cur.id);
    }
  }
  // Expected pre-order of live blocks.
  const kids = new Map();
  for (const b of live) {
    const k = b.parentId ?? '';
    if (!kids.has(k)) kids.set(k, []);
    kids.get(k).push(b);
  }
  const cmp = (a, b) => (a.orderKey < b.orderKey ? -1 : a.orderKey > b.orderKey ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const order = [];
  const walk = (parent, depth) => {
    for (const b of (kids.get(parent) ?? []).sort(cmp)) {
      order.push([b.id, depth]);
      walk(b.id, depth + 1);
    }
  };
  walk('', 0);
  const got = live.map((b) => [b.id, b.depth]);
  if (!same(order, got)) out.push(`tree: snapshot order/depths differ from the pre-order of the tree`);
  return out;
}

/**
 * Exactly once, from the server's own tables and everything seen on the wire.
 * @param {{opRows: {op_id: string, seq: number, kind: string}[], resultRows: {op_id: string, result: string}[],
 *   snap: any, queued: Map<string, {op: any, engine: string}>, net: import('./network.js').Network}} x
 */
export function checkExactlyOnce({ opRows, resultRows, snap, queued, net }) {
  const out = [];
  const stored = new Map(resultRows.map((r) => [r.op_id, JSON.parse(r.result)]));
  // (1) no op twice in the log
  const bySeqOp = new Map();
  for (const r of opRows) {
    if (bySeqOp.has(r.op_id) && r.kind !== 'purge') out.push(`exactly-once: op ${r.op_id} in the log twice (seq ${bySeqOp.get(r.op_id)} and ${r.seq})`);
    bySeqOp.set(r.op_id, r.seq);
  }
  // (2) no gap in the stored log
  const seqs = opRows.map((r) => r.seq).sort((a, b) => a - b);
  for (let i = 1; i < seqs.length; i++) if (seqs[i] !== seqs[i - 1] + 1) out.push(`log: gap between seq ${seqs[i - 1]} and ${seqs[i]}`);
  if (seqs.length && seqs[seqs.length - 1] !== snap.headSeq) out.push(`log: last stored seq ${seqs[seqs.length - 1]} != headSeq ${snap.headSeq}`);
  // (3) every op an engine ever queued (or sent) has a stored result
  const all = new Set([...queued.keys(), ...net.sentOps.keys()]);
  let missing = 0;
  for (const opId of all) {
    if (!stored.has(opId)) {
      if (missing++ < 5) {
        const q = queued.get(opId);
        out.push(`exactly-once: op ${opId} (${q?.op.kind ?? net.sentOps.get(opId)?.op.kind}, queued by ${q?.engine ?? '?'}) was never applied: no stored result`);
      }
    }
  }
  if (missing > 5) out.push(`exactly-once: … ${missing} ops in all without a stored result`);
  // (4) every result seen on the wire equals the stored one
  for (const [opId, seen] of net.results) {
    const s = stored.get(opId);
    for (const r of seen) if (s && !same(r.result, s)) out.push(`exactly-once: op ${opId}: result on the wire (${r.how}) ${JSON.stringify(r.result)} != stored ${JSON.stringify(s)}`);
  }
  // (5) an op, once on the wire, is always resent unchanged (same opId = same body)
  for (const [opId, rec] of net.sentOps) {
    if (rec.bodies.size > 1) out.push(`exactly-once: op ${opId} was sent with ${rec.bodies.size} different bodies: ${[...rec.bodies].join(' / ')}`);
  }
  // (6) every log entry belongs to an op an engine queued (or to compaction)
  for (const r of opRows) {
    if (r.kind !== 'purge' && !all.has(r.op_id)) out.push(`exactly-once: log seq ${r.seq} (${r.kind}) belongs to no op any engine queued: ${r.op_id}`);
  }
  // (7) every copy of a log entry seen on the wire is the same
  for (const m of net.entryMismatch.slice(0, 3)) out.push(`log: two different entries for seq ${m.seq}`);
  return out;
}

/** Typed text is made of tokens like `a3x17` (engine letter, engine number, counter). */
export const TOKEN = /\b[a-z]\d+x\d+\b/g;

/**
 * No typed text lost: each token of the text an engine typed last into a bullet (or the
 * title) is somewhere in the document: a block's content (live, tombstone, conflict copy),
 * the title, or a block that compaction purged after someone deleted it. `replaced`: tokens a
 * user deliberately replaced (accepted a conflict copy over an original showing them).
 * @param {{typed: Map<string, {engine: string, target: string, text: string, step: number}>,
 *   snap: any, purgedText: string[], replaced?: Set<string>}} x
 */
export function checkNoTextLost({ typed, snap, purgedText, replaced = new Set() }) {
  const present = new Set(replaced);
  const add = (s) => { for (const t of s.match(TOKEN) ?? []) present.add(t); };
  for (const b of snap.blocks) add(b.content);
  add(snap.title);
  for (const s of purgedText) add(s);
  const out = [];
  let lost = 0;
  for (const rec of typed.values()) {
    const missing = (rec.text.match(TOKEN) ?? []).filter((t) => !present.has(t));
    if (missing.length) {
      if (lost++ < 5) out.push(`text lost: ${rec.engine} typed ${JSON.stringify(rec.text)} into ${rec.target} (step ${rec.step}); missing ${missing.join(', ')}`);
    }
  }
  if (lost > 5) out.push(`text lost: … ${lost} texts in all`);
  return out;
}
