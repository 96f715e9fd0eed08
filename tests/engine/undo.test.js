// @ts-check
// undo.js: inverses of every op kind, typing merge within 1 s, the 200-step limit, redo
// cleared by a new step, and steps skipped (never applied blindly) when another client
// changed, holds or removed the bullet.
import { describe, expect, it } from 'vitest';
import { DocModel } from '../../static/engine/model.js';
import { inverseOps, inverseOfOps, UndoHistory } from '../../static/engine/undo.js';
import { diffRows } from '../../static/engine/diff.js';
import { mulberry32 } from './prng.js';
import { flat, randomEdit, randomModel } from './outline-edits.js';

/** @typedef {import('../../static/engine/types.js').Op} Op */

const ME = { clientId: 'cl_me', userId: 'usr_me', name: 'Me', now: 10, heldByOthers: () => false, leasesEnabled: true };
const THEM = { ...ME, clientId: 'cl_them', userId: 'usr_them', name: 'Them' };
let n = 0;
const newOpId = () => `op_${++n}`;
const free = () => false;

/** a (a0) → a1 (a0), a2 (a1); b (a1) */
function base() {
  const m = DocModel.empty('doc_u');
  m.title = 'Title';
  for (const [id, parentId, orderKey] of [['blk_a', null, 'a0'], ['blk_a1', 'blk_a', 'a0'], ['blk_a2', 'blk_a', 'a1'], ['blk_b', null, 'a1']]) {
    m.applyOp({ opId: newOpId(), kind: 'insert', blockId: id, parentId, orderKey, content: id }, ME);
  }
  return m;
}

// Time moves on between ops, as it does for real (a delete's deletedAt tells deletes apart).
let clock = 100;
const me = () => ({ ...ME, now: ++clock });

/** Does what the engine does: records the step, then applies the forward ops to the view. */
function act(/** @type {DocModel} */ m, /** @type {UndoHistory} */ h, /** @type {string} */ kind, /** @type {Op[]} */ forward, at = 0) {
  h.record({ kind, forward, inverse: inverseOfOps(m, forward, newOpId), at });
  for (const op of forward) m.applyOp(op, me());
}

/** Applies ops as the undo/redo would send them; every one must be applied by the rules. */
function send(/** @type {DocModel} */ m, /** @type {Op[]} */ ops) {
  for (const op of ops) expect(m.applyOp(op, me()).result.status, JSON.stringify(op)).toBe('applied');
}

const shape = (/** @type {DocModel} */ m) => m.rows().map((r) => `${'.'.repeat(r.depth)}${r.id}:${r.content}`).join(' ');
const stateOf = (/** @type {DocModel} */ m) => JSON.stringify([shape(m), m.title, m.rows().map((r) => [r.checked, r.type])]);

describe('inverseOps', () => {
  it('maps each kind to its inverse', () => {
    const m = base();
    expect(inverseOps(m, { opId: 'x', kind: 'insert', blockId: 'blk_n', parentId: null, orderKey: 'a5', content: '' }, newOpId)).toMatchObject([{ kind: 'delete', blockId: 'blk_n' }]);
    expect(inverseOps(m, { opId: 'x', kind: 'delete', blockId: 'blk_a' }, newOpId)).toMatchObject([{ kind: 'restore', blockId: 'blk_a' }]);
    expect(inverseOps(m, { opId: 'x', kind: 'set_content', blockId: 'blk_b', content: 'new', baseVersion: 1 }, newOpId)).toMatchObject([{ kind: 'set_content', blockId: 'blk_b', content: 'blk_b' }]);
    expect(inverseOps(m, { opId: 'x', kind: 'move', blockId: 'blk_a2', parentId: null, orderKey: 'a5' }, newOpId)).toMatchObject([{ kind: 'move', blockId: 'blk_a2', parentId: 'blk_a', orderKey: 'a1' }]);
    expect(inverseOps(m, { opId: 'x', kind: 'set_props', blockId: 'blk_b', props: { checked: true, type: 'todo', collapsed: false } }, newOpId)).toMatchObject([{ kind: 'set_props', props: { checked: false, type: 'bullet' } }]);
    expect(inverseOps(m, { opId: 'x', kind: 'set_title', title: 'New', baseVersion: 1 }, newOpId)).toMatchObject([{ kind: 'set_title', title: 'Title' }]);
    // Ops that change nothing have no inverse.
    expect(inverseOps(m, { opId: 'x', kind: 'set_content', blockId: 'blk_b', content: 'blk_b', baseVersion: 1 }, newOpId)).toEqual([]);
    expect(inverseOps(m, { opId: 'x', kind: 'insert', blockId: 'blk_b', parentId: null, orderKey: 'a5', content: '' }, newOpId)).toEqual([]);
  });
});

