// @ts-check
// view-rows.js: new bullets spliced into the rows (Enter, a few pasted) instead of every row
// rebuilt — after each insert the rows equal the model's own, field by field, and every row
// not touched keeps its object.
import { describe, it, expect } from 'vitest';
import { LocalView } from '../../static/engine/local-view.js';
import { nKeysBetween } from '../../static/engine/order-key.js';
import { randomModel } from './outline-edits.js';
import { mulberry32 } from './prng.js';

const CTX = { clientId: 'cl_a', userId: 'usr_a', name: 'A', now: 1, heldByOthers: () => false, leasesEnabled: false };

/**
 * A random place for new bullets: a parent (top level with probability `top`) and the order
 * keys of the live siblings they go between.
 * @param {() => number} rng @param {LocalView} local @param {{id: string}[]} rows @param {number} top
 * @returns {{parent: string|null, before: string|null, after: string|null}}
 */
function randomPlace(rng, local, rows, top) {
  const live = rows.map((r) => r.id);
  const parent = rng() < top ? null : live[Math.floor(rng() * live.length)] ?? null;
  const siblings = local.model.childIds(parent).filter((id) => local.model.get(id)?.deleted === false);
  const k = Math.floor(rng() * (siblings.length + 1));
  const before = k > 0 ? /** @type {any} */ (local.model.get(siblings[k - 1])).orderKey : null;
  const after = k < siblings.length ? /** @type {any} */ (local.model.get(siblings[k])).orderKey : null;
  return { parent, before, after };
}

describe('ViewRows.insert', () => {
  it('300 random inserts (first child, after a sibling with children, at the end, top level) on random trees', () => {
    for (let seed = 1; seed <= 10; seed++) {
      const rng = mulberry32(seed);
      let n = 0;
      const model = randomModel(rng, 40, () => `op_${seed}_${n++}`);
      const local = new LocalView(model.clone());
      let rows = local.rowList();
      for (let step = 0; step < 30; step++) {
        const { parent, before, after } = randomPlace(rng, local, rows, 0.2);
        const orderKey = before !== null && after !== null && before >= after ? null : nKeysBetween(before, after, 1)[0];
        if (orderKey === null) continue;
        const id = `blk_new_${seed}_${step}`;
        const count = rng() < 0.2 ? 2 : 1;
        const ops = [{ opId: `op_i_${seed}_${step}`, kind: /** @type {const} */ ('insert'), blockId: id, parentId: parent, orderKey, content: `new ${step}` }];
        if (count === 2) ops.push({ opId: `op_c_${seed}_${step}`, kind: /** @type {const} */ ('insert'), blockId: `${id}_child`, parentId: id, orderKey: 'a0', content: 'child' });
        const old = rows;
        local.apply(ops, CTX, false);
        rows = local.rowList();
        expect(rows, `seed ${seed} step ${step}`).toEqual(local.model.rows());
        const kept = new Set(old);
        const changed = rows.filter((r) => !kept.has(r)).map((r) => r.id);
        // only the new rows and (when it had none) the parent are new objects
        for (const c of changed) expect([id, `${id}_child`, parent].includes(c), `seed ${seed} step ${step}: ${c} replaced`).toBe(true);
      }
    }
  });
});

