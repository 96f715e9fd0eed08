// @ts-check
import { describe, expect, it } from 'vitest';
import {
  blockRange,
  deleteMany,
  detectShortcut,
  foldAll,
  indentMany,
  insertItemsAfter,
  moveMany,
  outdentMany,
  toggleTodoMany,
  dropRow,
  indent,
  mergeBackward,
  mergeForward,
  moveDown,
  moveUp,
  outdent,
  parsePaste,
  pasteText,
  prevVisibleIndex,
  setCollapsed,
  splitRow,
  subtreeEnd,
  toggleTodo,
  visibleRows,
} from '../../static/app/editor/outline-ops.js';

/**
 * Builds rows from an indented sketch: two spaces per level, the id is the text, a trailing
 * `+` marks a collapsed row.
 * @param {string} sketch
 */
function outline(sketch) {
  return sketch
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      const depth = (l.length - l.trimStart().length) / 2;
      let content = l.trim();
      const collapsed = content.endsWith('+');
      if (collapsed) content = content.slice(0, -1);
      return { id: content || `empty${depth}`, depth, content: content.startsWith('empty') ? '' : content, type: /** @type {import('../../static/engine/types.js').BlockType} */ ('bullet'), checked: false, collapsed, language: null, conflictResolved: false };
    });
}

/** @param {{depth: number, content: string, collapsed?: boolean}[]} rows */
function sketch(rows) {
  return rows.map((r) => '  '.repeat(r.depth) + (r.content || '∅') + (r.collapsed ? '+' : '')).join('\n');
}

/** @param {any} r */
function ok(r) {
  expect(r).not.toBeNull();
  expect(r.ok).toBe(true);
  return r;
}

let n = 0;
const newId = () => `new${++n}`;
/** @param {string[]} ids */
const locks = (...ids) => (/** @type {string} */ id) => (ids.includes(id) ? 'Alice' : null);

describe('visibility', () => {
  it('hides children of collapsed rows', () => {
    const rows = outline('a+\n  b\n    c\nd\n  e');
    expect(visibleRows(rows).map((r) => r.id)).toEqual(['a', 'd', 'e']);
    expect(rows[prevVisibleIndex(rows, 3)].id).toBe('a');
    expect(rows[prevVisibleIndex(rows, 4)].id).toBe('d');
  });
});

describe('splitRow (Enter)', () => {
  it('splits at the caret into a new bullet below', () => {
    const r = ok(splitRow(outline('hello world\nb'), 'hello world', 5, { newId }));
    expect(sketch(r.rows)).toBe('hello\n world\nb');
    expect(r.step).toBe('split');
    expect(r.focus).toEqual({ id: r.rows[1].id, offset: 0 });
  });
  it('at the end of an expanded parent creates its first child', () => {
    const r = ok(splitRow(outline('a\n  b\nc'), 'a', 1, { newId }));
    expect(sketch(r.rows)).toBe('a\n  ∅\n  b\nc');
    expect(r.step).toBe('insert');
  });
  it('at the end of a collapsed parent creates a sibling after its children', () => {
    const r = ok(splitRow(outline('a+\n  b\nc'), 'a', 1, { newId }));
    expect(sketch(r.rows)).toBe('a+\n  b\n∅\nc');
  });
  it('at the start of a non-empty bullet inserts an empty one above and keeps the caret', () => {
    const r = ok(splitRow(outline('a\nb'), 'b', 0, { newId }));
    expect(sketch(r.rows)).toBe('a\n∅\nb');
    expect(r.focus).toEqual({ id: 'b', offset: 0 });
  });
  it('keeps todo type, resets headings', () => {
    const rows = outline('a\nb');
    rows[0].type = 'todo';
    rows[1].type = 'h1';
    expect(ok(splitRow(rows, 'a', 1, { newId })).rows[1].type).toBe('todo');
    expect(ok(splitRow(rows, 'b', 1, { newId })).rows[2].type).toBe('bullet');
  });
  it('in a locked bullet only adds an empty bullet after it', () => {
    const r = ok(splitRow(outline('abc\n  kid\nz'), 'abc', 1, { newId, lockedBy: locks('abc') }));
    expect(sketch(r.rows)).toBe('abc\n  kid\n∅\nz');
  });
  it('passes unchanged rows through by reference', () => {
    const rows = outline('a\nb\nc');
    const r = ok(splitRow(rows, 'b', 1, { newId }));
    expect(r.rows[0]).toBe(rows[0]);
    expect(r.rows[3]).toBe(rows[2]);
  });
});