describe('UndoHistory: every step kind undoes and redoes exactly', () => {
  /** @type {[string, Op[]][]} */
  const steps = [
    ['insert', [{ opId: 'f1', kind: 'insert', blockId: 'blk_n', parentId: 'blk_a', orderKey: 'a0V', content: 'new' }]],
    ['delete', [{ opId: 'f2', kind: 'delete', blockId: 'blk_a' }]],
    ['typing', [{ opId: 'f3', kind: 'set_content', blockId: 'blk_a1', content: 'edited', baseVersion: 1 }]],
    ['indent', [{ opId: 'f4', kind: 'move', blockId: 'blk_b', parentId: 'blk_a', orderKey: 'a2' }]],
    ['check', [{ opId: 'f5', kind: 'set_props', blockId: 'blk_a2', props: { type: 'todo', checked: true } }]],
    ['typing', [{ opId: 'f6', kind: 'set_title', title: 'Renamed', baseVersion: 1 }]],
    ['split', [{ opId: 'f7', kind: 'set_content', blockId: 'blk_b', content: 'blk', baseVersion: 1 }, { opId: 'f8', kind: 'insert', blockId: 'blk_s', parentId: null, orderKey: 'a2', content: '_b' }]],
  ];
  for (const [kind, forward] of steps) {
    it(`${kind}: ${forward.map((o) => o.kind).join('+')}`, () => {
      const m = base();
      const h = new UndoHistory();
      const before = stateOf(m);
      act(m, h, kind, forward);
      const after = stateOf(m);
      expect(after).not.toBe(before);
      const u = h.undo(m, free, newOpId);
      expect(u.skipped).toEqual([]);
      expect(u.ops.length).toBeGreaterThan(0);
      expect(new Set(u.ops.map((o) => o.opId)).size).toBe(u.ops.length);
      send(m, u.ops);
      expect(stateOf(m)).toBe(before);
      expect(h.canUndo).toBe(false);
      expect(h.canRedo).toBe(true);
      const r = h.redo(m, free, newOpId);
      expect(r.skipped).toEqual([]);
      send(m, r.ops);
      expect(stateOf(m)).toBe(after);
      // And once more, after a redo.
      send(m, h.undo(m, free, newOpId).ops);
      expect(stateOf(m)).toBe(before);
    });
  }

  it('undo sends fresh opIds and the current version as baseVersion', () => {
    const m = base();
    const h = new UndoHistory();
    act(m, h, 'typing', [{ opId: 'f', kind: 'set_content', blockId: 'blk_b', content: 'x', baseVersion: 1 }]);
    const { ops } = h.undo(m, free, newOpId);
    expect(ops).toMatchObject([{ kind: 'set_content', blockId: 'blk_b', content: 'blk_b', baseVersion: 2 }]);
    expect(ops[0].opId).not.toBe('f');
  });
});

