// @ts-check
// diff.js: seeded property tests (random edit sequences on random trees: the ops applied to
// the old model must give exactly the new flat list) and minimality (one keystroke → one
// set_content, one indent → one move, …).
import { describe, expect, it } from 'vitest';
import { DocModel } from '../../static/engine/model.js';
import { diffRows, clampDepths, longestIncreasing } from '../../static/engine/diff.js';
import { mulberry32 } from './prng.js';
import { flat, randomEdit, randomModel } from './outline-edits.js';

/** @typedef {import('../../static/engine/types.js').FlatRow} FlatRow */
/** @typedef {import('../../static/engine/types.js').Op} Op */

const CTX = { clientId: 'cl_me', userId: 'usr_me', name: 'Me', now: 1, heldByOthers: () => false, leasesEnabled: true };

let opCounter = 0;
const newOpId = () => `op_${++opCounter}`;

/** @param {FlatRow[]} next */
function expected(next) {
  const depths = clampDepths(next);
  return next.map((r, i) => ({ id: r.id, depth: depths[i], content: r.content }));
}

/** @param {DocModel} m @param {FlatRow[]} next */
function checkProps(m, next) {
  for (const r of next) {
    const b = /** @type {any} */ (m.get(r.id));
    // not `collapsed`: folding is each person's view, never an op (engine/folds.js)
    for (const p of /** @type {const} */ (['type', 'checked', 'language', 'conflictResolved'])) {
      if (r[p] !== undefined) expect(b[p], `${r.id}.${p}`).toBe(r[p]);
    }
  }
}

describe('diffRows property: ops applied to the old model give exactly the new flat list', () => {
  it('40 seeds × 60 random edits on random trees', () => {
    let edits = 0;
    let opCount = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const rng = mulberry32(seed);
      const model = randomModel(rng, 5 + (seed % 7) * 8, newOpId);
      const st = { n: 0, graveyard: [] };
      for (let step = 0; step < 60; step++) {
        const old = flat(model);
        const [kind, next] = randomEdit(rng, flat(model), st);
        const ops = diffRows(model, next, newOpId);
        for (const op of ops) {
          const { result } = model.applyOp(op, CTX);
          if (result.status !== 'applied') expect.fail(`seed ${seed} step ${step} ${kind}: ${JSON.stringify(op)} → ${JSON.stringify(result)}`);
        }
        const got = model.rows().map((r) => ({ id: r.id, depth: r.depth, content: r.content }));
        expect(got, `seed ${seed} step ${step} (${kind})`).toEqual(expected(next));
        checkProps(model, next);
        if (JSON.stringify(expected(next)) === JSON.stringify(expected(old)) && !kind.match(/props|revive/)) {
          expect(ops, `seed ${seed} step ${step}: ${kind} changed nothing`).toEqual([]);
        }
        edits++;
        opCount += ops.length;
      }
    }
    expect(edits).toBe(2400);
    expect(opCount).toBeGreaterThan(2400);
  });

  it('40 seeds × 60 random edits, unchanged rows handed as the model\'s own Row objects (as the editor does)', () => {
    // The window's scans take the same object for the same row: an object kept at a depth
    // clamping changes, or moved elsewhere, must still give the right ops.
    for (let seed = 101; seed <= 140; seed++) {
      const rng = mulberry32(seed);
      const model = randomModel(rng, 5 + (seed % 7) * 8, newOpId);
      const st = { n: 0, graveyard: [] };
      for (let step = 0; step < 60; step++) {
        const [kind, edited] = randomEdit(rng, flat(model), st);
        const own = new Map(model.rows().map((r) => [r.id, r]));
        const next = edited.map((r) => {
          const m = own.get(r.id);
          const same = m && m.depth === r.depth && m.content === r.content && m.type === r.type && m.checked === r.checked &&
            m.language === r.language && m.conflictResolved === r.conflictResolved && m.collapsed === r.collapsed;
          return same ? m : r;
        });
        for (const op of diffRows(model, next, newOpId)) {
          const { result } = model.applyOp(op, CTX);
          if (result.status !== 'applied') expect.fail(`seed ${seed} step ${step} ${kind}: ${JSON.stringify(op)} → ${JSON.stringify(result)}`);
        }
        expect(model.rows().map((r) => ({ id: r.id, depth: r.depth, content: r.content })), `seed ${seed} step ${step} (${kind})`).toEqual(expected(next));
      }
    }
  });

  it('a 1,500-bullet tree × 40 random edits (windows far from the list ends)', () => {
    const rng = mulberry32(777);
    const model = randomModel(rng, 1500, newOpId);
    const st = { n: 0, graveyard: [] };
    for (let step = 0; step < 40; step++) {
      const [kind, next] = randomEdit(rng, flat(model), st);
      for (const op of diffRows(model, next, newOpId)) {
        const { result } = model.applyOp(op, CTX);
        if (result.status !== 'applied') expect.fail(`step ${step} ${kind}: ${JSON.stringify(op)} → ${JSON.stringify(result)}`);
      }
      expect(model.rows().map((r) => ({ id: r.id, depth: r.depth, content: r.content })), `step ${step} (${kind})`).toEqual(expected(next));
    }
  });

  it('an unchanged list gives no ops; the diff does not modify the model', () => {
    const model = randomModel(mulberry32(3), 60, newOpId);
    const rows = model.rows();
    expect(diffRows(model, flat(model), newOpId)).toEqual([]);
    const [, next] = randomEdit(mulberry32(4), flat(model), { n: 0, graveyard: [] });
    diffRows(model, next, newOpId);
    expect(model.rows()).toBe(rows);
  });
});