describe('mergeBackward (Backspace at start)', () => {
  it('joins the text to the bullet above', () => {
    const r = ok(mergeBackward(outline('ab\ncd'), 'cd'));
    expect(sketch(r.rows)).toBe('abcd');
    expect(r.focus).toEqual({ id: 'ab', offset: 2 });
    expect(r.step).toBe('merge');
  });
  it('removes an empty bullet', () => {
    const r = ok(mergeBackward(outline('ab\nempty'), 'empty'));
    expect(sketch(r.rows)).toBe('ab');
    expect(r.step).toBe('delete');
    expect(r.focus).toEqual({ id: 'ab', offset: 2 });
  });
  it('merging a first child into its parent lifts its children one level', () => {
    const r = ok(mergeBackward(outline('p\n  x\n    y\n  z'), 'x'));
    expect(sketch(r.rows)).toBe('px\n  y\n  z');
  });
  it('merges into the collapsed bullet above, not its hidden children', () => {
    const r = ok(mergeBackward(outline('a+\n  h\nb'), 'b'));
    expect(sketch(r.rows)).toBe('ab+\n  h');
  });
  it('removes an empty childless bullet above instead, keeping this one', () => {
    const r = ok(mergeBackward(outline('a\nempty\nb'), 'b'));
    expect(sketch(r.rows)).toBe('a\nb');
    expect(r.focus).toEqual({ id: 'b', offset: 0 });
  });
  it('turns a typed bullet back into a plain one first', () => {
    const rows = outline('a\nb');
    rows[1].type = 'h2';
    const r = ok(mergeBackward(rows, 'b'));
    expect(r.rows[1].type).toBe('bullet');
    expect(r.step).toBe('props');
  });
  it('does nothing on the first bullet', () => {
    expect(mergeBackward(outline('a\nb'), 'a')).toBeNull();
  });
  it('is refused when either bullet is held by someone else', () => {
    const r = mergeBackward(outline('a\nb'), 'b', { lockedBy: locks('a') });
    expect(r).toMatchObject({ ok: false, reason: 'locked', blockId: 'a', heldBy: 'Alice' });
    expect(mergeBackward(outline('a\nb'), 'b', { lockedBy: locks('b') })).toMatchObject({ ok: false });
  });
});

describe('mergeForward (Delete at end)', () => {
  it('pulls the next bullet in', () => {
    const r = ok(mergeForward(outline('ab\ncd'), 'ab'));
    expect(sketch(r.rows)).toBe('abcd');
    expect(r.focus).toEqual({ id: 'ab', offset: 2 });
  });
  it('does not reset the type of the next bullet', () => {
    const rows = outline('ab\ncd');
    rows[1].type = 'todo';
    expect(sketch(ok(mergeForward(rows, 'ab')).rows)).toBe('abcd');
  });
});

describe('indent / outdent', () => {
  it('Tab makes the bullet and its children the last child of the previous sibling', () => {
    const r = ok(indent(outline('a\n  a1\nb\n  b1\nc'), 'b'));
    expect(sketch(r.rows)).toBe('a\n  a1\n  b\n    b1\nc');
  });
  it('Tab into a collapsed sibling expands it', () => {
    const r = ok(indent(outline('a+\n  a1\nb'), 'b'));
    expect(sketch(r.rows)).toBe('a\n  a1\n  b');
  });
  it('Tab on a first child does nothing', () => {
    expect(indent(outline('a\n  b'), 'b')).toBeNull();
    expect(indent(outline('a'), 'a')).toBeNull();
  });
  it('Shift+Tab moves after the parent, later siblings stay', () => {
    const r = ok(outdent(outline('p\n  a\n  x\n    x1\n  b\nq'), 'x'));
    expect(sketch(r.rows)).toBe('p\n  a\n  b\nx\n  x1\nq');
  });
  it('Shift+Tab at the top level does nothing', () => {
    expect(outdent(outline('a'), 'a')).toBeNull();
  });
  it('is refused on a locked bullet', () => {
    expect(indent(outline('a\nb'), 'b', { lockedBy: locks('b') })).toMatchObject({ ok: false, reason: 'locked' });
    expect(outdent(outline('a\n  b'), 'b', { lockedBy: locks('b') })).toMatchObject({ ok: false });
  });
});