describe('UndoHistory: steps', () => {
  it('recordOps takes the inverses in undo order: insert a parent, move a bullet under it', () => {
    const m = base();
    const h = new UndoHistory();
    const before = stateOf(m);
    const forward = /** @type {Op[]} */ ([
      { opId: newOpId(), kind: 'insert', blockId: 'blk_p', parentId: null, orderKey: 'a2', content: 'p' },
      { opId: newOpId(), kind: 'move', blockId: 'blk_b', parentId: 'blk_p', orderKey: 'a0' },
    ]);
    h.recordOps(m, 'indent', forward, 0, newOpId);
    for (const op of forward) m.applyOp(op, me());
    const u = h.undo(m, free, newOpId);
    expect(u.ops.map((o) => o.kind)).toEqual(['move', 'delete']);
    send(m, u.ops);
    expect(stateOf(m)).toBe(before);
  });

  it('typing in one bullet is one step until a 1 s pause', () => {
    const m = base();
    const h = new UndoHistory();
    const type = (/** @type {string} */ text, /** @type {number} */ at) => act(m, h, 'typing', [{ opId: newOpId(), kind: 'set_content', blockId: 'blk_b', content: text, baseVersion: /** @type {any} */ (m.get('blk_b')).version }], at);
    type('h', 0); type('he', 300); type('hel', 900); type('hell', 1800); // 900 ms later: still one step
    type('hello', 2900); // 1100 ms pause: new step
    send(m, h.undo(m, free, newOpId).ops);
    expect(m.get('blk_b')?.content).toBe('hell');
    send(m, h.undo(m, free, newOpId).ops);
    expect(m.get('blk_b')?.content).toBe('blk_b');
    expect(h.canUndo).toBe(false);
  });

  it('typing in another bullet, or another kind in between, starts a new step', () => {
    const m = base();
    const h = new UndoHistory();
    act(m, h, 'typing', [{ opId: newOpId(), kind: 'set_content', blockId: 'blk_b', content: 'x', baseVersion: 1 }], 0);
    act(m, h, 'typing', [{ opId: newOpId(), kind: 'set_content', blockId: 'blk_a', content: 'y', baseVersion: 1 }], 100);
    act(m, h, 'check', [{ opId: newOpId(), kind: 'set_props', blockId: 'blk_a', props: { checked: true } }], 200);
    act(m, h, 'typing', [{ opId: newOpId(), kind: 'set_content', blockId: 'blk_a', content: 'yz', baseVersion: 2 }], 300);
    let count = 0;
    while (h.canUndo) {
      send(m, h.undo(m, free, newOpId).ops);
      count++;
    }
    expect(count).toBe(4);
    expect(shape(m)).toBe(shape(base()));
  });

  it('keeps at most 200 steps (the oldest are forgotten)', () => {
    const m = base();
    const h = new UndoHistory();
    for (let i = 1; i <= 205; i++) {
      act(m, h, 'check', [{ opId: newOpId(), kind: 'set_props', blockId: 'blk_b', props: { checked: i % 2 === 1 } }], i * 5000);
    }
    let count = 0;
    while (h.canUndo) {
      const u = h.undo(m, free, newOpId);
      expect(u.skipped).toEqual([]);
      send(m, u.ops);
      count++;
    }
    expect(count).toBe(200);
    expect(m.get('blk_b')?.checked).toBe(true); // state after step 5 (odd → checked)
    expect(new UndoHistory({ limit: 3 }).limit).toBe(3);
  });

  it('a new step clears redo', () => {
    const m = base();
    const h = new UndoHistory();
    act(m, h, 'delete', [{ opId: newOpId(), kind: 'delete', blockId: 'blk_b' }]);
    send(m, h.undo(m, free, newOpId).ops);
    expect(h.canRedo).toBe(true);
    act(m, h, 'check', [{ opId: newOpId(), kind: 'set_props', blockId: 'blk_a', props: { checked: true } }], 5000);
    expect(h.canRedo).toBe(false);
    expect(h.redo(m, free, newOpId)).toEqual({ ops: [], skipped: [] });
  });
});

