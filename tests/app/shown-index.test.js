// @ts-check
// The outline's position index and row heights kept across splices (an Enter, a Tab, a paste)
// instead of rebuilt for every row: after every random splice they must answer exactly what a
// fresh index and fresh prefix sums of the new list answer.
import { describe, expect, it } from 'vitest';
import { ShownIndex, spliceBetween } from '../../static/app/editor/shown-index.js';
import { RowHeights, estimateHeight } from '../../static/app/editor/row-heights.js';

/** @typedef {import('../../static/engine/types.js').Row} Row */

/** A small deterministic generator (mulberry32). @param {number} seed */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let made = 0;
/** @param {string} [text] @returns {Row} */
function row(text = '') {
  made++;
  return /** @type {Row} */ ({
    id: `b${made}`, parentId: null, depth: 0, content: text || `row ${made} ${'x'.repeat(made % 200)}`, type: 'bullet', checked: false,
    collapsed: false, language: null, conflictOf: null, conflictAuthor: null, conflictResolved: false, version: 1, hasChildren: false,
  });
}

/**
 * One random edit of a list, as the editor makes them: rows inserted, removed, a stretch moved
 * elsewhere (Tab/Alt+arrows), or nothing changed in order (typing).
 * @param {Row[]} rows @param {() => number} r
 */
function edit(rows, r) {
  const next = rows.slice();
  const kind = r();
  const at = Math.floor(r() * (next.length + 1));
  if (kind < 0.35) next.splice(at, 0, ...Array.from({ length: 1 + Math.floor(r() * 4) }, () => row()));
  else if (kind < 0.6 && next.length > 0) next.splice(Math.min(at, next.length - 1), 1 + Math.floor(r() * 3));
  else if (kind < 0.85 && next.length > 2) {
    const from = Math.floor(r() * (next.length - 1));
    const moved = next.splice(from, 1 + Math.floor(r() * 3));
    next.splice(Math.floor(r() * (next.length + 1)), 0, ...moved);
  } else if (next.length > 0) next[Math.min(at, next.length - 1)] = { ...next[Math.min(at, next.length - 1)] }; // typed (a drawn row: measured)
  return next;
}

describe('ShownIndex', () => {
  it('answers every id with its position in the newest list after hundreds of random splices', () => {
    for (const seed of [1, 2, 3, 4]) {
      const r = rng(seed);
      let rows = Array.from({ length: 60 }, () => row());
      const index = new ShownIndex();
      index.reset(rows);
      /** @type {Row[]} */
      const gone = [];
      for (let step = 0; step < 400; step++) {
        const next = edit(rows, r);
        const d = spliceBetween(rows, next);
        if (!d.same) index.splice(next, d.at, d.removed, d.added);
        for (const x of rows) if (!next.includes(x) && !next.some((y) => y.id === x.id)) gone.push(x);
        rows = next;
        if (step % 37 === 0) index.rebuild();
        rows.forEach((x, i) => expect(index.get(x.id)).toBe(i));
        for (const x of gone.slice(-20)) expect(index.get(x.id)).toBeUndefined();
      }
    }
  });

  it('spliceBetween names the one stretch that differs', () => {
    const [a, b, c, d, e] = [row(), row(), row(), row(), row()];
    expect(spliceBetween([a, b, c], [a, b, c])).toEqual({ same: true, at: 3, removed: 0, added: 0 });
    expect(spliceBetween([a, b, c], [a, d, b, c])).toEqual({ same: false, at: 1, removed: 0, added: 1 });
    expect(spliceBetween([a, b, c, d, e], [a, d, b, c, e])).toEqual({ same: false, at: 1, removed: 3, added: 3 });
    expect(spliceBetween([a, b, c], [])).toEqual({ same: false, at: 0, removed: 3, added: 0 });
  });
});

describe('RowHeights across splices', () => {
  it('has the prefix sums a fresh computation over the new list has, measured heights kept', () => {
    for (const seed of [7, 8, 9]) {
      const r = rng(seed);
      let rows = Array.from({ length: 80 }, () => row());
      const heights = new RowHeights();
      /** @type {Map<string, number>} */
      const measured = new Map();
      heights.top(rows, 0);
      for (let step = 0; step < 300; step++) {
        const next = edit(rows, r);
        const d = spliceBetween(rows, next);
        if (d.same) heights.carryOver(rows, next);
        else heights.splice(rows, next, d.at, d.removed, d.added);
        rows = next;
        // some drawn rows measured, by position as the outline does
        for (let k = 0; k < 3 && rows.length; k++) {
          const i = Math.floor(r() * rows.length);
          const h = 20 + Math.floor(r() * 40);
          measured.set(rows[i].id, h);
          heights.record(rows[i].id, h, i);
        }
        if (step % 5 === 0) {
          let acc = 0;
          for (let i = 0; i < rows.length; i++) {
            expect(heights.top(rows, i)).toBe(acc);
            acc += measured.get(rows[i].id) ?? estimateHeight(rows[i]);
          }
          expect(heights.span(rows, 0, rows.length)).toBe(acc);
        }
      }
    }
  });
});