describe('moveUp / moveDown', () => {
  it('swaps with siblings, children travel along', () => {
    const rows = outline('a\n  a1\nb\n  b1\nc');
    expect(sketch(ok(moveUp(rows, 'b')).rows)).toBe('b\n  b1\na\n  a1\nc');
    expect(sketch(ok(moveDown(rows, 'a')).rows)).toBe('b\n  b1\na\n  a1\nc');
    expect(sketch(ok(moveDown(rows, 'b')).rows)).toBe('a\n  a1\nc\nb\n  b1');
  });
  it('crosses into the neighbouring parent at the edges', () => {
    const rows = outline('a\n  a1\nb\n  b1\n  b2');
    expect(sketch(ok(moveUp(rows, 'b1')).rows)).toBe('a\n  a1\n  b1\nb\n  b2');
    expect(sketch(ok(moveDown(rows, 'a1')).rows)).toBe('a\nb\n  a1\n  b1\n  b2');
  });
  it('stops at the very top and bottom', () => {
    const rows = outline('a\nb');
    expect(moveUp(rows, 'a')).toBeNull();
    expect(moveDown(rows, 'b')).toBeNull();
  });
});

describe('todo, collapse', () => {
  it('Ctrl+Enter cycles bullet → todo → done → bullet', () => {
    let rows = outline('a');
    rows = ok(toggleTodo(rows, 'a')).rows;
    expect(rows[0]).toMatchObject({ type: 'todo', checked: false });
    const r = ok(toggleTodo(rows, 'a'));
    expect(r.step).toBe('check');
    expect(r.rows[0]).toMatchObject({ type: 'todo', checked: true });
    expect(ok(toggleTodo(r.rows, 'a')).rows[0]).toMatchObject({ type: 'bullet', checked: false });
  });
  it('collapses only rows with children', () => {
    expect(setCollapsed(outline('a\nb'), 'a', true)).toBeNull();
    expect(ok(setCollapsed(outline('a\n  b'), 'a', true)).rows[0].collapsed).toBe(true);
  });
});

describe('dropRow (drag and drop)', () => {
  const rows = outline('a\n  a1\nb\nc\n  c1');
  it('before, after and into', () => {
    expect(sketch(ok(dropRow(rows, 'c', 'a', 'before')).rows)).toBe('c\n  c1\na\n  a1\nb');
    expect(sketch(ok(dropRow(rows, 'c', 'a', 'after')).rows)).toBe('a\n  a1\nc\n  c1\nb');
    expect(sketch(ok(dropRow(rows, 'c', 'b', 'into')).rows)).toBe('a\n  a1\nb\n  c\n    c1');
    expect(sketch(ok(dropRow(rows, 'a1', 'c1', 'after')).rows)).toBe('a\nb\nc\n  c1\n  a1');
  });
  it('never into its own subtree, nothing for a no-op', () => {
    expect(dropRow(rows, 'a', 'a1', 'into')).toBeNull();
    expect(dropRow(rows, 'b', 'a', 'after')).toBeNull();
  });
  it('refuses a bullet someone holds', () => {
    expect(dropRow(rows, 'b', 'a', 'before', { lockedBy: locks('b') })).toMatchObject({ ok: false });
  });
});

describe('markdown shortcuts', () => {
  it('recognises line-start markers', () => {
    expect(detectShortcut('[] x', 'bullet')).toEqual({ patch: { type: 'todo', checked: false }, strip: 3 });
    expect(detectShortcut('[ ] ', 'bullet')?.strip).toBe(4);
    expect(detectShortcut('## a', 'bullet')?.patch.type).toBe('h2');
    expect(detectShortcut('> a', 'bullet')?.patch.type).toBe('quote');
    // A code fence takes its space with it, and a language written after it.
    expect(detectShortcut('```', 'bullet')).toBeNull();
    expect(detectShortcut('``` ', 'bullet')).toEqual({ patch: { type: 'code', checked: false, language: null }, strip: 4 });
    expect(detectShortcut('```python print(1)', 'bullet')).toEqual({ patch: { type: 'code', checked: false, language: 'python' }, strip: 10 });
    expect(detectShortcut('#tag', 'bullet')).toBeNull();
    expect(detectShortcut('# x', 'code')).toBeNull();
  });
});