describe('UndoHistory: never blindly over someone else', () => {
  it('skips with "changed" when another client edited the bullet since', () => {
    const m = base();
    const h = new UndoHistory();
    act(m, h, 'typing', [{ opId: newOpId(), kind: 'set_content', blockId: 'blk_b', content: 'mine', baseVersion: 1 }]);
    m.applyOp({ opId: newOpId(), kind: 'set_content', blockId: 'blk_b', content: 'theirs', baseVersion: 2 }, THEM);
    expect(h.undo(m, free, newOpId)).toEqual({ ops: [], skipped: [{ blockId: 'blk_b', reason: 'changed' }] });
    expect(h.canUndo).toBe(false); // dropped
    expect(h.canRedo).toBe(false);
  });

  it('"changed" also when only the version moved (same text typed back by someone else)', () => {
    const m = base();
    const h = new UndoHistory();
    act(m, h, 'typing', [{ opId: newOpId(), kind: 'set_content', blockId: 'blk_b', content: 'mine', baseVersion: 1 }]);
    m.applyOp({ opId: newOpId(), kind: 'set_content', blockId: 'blk_b', content: 'x', baseVersion: 2 }, THEM);
    m.applyOp({ opId: newOpId(), kind: 'set_content', blockId: 'blk_b', content: 'mine', baseVersion: 3 }, THEM);
    expect(h.undo(m, free, newOpId).skipped).toEqual([{ blockId: 'blk_b', reason: 'changed' }]);
  });

  it('own later steps on the same bullet do not count as someone else\'s change', () => {
    const m = base();
    const h = new UndoHistory();
    act(m, h, 'typing', [{ opId: newOpId(), kind: 'set_content', blockId: 'blk_b', content: 'one', baseVersion: 1 }], 0);
    act(m, h, 'typing', [{ opId: newOpId(), kind: 'set_content', blockId: 'blk_b', content: 'two', baseVersion: 2 }], 5000);
    send(m, h.undo(m, free, newOpId).ops);
    const second = h.undo(m, free, newOpId);
    expect(second.skipped).toEqual([]);
    send(m, second.ops);
    expect(m.get('blk_b')?.content).toBe('blk_b');
  });

  it('skips with "changed" when someone moved the bullet we moved, or changed the props we set', () => {
    const m = base();
    const h = new UndoHistory();
    act(m, h, 'indent', [{ opId: newOpId(), kind: 'move', blockId: 'blk_b', parentId: 'blk_a', orderKey: 'a2' }]);
    m.applyOp({ opId: newOpId(), kind: 'move', blockId: 'blk_b', parentId: null, orderKey: 'a9' }, THEM);
    expect(h.undo(m, free, newOpId).skipped).toEqual([{ blockId: 'blk_b', reason: 'changed' }]);
    act(m, h, 'check', [{ opId: newOpId(), kind: 'set_props', blockId: 'blk_a', props: { checked: true } }]);
    m.applyOp({ opId: newOpId(), kind: 'set_props', blockId: 'blk_a', props: { checked: false } }, THEM);
    expect(h.undo(m, free, newOpId).skipped).toEqual([{ blockId: 'blk_a', reason: 'changed' }]);
  });

  it('skips with "locked" while another client holds the bullet (or one inside a subtree to delete)', () => {
    const m = base();
    const h = new UndoHistory();
    act(m, h, 'typing', [{ opId: newOpId(), kind: 'set_content', blockId: 'blk_b', content: 'mine', baseVersion: 1 }]);
    expect(h.undo(m, (id) => id === 'blk_b', newOpId)).toEqual({ ops: [], skipped: [{ blockId: 'blk_b', reason: 'locked' }] });
    act(m, h, 'insert', [{ opId: newOpId(), kind: 'insert', blockId: 'blk_n', parentId: null, orderKey: 'a5', content: 'n' }]);
    m.applyOp({ opId: newOpId(), kind: 'insert', blockId: 'blk_nc', parentId: 'blk_n', orderKey: 'a0', content: 'their child' }, THEM);
    expect(h.undo(m, (id) => id === 'blk_nc', newOpId).skipped).toEqual([{ blockId: 'blk_nc', reason: 'locked' }]);
  });

  it('skips with "gone" when the bullet was purged or someone else deleted it', () => {
    const m = base();
    const h = new UndoHistory();
    act(m, h, 'delete', [{ opId: newOpId(), kind: 'delete', blockId: 'blk_b' }]);
    m.applyEntry({ seq: 99, opId: 'op_purge', kind: 'purge', clientId: '', userId: '', at: 0, effects: [{ e: 'purge', blockIds: ['blk_b'] }] });
    expect(h.undo(m, free, newOpId).skipped).toEqual([{ blockId: 'blk_b', reason: 'gone' }]);
    act(m, h, 'typing', [{ opId: newOpId(), kind: 'set_content', blockId: 'blk_a2', content: 'mine', baseVersion: 1 }]);
    m.applyOp({ opId: newOpId(), kind: 'delete', blockId: 'blk_a' }, THEM);
    expect(h.undo(m, free, newOpId).skipped).toEqual([{ blockId: 'blk_a2', reason: 'gone' }]);
  });

  it('a skipped step is dropped and the next undo goes on with the one before', () => {
    const m = base();
    const h = new UndoHistory();
    act(m, h, 'check', [{ opId: newOpId(), kind: 'set_props', blockId: 'blk_a', props: { checked: true } }], 0);
    act(m, h, 'typing', [{ opId: newOpId(), kind: 'set_content', blockId: 'blk_b', content: 'mine', baseVersion: 1 }], 5000);
    m.applyOp({ opId: newOpId(), kind: 'set_content', blockId: 'blk_b', content: 'theirs', baseVersion: 2 }, THEM);
    expect(h.undo(m, free, newOpId).skipped).toHaveLength(1);
    const next = h.undo(m, free, newOpId);
    expect(next.ops).toMatchObject([{ kind: 'set_props', blockId: 'blk_a', props: { checked: false } }]);
    send(m, next.ops);
    expect(m.get('blk_b')?.content).toBe('theirs'); // their text untouched
  });

  it('redo is checked the same way', () => {
    const m = base();
    const h = new UndoHistory();
    act(m, h, 'typing', [{ opId: newOpId(), kind: 'set_content', blockId: 'blk_b', content: 'mine', baseVersion: 1 }]);
    send(m, h.undo(m, free, newOpId).ops);
    m.applyOp({ opId: newOpId(), kind: 'set_content', blockId: 'blk_b', content: 'theirs', baseVersion: 3 }, THEM);
    expect(h.redo(m, free, newOpId).skipped).toEqual([{ blockId: 'blk_b', reason: 'changed' }]);
    expect(m.get('blk_b')?.content).toBe('theirs');
  });
});