describe('ViewRows.insert of a pasted stretch', () => {
  it('60 random pastes of 21–60 bullets (nested, some folded) at random places: rows equal the model\'s, old rows kept', () => {
    let spliced = 0;
    for (let seed = 1; seed <= 12; seed++) {
      const rng = mulberry32(100 + seed);
      let n = 0;
      const model = randomModel(rng, 60, () => `op_${seed}_${n++}`);
      const local = new LocalView(model.clone());
      let rows = local.rowList();
      for (let step = 0; step < 5; step++) {
        const { parent, before, after } = randomPlace(rng, local, rows, 0.3);
        if (before !== null && after !== null && before >= after) continue;
        const count = 21 + Math.floor(rng() * 40);
        // A pasted list: the tops are siblings in a row; each item under the last top or
        // one level deeper than the item before, at most.
        const tops = Math.max(1, Math.floor(count / 4));
        const topKeys = nKeysBetween(before, after, tops);
        const innerKeys = nKeysBetween(null, null, count);
        /** @type {any[]} */
        const ops = [];
        /** @type {{id: string, depth: number}[]} */
        const path = [];
        let t = 0;
        for (let i = 0; i < count; i++) {
          const id = `blk_p_${seed}_${step}_${i}`;
          const lastDepth = path.length ? path[path.length - 1].depth : -1;
          const depth = i === 0 || (t >= tops ? false : rng() < 0.3) ? 0 : Math.min(lastDepth + 1, 1 + Math.floor(rng() * (lastDepth + 1)));
          if (depth === 0 && t >= tops) break;
          while (path.length && path[path.length - 1].depth >= depth) path.pop();
          const under = depth === 0 ? parent : path[path.length - 1].id;
          const key = depth === 0 ? topKeys[t++] : innerKeys[i];
          ops.push({ opId: `op_p_${seed}_${step}_${i}`, kind: 'insert', blockId: id, parentId: under, orderKey: key, content: `pasted ${i}` });
          if (rng() < 0.1) ops.push({ opId: `op_f_${seed}_${step}_${i}`, kind: 'set_props', blockId: id, props: { collapsed: true } });
          path.push({ id, depth });
        }
        const inserts = ops.filter((o) => o.kind === 'insert');
        const old = rows;
        local.apply(ops, CTX, false);
        // Whether the rows were spliced (no recomputation of every row from the model).
        const m = local.model;
        const own = m.rows;
        let recomputed = false;
        m.rows = () => {
          recomputed = true;
          return own.call(m);
        };
        rows = local.rowList();
        m.rows = own;
        if (!recomputed) spliced++;
        expect(rows, `seed ${seed} step ${step}`).toEqual(local.model.rows());
        const kept = new Set(old);
        const fresh = new Set(inserts.map((o) => o.blockId));
        const replaced = rows.filter((r) => !kept.has(r) && !fresh.has(r.id) && r.id !== parent);
        expect(replaced.map((r) => r.id), `seed ${seed} step ${step}: old rows replaced`).toEqual([]);
      }
    }
    expect(spliced).toBeGreaterThan(20);
  });
});

describe('ViewRows.move', () => {
  it('300 random moves (indent, outdent, across the tree, with subtrees) on random trees', () => {
    for (let seed = 1; seed <= 10; seed++) {
      const rng = mulberry32(seed * 31);
      let n = 0;
      const model = randomModel(rng, 40, () => `op_${seed}_${n++}`);
      const local = new LocalView(model.clone());
      let rows = local.rowList();
      let moves = 0;
      for (let step = 0; step < 30; step++) {
        const live = rows.map((r) => r.id);
        const id = live[Math.floor(rng() * live.length)];
        const parent = rng() < 0.25 ? null : live[Math.floor(rng() * live.length)] ?? null;
        if (parent !== null && local.model.isInSubtree(parent, id)) continue;
        const siblings = local.model.childIds(parent).filter((c) => c !== id && local.model.get(c)?.deleted === false);
        const k = Math.floor(rng() * (siblings.length + 1));
        const before = k > 0 ? /** @type {any} */ (local.model.get(siblings[k - 1])).orderKey : null;
        const after = k < siblings.length ? /** @type {any} */ (local.model.get(siblings[k])).orderKey : null;
        if (before !== null && after !== null && before >= after) continue;
        const orderKey = nKeysBetween(before, after, 1)[0];
        const old = rows;
        local.apply([{ opId: `op_m_${seed}_${step}`, kind: 'move', blockId: id, parentId: parent, orderKey }], CTX, false);
        rows = local.rowList();
        moves++;
        expect(rows, `seed ${seed} step ${step}`).toEqual(local.model.rows());
        // rows outside the moved subtree and its two parents keep their objects
        const kept = new Set(old);
        const subtree = new Set([id]);
        for (const r of rows) if (r.parentId !== null && subtree.has(r.parentId)) subtree.add(r.id);
        const oldParent = old.find((r) => r.id === id)?.parentId ?? null;
        for (const r of rows) if (!kept.has(r)) expect(subtree.has(r.id) || r.id === parent || r.id === oldParent, `seed ${seed} step ${step}: ${r.id} replaced`).toBe(true);
      }
      expect(moves).toBeGreaterThan(10);
    }
  });
});