describe('paste', () => {
  it('keeps indentation from tabs, spaces and list markers', () => {
    expect(parsePaste('- a\n  - b\n    - c\n- d')).toEqual([
      { depth: 0, content: 'a', type: 'bullet', checked: false },
      { depth: 1, content: 'b', type: 'bullet', checked: false },
      { depth: 2, content: 'c', type: 'bullet', checked: false },
      { depth: 0, content: 'd', type: 'bullet', checked: false },
    ]);
    expect(parsePaste('a\n\tb\n\t\tc').map((l) => l.depth)).toEqual([0, 1, 2]);
    expect(parsePaste('a\n    b\n        c\n    d').map((l) => l.depth)).toEqual([0, 1, 2, 1]);
    expect(parsePaste('a\n\n\nb\r\n').map((l) => l.content)).toEqual(['a', 'b']);
    expect(parsePaste('a\n      b').map((l) => l.depth)).toEqual([0, 1]); // no jumps
    expect(parsePaste('- [x] done\n1. # Title')).toMatchObject([{ type: 'todo', checked: true, content: 'done' }, { type: 'h1', content: 'Title' }]);
  });
  it('inserts one bullet per line after the current one, tail text last', () => {
    const r = ok(pasteText(outline('heTAIL\nz'), 'heTAIL', 2, 2, 'llo\n  kid\nend', { newId }));
    expect(sketch(r.rows)).toBe('hello\n  kid\nendTAIL\nz');
    expect(r.step).toBe('paste');
    expect(r.focus).toEqual({ id: r.rows[2].id, offset: 3 });
  });
  it('goes after existing children; a single line is left to the field', () => {
    const r = ok(pasteText(outline('a\n  a1\nb'), 'a', 1, 1, 'x\ny', { newId }));
    expect(sketch(r.rows)).toBe('ax\n  a1\ny\nb');
    expect(pasteText(outline('a'), 'a', 0, 0, 'one line', { newId })).toBeNull();
  });
  it('into an empty bullet takes the first line’s type', () => {
    const r = ok(pasteText(outline('empty'), 'empty', 0, 0, '[ ] a\n[ ] b', { newId }));
    expect(r.rows.map((x) => x.type)).toEqual(['todo', 'todo']);
  });
});

describe('whole bullets at once', () => {
  /** @param {ReturnType<typeof outline>} rows @param {string} a @param {string} b */
  const roots = (rows, a, b) => {
    const shown = visibleRows(rows);
    const ix = (/** @type {string} */ id) => shown.findIndex((r) => r.id === id);
    return blockRange(shown, ix(a), ix(b)).roots.map((r) => r.id);
  };

  it('a range covers the last bullet\'s children; roots are the bullets whose parent is outside', () => {
    const rows = outline('a\n  a1\n  a2\nb\n  b1\nc');
    expect(roots(rows, 'a2', 'b')).toEqual(['a2', 'b']);
    const shown = visibleRows(rows);
    expect(blockRange(shown, 3, 0)).toMatchObject({ from: 0, to: 5 }); // b's child b1 comes along
    expect(roots(rows, 'a', 'a2')).toEqual(['a']);
  });

  it('Tab and Shift+Tab move several siblings together and keep their order', () => {
    const rows = outline('a\nb\nc\nd');
    const r = ok(indentMany(rows, ['b', 'c']));
    expect(sketch(r.rows)).toBe('a\n  b\n  c\nd');
    const back = ok(outdentMany(r.rows, ['b', 'c']));
    expect(sketch(back.rows)).toBe('a\nb\nc\nd');
    expect(outdentMany(r.rows, ['b', 'c'], { minDepth: 1 })).toBeNull(); // zoomed: not out of it
  });

  it('Alt+Shift+↑/↓ move the block as one, or not at all', () => {
    const rows = outline('a\nb\nc\nd');
    expect(sketch(ok(moveMany(rows, ['c', 'd'], true)).rows)).toBe('a\nc\nd\nb');
    expect(sketch(ok(moveMany(rows, ['a', 'b'], false)).rows)).toBe('c\na\nb\nd');
    expect(moveMany(rows, ['a', 'b'], true)).toBeNull();
  });

  it('Delete removes the bullets with their children; the caret goes above', () => {
    const r = ok(deleteMany(outline('a\nb\n  b1\nc\nd'), ['b', 'c']));
    expect(sketch(r.rows)).toBe('a\nd');
    expect(r.focus).toEqual({ id: 'a', offset: 1 });
    expect(ok(deleteMany(outline('a\nb'), ['a'])).focus).toEqual({ id: 'b', offset: 1 });
  });

  it('refuses all when someone holds a bullet inside the selection', () => {
    const r = deleteMany(outline('a\n  a1\nb'), ['a', 'b'], { lockedBy: (id) => (id === 'a1' ? 'Lin' : null) });
    expect(r).toMatchObject({ ok: false, heldBy: 'Lin' });
  });

  it('Ctrl+Enter gives every selected bullet the first one\'s next state', () => {
    const rows = outline('a\nb');
    const r = ok(toggleTodoMany(rows, ['a', 'b']));
    expect(r.rows.map((x) => x.type)).toEqual(['todo', 'todo']);
    const done = ok(toggleTodoMany(r.rows, ['a', 'b']));
    expect(done.rows.map((x) => x.checked)).toEqual([true, true]);
  });

  it('expand all / collapse all / show N levels, inside a zoomed bullet only', () => {
    const rows = outline('a\n  a1\n    a11\nb+\n  b1');
    expect(sketch(ok(foldAll(rows, { collapsed: false })).rows)).toBe('a\n  a1\n    a11\nb\n  b1');
    expect(visibleRows(ok(foldAll(rows, { collapsed: true })).rows).map((r) => r.id)).toEqual(['a', 'b']);
    expect(visibleRows(ok(foldAll(outline('a\n  a1\n    a11\nb\n  b1'), { level: 2 })).rows).map((r) => r.id)).toEqual(['a', 'a1', 'b', 'b1']);
    const inA = ok(foldAll(rows, { collapsed: true, within: 'a' }));
    expect(inA.rows.find((r) => r.id === 'a1')?.collapsed).toBe(true);
    expect(inA.rows.find((r) => r.id === 'a')?.collapsed).toBe(false); // the zoomed bullet itself stays
    // Folding is the person's own view: the result says which bullets, as step 'fold'.
    const all = ok(foldAll(rows, { collapsed: false }));
    expect(all.step).toBe('fold');
    expect(all.folds).toEqual([['b', false]]);
    expect(ok(foldAll(rows, { collapsed: true })).folds).toEqual([['a', true], ['a1', true]]);
  });

  it('bullets from a file or a paste go after a bullet\'s subtree, or as its last children', () => {
    const items = [{ depth: 0, content: 'x', type: /** @type {const} */ ('bullet'), checked: false, language: null }, { depth: 1, content: 'y', type: /** @type {const} */ ('bullet'), checked: false, language: null }];
    expect(sketch(ok(insertItemsAfter(outline('a\n  a1\nb'), 'a', items, { newId })).rows)).toBe('a\n  a1\nx\n  y\nb');
    expect(sketch(ok(insertItemsAfter(outline('a\nb'), null, items, { newId })).rows)).toBe('a\nb\nx\n  y');
    expect(sketch(ok(insertItemsAfter(outline('a\n  a1\nb'), 'a', items, { newId, asChildren: true })).rows)).toBe('a\n  a1\n  x\n    y\nb');
  });
});