describe('diffRows minimality', () => {
  /** @returns {[DocModel, FlatRow[]]} a: [a1, a2, a3], b, c */
  function small() {
    const m = DocModel.empty('doc_t');
    const ins = (/** @type {string} */ id, /** @type {string|null} */ p, /** @type {string} */ k) =>
      m.applyOp({ opId: newOpId(), kind: 'insert', blockId: id, parentId: p, orderKey: k, content: id }, CTX);
    ins('blk_a', null, 'a0'); ins('blk_a1', 'blk_a', 'a0'); ins('blk_a2', 'blk_a', 'a1'); ins('blk_a3', 'blk_a', 'a2');
    ins('blk_b', null, 'a1'); ins('blk_c', null, 'a2');
    return [m, flat(m)];
  }
  const kinds = (/** @type {Op[]} */ ops) => ops.map((o) => o.kind);

  it('one keystroke → exactly one set_content with the current version as base', () => {
    const [m, rows] = small();
    rows[2].content += 'x';
    const ops = diffRows(m, rows, newOpId);
    expect(ops).toEqual([{ opId: expect.any(String), kind: 'set_content', blockId: 'blk_a2', content: 'blk_a2x', baseVersion: 1 }]);
  });
  it('one indent → exactly one move (children come along)', () => {
    const [m, rows] = small();
    rows[4].depth = 1; // b under a
    expect(kinds(diffRows(m, rows, newOpId))).toEqual(['move']);
    const [m2, rows2] = small();
    rows2[2].depth = 2; // a2 under a1
    const ops = diffRows(m2, rows2, newOpId);
    expect(ops).toMatchObject([{ kind: 'move', blockId: 'blk_a2', parentId: 'blk_a1' }]);
  });
  it('outdent of a last child → one move; a subtree dragged → one move', () => {
    const [m, rows] = small();
    rows[3].depth = 0; // a3 out, after a
    expect(diffRows(m, rows, newOpId)).toMatchObject([{ kind: 'move', blockId: 'blk_a3', parentId: null }]);
    const [m2, rows2] = small();
    const moved = [...rows2.slice(4, 5), ...rows2.slice(0, 4), ...rows2.slice(5)]; // b before a
    expect(kinds(diffRows(m2, moved, newOpId))).toEqual(['move']);
  });
  it('split → set_content + insert; merge → set_content + delete; checkbox → one set_props', () => {
    const [m, rows] = small();
    rows[4].content = 'bl';
    rows.splice(5, 0, { id: 'blk_new', depth: 0, content: 'k_b' });
    expect(kinds(diffRows(m, rows, newOpId))).toEqual(['set_content', 'insert']);
    const [m2, rows2] = small();
    rows2[4].content = 'blk_bblk_c';
    rows2.splice(5, 1);
    expect(kinds(diffRows(m2, rows2, newOpId))).toEqual(['set_content', 'delete']);
    const [m3, rows3] = small();
    rows3[1].checked = true;
    expect(diffRows(m3, rows3, newOpId)).toMatchObject([{ kind: 'set_props', blockId: 'blk_a1', props: { checked: true } }]);
  });
  it('deleting a subtree → one delete of its root; pasting many → inserts only', () => {
    const [m, rows] = small();
    expect(diffRows(m, rows.slice(4), newOpId)).toMatchObject([{ kind: 'delete', blockId: 'blk_a' }]);
    const [m2, rows2] = small();
    const pasted = Array.from({ length: 50 }, (_, k) => ({ id: `blk_p${k}`, depth: 1, content: `p${k}` }));
    rows2.splice(2, 0, ...pasted);
    const ops = diffRows(m2, rows2, newOpId);
    expect(ops.length).toBe(50);
    expect(new Set(kinds(ops))).toEqual(new Set(['insert']));
    expect(Math.max(...ops.map((o) => ('orderKey' in o ? o.orderKey.length : 0)))).toBeLessThan(10);
  });
  it('a depth more than one deeper than its predecessor is clamped', () => {
    const [m, rows] = small();
    rows.push({ id: 'blk_deep', depth: 7, content: 'deep' });
    const ops = diffRows(m, rows, newOpId);
    expect(ops).toMatchObject([{ kind: 'insert', blockId: 'blk_deep', parentId: 'blk_c' }]);
    expect([...clampDepths([{ id: 'x', depth: 3, content: '' }])]).toEqual([0]);
  });
  it('duplicate ids are refused', () => {
    const [m, rows] = small();
    rows.push({ ...rows[0] });
    expect(() => diffRows(m, rows, newOpId)).toThrow(/duplicate/);
  });
  it('longestIncreasing', () => {
    expect(longestIncreasing([])).toEqual([]);
    expect(longestIncreasing([3, 1, 2, 5, 4])).toEqual([1, 2, 4]);
  });
});