describe('LocalView.shows: an echo of own ops needs no rebuild only when the view already shows it', () => {
  const setup = () => {
    const rng = mulberry32(7);
    let n = 0;
    const model = randomModel(rng, 20, () => `op_s_${n++}`);
    const local = new LocalView(model.clone());
    const id = /** @type {string} */ (local.rowList()[0]?.id);
    const before = /** @type {any} */ (local.model.get(id));
    const op = { opId: 'op_mine', kind: /** @type {const} */ ('set_content'), blockId: id, content: 'mine', baseVersion: before.version };
    local.apply([op], CTX, false);
    const shown = /** @type {any} */ (local.model.get(id));
    // What the server logs for it: the same block, its own time.
    const entry = { seq: model.lastSeq + 1, opId: 'op_mine', kind: 'set_content', clientId: 'cl_a', userId: 'usr_a', at: 99, effects: [{ e: 'block', block: { ...shown, updatedAt: 99 } }] };
    return { local, model, id, op, shown, entry };
  };

  it('is true for the queue head applied as shown, whatever the server\'s time', () => {
    const { local, model, op, entry } = setup();
    expect(local.shows([/** @type {any} */ (entry)], model.lastSeq, [op])).toBe(true);
  });

  it('is false after a gap (someone else\'s op in between), out of queue order, or when stale', () => {
    const { local, model, op, entry } = setup();
    expect(local.shows([/** @type {any} */ ({ ...entry, seq: entry.seq + 1 })], model.lastSeq, [op])).toBe(false);
    expect(local.shows([/** @type {any} */ ({ ...entry, opId: 'op_other' })], model.lastSeq, [op])).toBe(false);
    local.stale = true;
    expect(local.shows([/** @type {any} */ (entry)], model.lastSeq, [op])).toBe(false);
  });

  it('is false when the server made something the view did not (a conflict copy for a lease it did not know)', () => {
    const { local, model, op, entry, shown, id } = setup();
    const copy = { ...shown, id: 'blk_copy', conflictOf: id, version: 1 };
    const original = { ...shown, content: (/** @type {any} */ (model.get(id))).content };
    const conflicted = { ...entry, effects: [{ e: 'block', block: original }, { e: 'block', block: copy }] };
    expect(local.shows([/** @type {any} */ (conflicted)], model.lastSeq, [op])).toBe(false);
  });

  it('compares each block as the last entry leaves it (moved and moved back in one reply)', () => {
    const { local, model, op, entry, id, shown } = setup();
    const away = { ...shown, parentId: 'blk_elsewhere', orderKey: 'a0' };
    const moveAway = { opId: 'op_away', kind: /** @type {const} */ ('move'), blockId: id, parentId: 'blk_elsewhere', orderKey: 'a0' };
    const moveBack = { opId: 'op_back', kind: /** @type {const} */ ('move'), blockId: id, parentId: shown.parentId, orderKey: shown.orderKey };
    const e2 = { ...entry, seq: entry.seq + 1, opId: 'op_away', kind: 'move', effects: [{ e: 'block', block: away }] };
    const e3 = { ...entry, seq: entry.seq + 2, opId: 'op_back', kind: 'move', effects: [{ e: 'block', block: { ...shown } }] };
    expect(local.shows(/** @type {any} */ ([entry, e2, e3]), model.lastSeq, [op, moveAway, moveBack])).toBe(true);
    expect(local.shows(/** @type {any} */ ([entry, e2]), model.lastSeq, [op, moveAway]), 'the view never moved it away').toBe(false);
  });

  it('lets a block differ that a later queued op changes again', () => {
    const { local, model, op, entry, id, shown } = setup();
    const next = { opId: 'op_next', kind: /** @type {const} */ ('set_content'), blockId: id, content: 'mine, more', baseVersion: shown.version };
    local.apply([next], CTX, false);
    expect(local.shows([/** @type {any} */ (entry)], model.lastSeq, [op, next])).toBe(true);
    expect(local.shows([/** @type {any} */ (entry)], model.lastSeq, [op])).toBe(false);
  });
});