describe('UndoHistory with diffRows: random edit sessions undo and redo exactly', () => {
  it('20 seeds × 25 random outliner edits: undo all → the original, redo all → the final state', () => {
    const full = (/** @type {DocModel} */ m) => JSON.stringify(flat(m));
    for (let seed = 1; seed <= 20; seed++) {
      const rng = mulberry32(1000 + seed);
      const m = randomModel(rng, 30, newOpId);
      const h = new UndoHistory();
      const original = full(m);
      // Not 'revive': a deleted bullet re-added by the diff (restore + move) cannot be undone
      // back into its old deleted branch, since the rules re-delete it with a new deletedAt.
      const st = { n: 0, graveyard: [], exclude: ['revive'] };
      for (let step = 0; step < 25; step++) {
        const [, next] = randomEdit(rng, flat(m), st);
        const ops = diffRows(m, next, newOpId);
        act(m, h, 'edit', ops, step * 5000);
      }
      const final = full(m);
      let undone = 0;
      while (h.canUndo) {
        const u = h.undo(m, free, newOpId);
        expect(u.skipped, `seed ${seed}`).toEqual([]);
        send(m, u.ops);
        undone++;
      }
      expect(JSON.parse(full(m)), `seed ${seed}: undo all`).toEqual(JSON.parse(original));
      while (h.canRedo) {
        const r = h.redo(m, free, newOpId);
        expect(r.skipped, `seed ${seed}`).toEqual([]);
        send(m, r.ops);
      }
      expect(full(m), `seed ${seed}: redo all`).toBe(final);
      expect(undone).toBeGreaterThan(10);
    }
  });
});