describe('whole bullets at once, one pass = one bullet at a time', () => {
  /** A small seeded generator. @param {number} seed */
  const rng = (seed) => () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  it('indentMany and outdentMany on siblings in a row equal Tab / Shift+Tab on each in turn', () => {
    for (let t = 0; t < 300; t++) {
      const r = rng(t + 1);
      const n = 3 + Math.floor(r() * 14);
      /** @type {string[]} */
      const lines = [];
      let depth = 0;
      for (let i = 0; i < n; i++) {
        depth = i === 0 ? 0 : Math.max(0, Math.min(depth + 1, depth + Math.floor(r() * 3) - 1));
        lines.push(`${'  '.repeat(depth)}n${i}${r() < 0.15 ? '+' : ''}`);
      }
      const rows = outline(lines.join('\n'));
      const start = Math.floor(r() * rows.length);
      /** @type {string[]} */
      const ids = [];
      for (let at = start, k = 1 + Math.floor(r() * 4); k > 0 && at < rows.length && rows[at].depth === rows[start].depth; k--) {
        ids.push(rows[at].id);
        at = subtreeEnd(rows, at);
      }
      /** @type {import('../../static/engine/types.js').FlatRow[]} */
      let seq = rows;
      for (const id of ids) {
        const x = indent(seq, id);
        if (x && x.ok) seq = x.rows;
      }
      const fast = indentMany(rows, ids);
      expect(sketch(fast && fast.ok ? fast.rows : rows), `indent ${ids} in\n${sketch(rows)}`).toBe(sketch(seq));
      /** @type {import('../../static/engine/types.js').FlatRow[]} */
      let back = rows;
      for (const id of [...ids].reverse()) {
        const x = outdent(back, id);
        if (x && x.ok) back = x.rows;
      }
      const fastOut = outdentMany(rows, ids);
      expect(sketch(fastOut && fastOut.ok ? fastOut.rows : rows), `outdent ${ids} in\n${sketch(rows)}`).toBe(sketch(back));
    }
  });
});
