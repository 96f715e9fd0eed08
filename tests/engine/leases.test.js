// @ts-check
// leases.js: claims and their one timer (fake timers; the engine's use is in engine.test.js).
import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { LeaseHolds, LEASE_KEEP_MS, FOCUS_IDLE_MS, MAX_HOLD, MAX_CLAIMS_PER_EDIT } from '../../static/engine/leases.js';

beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }));
afterEach(() => vi.useRealTimers());

/** @param {{running?: boolean}} [o] */
function make(o = {}) {
  const ranOut = { n: 0 };
  const l = new LeaseHolds(() => Date.now(), () => ranOut.n++, () => o.running ?? true);
  return { l, ranOut };
}

describe('LeaseHolds', () => {
  it('focus holds the bullet; the one left keeps its claim 20 s, then the timer drops it', () => {
    const { l, ranOut } = make();
    expect(l.focus('blk_a')).toBe(true);
    expect(l.focus('blk_a')).toBe(false); // already held
    expect(l.focus('blk_b')).toBe(true);
    l.arm();
    expect(l.list().sort()).toEqual(['blk_a', 'blk_b']);
    vi.advanceTimersByTime(LEASE_KEEP_MS - 1);
    expect(l.list().sort()).toEqual(['blk_a', 'blk_b']);
    vi.advanceTimersByTime(1);
    expect(ranOut.n).toBe(1);
    expect(l.list()).toEqual(['blk_b']);
    // The focused one goes after 60 s without input.
    vi.advanceTimersByTime(FOCUS_IDLE_MS);
    expect(ranOut.n).toBe(2);
    expect(l.size).toBe(0);
  });

  it('typing claims the bullet (focused: until idle; others: 20 s); deletes and moves claim nothing', () => {
    const { l } = make();
    l.focus('blk_f');
    vi.advanceTimersByTime(FOCUS_IDLE_MS);
    expect(l.list()).toEqual([]);
    const added = l.noteInput([
      { opId: 'o1', kind: 'set_content', blockId: 'blk_x', content: 'x', baseVersion: 1 },
      { opId: 'o2', kind: 'delete', blockId: 'blk_d' },
      { opId: 'o3', kind: 'move', blockId: 'blk_m', parentId: null, orderKey: 'a0' },
      { opId: 'o4', kind: 'set_title', title: 't', baseVersion: 1 },
    ], () => true);
    expect(added).toBe(true);
    // The idled-out focused bullet is wanted again on input.
    expect(l.list().sort()).toEqual(['blk_f', 'blk_x', 'title']);
    expect(l.holds.get('blk_f')).toBe(Infinity);
    expect(l.noteInput([{ opId: 'o5', kind: 'set_content', blockId: 'blk_x', content: 'y', baseVersion: 1 }], () => true)).toBe(false);
  });

  it('a claim other than the focused one ends as soon as nothing of ours on it waits for the server', () => {
    const waiting = new Set(['blk_a']);
    const l = new LeaseHolds(() => Date.now(), () => {}, () => true, () => waiting);
    l.focus('blk_a');
    l.focus('blk_b'); // blk_a left, its text still on the way
    expect(l.list().sort()).toEqual(['blk_a', 'blk_b']);
    waiting.delete('blk_a'); // acknowledged
    expect(l.list()).toEqual(['blk_b']);
    // the focused bullet stays held whatever waits
    expect(l.holds.get('blk_b')).toBe(Infinity);
    // a claim by input without the focus: the same rule
    l.noteInput([{ opId: 'o1', kind: 'insert', blockId: 'blk_new', parentId: null, orderKey: 'a1', content: '' }], () => true);
    expect(l.list()).toEqual(['blk_b']);
    waiting.add('blk_new2');
    l.noteInput([{ opId: 'o2', kind: 'insert', blockId: 'blk_new2', parentId: null, orderKey: 'a2', content: '' }], () => true);
    expect(l.list().sort()).toEqual(['blk_b', 'blk_new2']);
    vi.advanceTimersByTime(LEASE_KEEP_MS); // and never longer than 20 s
    expect(l.list()).toEqual(['blk_b']);
  });

  it('a paste or an import of many bullets claims a few of them; the hold list never passes the server\'s limit', () => {
    const l = new LeaseHolds(() => Date.now(), () => {}, () => true, () => new Set(l.holds.keys()));
    const inserts = (/** @type {number} */ n, /** @type {string} */ p) => Array.from({ length: n }, (_, k) => ({ opId: `o${p}${k}`, kind: /** @type {const} */ ('insert'), blockId: `blk_${p}${k}`, parentId: null, orderKey: 'a1', content: '' }));
    l.focus('blk_focus');
    l.noteInput(inserts(5_000, 'a'), () => true);
    expect(l.list().length).toBe(1 + MAX_CLAIMS_PER_EDIT);
    for (let k = 0; k < 100; k++) l.noteInput(inserts(20, `b${k}_`), () => true);
    const hold = l.list();
    expect(hold.length).toBe(MAX_HOLD);
    expect(hold[0]).toBe('blk_focus');
    expect(hold).toContain('blk_b99_19'); // the newest kept
  });

  it('arms no timer once the engine is not running', () => {
    const { l, ranOut } = make({ running: false });
    l.focus('blk_a');
    l.focus('blk_b');
    l.arm();
    vi.advanceTimersByTime(FOCUS_IDLE_MS * 2);
    expect(ranOut.n).toBe(0);
    expect(l.timer).toBe(null);
  });
});
