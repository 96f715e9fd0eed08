// @ts-check
// @vitest-environment happy-dom
// The editor's parts in a DOM of their own (happy-dom): the OutlineView draws what it is
// given, the InputController turns keys, clipboard events and clicks into edits of a small
// stand-in engine. The e2e suite checks them together in Chromium.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { OutlineView, WINDOW_MIN, shownRows } from '../../static/app/editor/outline-view.js';
import { EditorChrome } from '../../static/app/editor/chrome.js';
import { InputController } from '../../static/app/editor/input-controller.js';
import { FindBar, findMatches, narrows } from '../../static/app/editor/find-bar.js';
import { RowView } from '../../static/app/editor/row-view.js';

/** @typedef {import('../../static/engine/types.js').Row} Row */
/** @typedef {import('../../static/engine/types.js').FlatRow} FlatRow */
/** @typedef {import('../../static/engine/types.js').EngineState} EngineState */

/** Engine rows from flat rows (depth order), as the engine derives them. @param {FlatRow[]} flat @returns {Row[]} */
function toRows(flat) {
  /** @type {string[]} */
  const stack = [];
  return flat.map((f, i) => {
    stack.length = f.depth;
    const parentId = f.depth > 0 ? stack[f.depth - 1] ?? null : null;
    stack[f.depth] = f.id;
    return {
      id: f.id, parentId, depth: f.depth, content: f.content, type: f.type ?? 'bullet', checked: !!f.checked,
      collapsed: !!f.collapsed, language: f.language ?? null, conflictOf: null, conflictAuthor: null,
      conflictResolved: false, version: 1, hasChildren: i + 1 < flat.length && flat[i + 1].depth > f.depth,
    };
  });
}

/** @param {string} sketch two spaces a level; `+` collapsed; `[x]` done todo */
function outline(sketch) {
  return toRows(sketch.split('\n').filter((l) => l.trim()).map((l) => {
    const depth = (l.length - l.trimStart().length) / 2;
    let content = l.trim();
    const collapsed = content.endsWith('+');
    if (collapsed) content = content.slice(0, -1);
    const done = content.startsWith('[x] ');
    if (done) content = content.slice(4);
    return { id: content, depth, content, collapsed, type: done ? 'todo' : 'bullet', checked: done };
  }));
}
/** @param {{depth: number, content: string, collapsed?: boolean}[]} rows */
const sketch = (rows) => rows.map((r) => '  '.repeat(r.depth) + r.content + (r.collapsed ? '+' : '')).join('\n');

/** A stand-in engine: commitRows replaces the rows (one undo step each). @param {Row[]} rows */
function fakeEngine(rows) {
  /** @type {EngineState} */
  const state = /** @type {any} */ ({
    docId: 'doc_1', title: 'T', rows, locks: new Map(), role: 'editor', loaded: true, synced: true, error: null,
    stage: 'live', stageLabel: 'Live', pending: 0, unsaved: 0, sessions: 1, notice: null, noticeSeq: 0, storageError: null,
  });
  /** @type {Row[][]} */
  const undo = [];
  let n = 0;
  const engine = {
    state,
    commits: /** @type {string[]} */ ([]),
    /** @param {FlatRow[]} next @param {{step: string}} o */
    commitRows(next, o) {
      undo.push(engine.state.rows);
      engine.state = { ...engine.state, rows: toRows(next) };
      engine.commits.push(o.step);
      return { ok: /** @type {const} */ (true), ops: [] };
    },
    undo() {
      const prev = undo.pop();
      if (prev) engine.state = { ...engine.state, rows: prev };
    },
    redo() {},
    newBlockId: () => `new${++n}`,
    focus() {},
    setTitle() {},
    noteTyping() {},
    /** @param {Iterable<[string, boolean]>} changes folds are a view setting: no commit */
    setFolds(changes) {
      const by = new Map(changes);
      engine.state = { ...engine.state, rows: engine.state.rows.map((/** @type {any} */ r) => (by.has(r.id) ? { ...r, collapsed: by.get(r.id) } : r)) };
      engine.commits.push('fold');
    },
    acceptConflict: () => ({ ok: true }),
    discardConflict: () => ({ ok: true }),
  };
  return engine;
}

/** An editor of chrome + view + controller on a stand-in engine. @param {string} text */
function editorOf(text) {
  document.body.innerHTML = '';
  const engine = fakeEngine(outline(text));
  /** @type {string[]} */
  const zooms = [];
  const chrome = new EditorChrome(document, { docId: 'doc_1', onShare() {}, onZoom() {}, onConflicts() {}, menu: [] });
  document.body.append(chrome.editor);
  /** @type {InputController} */
  // eslint-disable-next-line prefer-const
  let controller;
  const view = new OutlineView(chrome.outline, { isTyping: (id) => controller.typing.holds(id) });
  const render = () => view.render(engine.state, true);
  controller = new InputController({
    engine,
    view,
    chrome,
    state: () => engine.state,
    canEdit: () => true,
    render: () => {
      render();
      controller.syncSelection();
    },
    zoom: (id) => {
      zooms.push(String(id));
      view.setZoom(id);
      render();
    },
    openFind() {},
    openHelp() {},
  });
  controller.attach();
  render();
  /** @param {string} key @param {Partial<KeyboardEventInit>} [mods] @param {EventTarget} [target] */
  const key = (key, mods = {}, target = document.activeElement ?? chrome.outline) =>
    target.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true, cancelable: true, ...mods }));
  return { engine, chrome, view, controller, zooms, key, render };
}

const drawn = (/** @type {OutlineView} */ view) => [...view.outline.querySelectorAll('.row')].map((e) => /** @type {HTMLElement} */ (e).dataset.blockId);

describe('OutlineView', () => {
  beforeEach(() => {
    document.body.innerHTML = '';
  });

  it('draws the shown rows in order, leaves collapsed children out, updates only what changed', () => {
    const { view, engine } = editorOf('a\n  a1\nb+\n  b1\nc');
    expect(drawn(view)).toEqual(['a', 'a1', 'b', 'c']);
    const aEl = view.view('a')?.el;
    engine.state = { ...engine.state, rows: engine.state.rows.map((r) => (r.id === 'c' ? { ...r, content: 'c!' } : r)) };
    view.render(engine.state, true);
    expect(view.view('a')?.el).toBe(aEl);
    expect(view.view('c')?.text.textContent).toBe('c!');
  });

  it('zoomed: only the bullet\'s subtree, drawn from the left edge; a missing bullet shows nothing', () => {
    const { view, engine } = editorOf('a\n  a1\n    a11\n  a2\nb');
    view.setZoom('a');
    view.render(engine.state, true);
    expect(drawn(view)).toEqual(['a1', 'a11', 'a2']);
    expect(view.view('a1')?.el.getAttribute('aria-level')).toBe('1');
    expect(view.view('a11')?.el.style.getPropertyValue('--depth')).toBe('1');
    view.setZoom('gone');
    view.render(engine.state, true);
    expect(drawn(view)).toEqual([]);
    expect(view.zoomFound).toBe(false);
  });

  it('zooming back out gives the whole document as it is now: unchanged, edited while zoomed, completed hidden meanwhile', () => {
    const { view, engine } = editorOf('a\n  a1\n    a11\n  a2\n[x] b\n  b1\nc');
    const whole = () => view.render(engine.state, true);
    /** every shown row where the index says, and the drawn rows in that order */
    const consistent = () => {
      expect(view.rows.every((r, i) => view.indexOf(r.id) === i)).toBe(true);
      expect(drawn(view)).toEqual(view.rows.map((r) => r.id));
    };
    view.setZoom('a');
    whole();
    view.setZoom(null);
    whole();
    expect(drawn(view)).toEqual(['a', 'a1', 'a11', 'a2', 'b', 'b1', 'c']);
    expect(view.view('a')?.el.getAttribute('aria-level')).toBe('1');
    expect(view.view('a1')?.el.getAttribute('aria-level')).toBe('2');
    consistent();
    // edited while zoomed: a new bullet inside, one removed
    view.setZoom('a');
    whole();
    engine.state = { ...engine.state, rows: outline('a\n  a1\n  a15\n    a151\n  a2\n[x] b\n  b1\nc') };
    whole();
    expect(drawn(view)).toEqual(['a1', 'a15', 'a151', 'a2']);
    view.setZoom(null);
    whole();
    expect(drawn(view)).toEqual(['a', 'a1', 'a15', 'a151', 'a2', 'b', 'b1', 'c']);
    consistent();
    // completed hidden while zoomed
    view.setZoom('a');
    whole();
    view.setHideCompleted(true);
    whole();
    view.setZoom(null);
    whole();
    expect(drawn(view)).toEqual(['a', 'a1', 'a15', 'a151', 'a2', 'c']);
    consistent();
    // from one bullet to another, then out
    view.setZoom('a');
    whole();
    view.setZoom('a15');
    whole();
    expect(drawn(view)).toEqual(['a151']);
    view.setZoom(null);
    whole();
    expect(drawn(view)).toEqual(['a', 'a1', 'a15', 'a151', 'a2', 'c']);
    consistent();
  });

  it('hide completed leaves done todos and their children out', () => {
    expect(shownRows(outline('a\n[x] b\n  b1\nc'), null, true).rows.map((r) => r.id)).toEqual(['a', 'c']);
  });

  it('above WINDOW_MIN rows draws a window with spacers, and any row on demand', () => {
    const text = Array.from({ length: WINDOW_MIN + 600 }, (_, i) => `r${i}`).join('\n');
    const { view } = editorOf(text);
    const n = drawn(view).length;
    expect(n).toBeGreaterThan(0);
    expect(n).toBeLessThan(WINDOW_MIN);
    expect(view.outline.querySelectorAll('.ed-spacer').length).toBeGreaterThan(0);
    expect(view.ensure('r900')?.row?.id).toBe('r900');
    expect(drawn(view)).toContain('r900');
  });

  it('after a jump only the screen itself is drawn at once, the screens around it when idle', async () => {
    const text = Array.from({ length: WINDOW_MIN + 600 }, (_, i) => `r${i}`).join('\n');
    const { view } = editorOf(text);
    // the first draw is a jump too (from nothing): the screen, then the screens around it
    const first = drawn(view).length;
    expect(first).toBeGreaterThan(0);
    await vi.waitFor(() => expect(drawn(view).length).toBeGreaterThan(first));
    const wide = drawn(view).length;
    expect(wide).toBeLessThan(WINDOW_MIN);
    // scrolled far down, to row 900 (this DOM has no layout: the outline's top says where
    // the page is; rows never drawn count 24 px each)
    view.outline.getBoundingClientRect = () => /** @type {DOMRect} */ ({ top: -900 * 24, bottom: 0, left: 0, right: 0, width: 0, height: 0, x: 0, y: -900 * 24, toJSON() {} });
    view.scrollTo('r900');
    view.onScroll(); // the scroll the jump caused: still only the screen
    expect(drawn(view)).toContain('r900');
    expect(drawn(view)).not.toContain('r899'); // the screen above: not yet
    const right = drawn(view).length;
    expect(right).toBeLessThan(wide);
    await vi.waitFor(() => expect(drawn(view)).toContain('r899'));
    expect(drawn(view).length).toBeGreaterThan(right);
    expect(drawn(view)).toContain('r900');
    expect(drawn(view)).not.toContain('r0');
    // a scroll with no jump before it draws the screens around at once
    view.outline.getBoundingClientRect = () => /** @type {DOMRect} */ ({ top: -700 * 24, bottom: 0, left: 0, right: 0, width: 0, height: 0, x: 0, y: -700 * 24, toJSON() {} });
    view.onScroll();
    expect(drawn(view)).toContain('r700');
    expect(drawn(view)).toContain('r699');
  });

  it('the scroll that shows the caret\'s row far below draws only the screen at once, the screens around when idle', async () => {
    const text = Array.from({ length: WINDOW_MIN + 600 }, (_, i) => `r${i}`).join('\n');
    const { view } = editorOf(text);
    const first = drawn(view).length;
    await vi.waitFor(() => expect(drawn(view).length).toBeGreaterThan(first));
    // the caret's next row far below the screen (a paste's last bullet): drawn where it is,
    // then shown by the view itself — this DOM has no layout, so every row is "above" and
    // reveal scrolls
    const v = /** @type {RowView} */ (view.ensure('r900'));
    view.reveal(v.el);
    view.outline.getBoundingClientRect = () => /** @type {DOMRect} */ ({ top: -900 * 24, bottom: 0, left: 0, right: 0, width: 0, height: 0, x: 0, y: -900 * 24, toJSON() {} });
    view.onScroll(); // that scroll's event
    expect(drawn(view)).toContain('r900');
    expect(drawn(view)).toContain('r901');
    expect(drawn(view)).not.toContain('r899'); // the screen above: when idle
    await vi.waitFor(() => expect(drawn(view)).toContain('r899'));
    // a later scroll of the reader's own draws the screens around at once again
    view.outline.getBoundingClientRect = () => /** @type {DOMRect} */ ({ top: -1000 * 24, bottom: 0, left: 0, right: 0, width: 0, height: 0, x: 0, y: -1000 * 24, toJSON() {} });
    view.onScroll();
    expect(drawn(view)).toContain('r999');
  });

  it('read-only bullets are one tab stop: the focused one, else the first', () => {
    const { view, engine } = editorOf('a\nb\nc');
    view.render(engine.state, false);
    const stops = () => [...view.outline.querySelectorAll('.row-text')].map((e) => /** @type {HTMLElement} */ (e).tabIndex);
    expect(stops()).toEqual([0, -1, -1]);
    view.focusedId = 'c';
    view.moveTabStop();
    expect(stops()).toEqual([-1, -1, 0]);
  });

  it('a RowView shows rendered markdown until edited, then the raw text', () => {
    const v = new RowView(document);
    v.update(outline('**bold** text')[0], { lock: null, editable: true, viewer: false, depthBase: 0, typing: false });
    expect(v.text.querySelector('strong')?.textContent).toBe('bold');
    v.showRaw();
    expect(v.text.textContent).toBe('**bold** text');
  });
});

describe('InputController', () => {
  it('Shift+↓ at a bullet\'s end selects it, then the next; Tab indents them as one step', () => {
    const { view, engine, controller, key } = editorOf('a\nb\nc\nd');
    const b = /** @type {import('../../static/app/editor/row-view.js').RowView} */ (view.view('b'));
    view.focus(b, { offset: 1 });
    key('ArrowDown', { shiftKey: true }, b.text);
    expect(controller.selection.active).toBe(true);
    key('ArrowDown', { shiftKey: true }, view.outline);
    expect([...view.outline.querySelectorAll('.row.is-selected')].map((e) => /** @type {HTMLElement} */ (e).dataset.blockId)).toEqual(['b', 'c']);
    key('Tab', {}, view.outline);
    expect(sketch(engine.state.rows)).toBe('a\n  b\n  c\nd');
    expect(engine.commits).toEqual(['indent']);
    key('Escape', {}, view.outline);
    expect(controller.selection.active).toBe(false);
  });

  it('copy puts a nested Markdown list and HTML lists on the clipboard; cut removes them', () => {
    const { engine, controller, view } = editorOf('a\n  a1+\n    hidden\nb\nc');
    controller.select('a', 'b');
    const data = new DataTransfer();
    const copy = new ClipboardEvent('copy', { clipboardData: data, bubbles: true, cancelable: true });
    view.outline.dispatchEvent(copy);
    expect(data.getData('text/plain')).toBe('- a\n  - a1\n    - hidden\n- b\n');
    expect(data.getData('text/html')).toBe('<ul><li>a<ul><li>a1<ul><li>hidden</li></ul></li></ul></li><li>b</li></ul>');
    const cut = new ClipboardEvent('cut', { clipboardData: new DataTransfer(), bubbles: true, cancelable: true });
    view.outline.dispatchEvent(cut);
    expect(sketch(engine.state.rows)).toBe('c');
  });

  it('pasting an HTML list into a bullet builds the tree under the caret in one step', () => {
    const { engine, view } = editorOf('x\ny');
    const x = /** @type {import('../../static/app/editor/row-view.js').RowView} */ (view.view('x'));
    view.focus(x, { offset: 1 });
    const data = new DataTransfer();
    data.setData('text/html', '<ul><li>one<ul><li><input type="checkbox" checked> two #tag</li></ul></li><li>three</li></ul>');
    data.setData('text/plain', 'one\ntwo\nthree');
    x.text.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    expect(sketch(engine.state.rows)).toBe('xone\n  two #tag\nthree\ny');
    expect(engine.state.rows[1]).toMatchObject({ type: 'todo', checked: true });
    expect(engine.commits).toEqual(['paste']);
  });

  it('zoomed: Shift+Tab at the top level of the zoom is refused with a notice', () => {
    const { view, engine, chrome, key, render } = editorOf('a\n  a1\n  a2\nb');
    view.setZoom('a');
    render();
    const a1 = /** @type {import('../../static/app/editor/row-view.js').RowView} */ (view.view('a1'));
    view.focus(a1, { offset: 0 });
    key('Tab', { shiftKey: true }, a1.text);
    expect(sketch(engine.state.rows)).toBe('a\n  a1\n  a2\nb');
    expect(chrome.notice.text).toMatch(/zoom out/);
  });

  it('Alt+→ zooms into the bullet, a click on its dot too', () => {
    const { view, zooms, key } = editorOf('a\n  a1\nb');
    const b = /** @type {import('../../static/app/editor/row-view.js').RowView} */ (view.view('b'));
    view.focus(b, { offset: 0 });
    key('ArrowRight', { altKey: true }, b.text);
    expect(zooms).toEqual(['b']);
  });

  it('a keystroke not yet handed to the engine survives a full redraw (titles of links arriving)', () => {
    const { view, engine, controller, render } = editorOf('abc');
    const v = /** @type {import('../../static/app/editor/row-view.js').RowView} */ (view.view('abc'));
    view.focus(v, { offset: 3 });
    v.text.textContent = 'abcd';
    v.text.dispatchEvent(new InputEvent('input', { bubbles: true }));
    view.invalidate();
    render();
    expect(v.text.textContent).toBe('abcd');
    controller.typing.flush();
    expect(engine.state.rows[0].content).toBe('abcd');
  });

  it('"+ Add a bullet" while zoomed adds the zoomed bullet\'s last child', () => {
    const { view, engine, chrome, render } = editorOf('a\n  a1\nb');
    view.setZoom('a');
    render();
    chrome.add.click();
    expect(sketch(engine.state.rows)).toBe('a\n  a1\n  \nb');
  });
});

describe('find', () => {
  it('matches every word, case-insensitive, over all rows', () => {
    expect(findMatches([{ content: 'Buy Milk today' }, { content: 'milk' }, { content: 'buy bread' }], 'milk BUY')).toEqual([0]);
    expect(findMatches([{ content: 'x' }], '  ')).toEqual([]);
  });

  it('steps through hits, wraps around, and follows changes of the document', () => {
    let rows = outline('apple\nbanana\napple pie');
    /** @type {string[]} */
    const shown = [];
    const bar = new FindBar(document, { rows: () => rows, show: (id) => shown.push(id), clear() {}, onClose() {} });
    document.body.append(bar.el);
    bar.show();
    bar.search('apple');
    expect(bar.count.textContent).toBe('1 of 2');
    bar.step(1);
    bar.step(1);
    expect(shown).toEqual(['apple', 'apple pie', 'apple']);
    rows = outline('apple\napple tart\nbanana\napple pie');
    bar.step(1);
    expect(shown[shown.length - 1]).toBe('apple tart');
    expect(bar.count.textContent).toBe('2 of 3');
  });

  it('a query typed on looks only among the last hits, and gives what a full search gives', () => {
    expect(narrows('bul', 'bull')).toBe(true);
    expect(narrows('bullet', 'bullet 9')).toBe(true);
    expect(narrows('ullet', 'bullet')).toBe(true);
    expect(narrows('bullet 9', 'bullet')).toBe(false);
    expect(narrows('bullet', 'bulle')).toBe(false);
    expect(narrows('', 'a')).toBe(false);
    // among: only those indices are looked at
    const rows = [{ content: 'apple' }, { content: 'apple' }, { content: 'pear' }];
    expect(findMatches(rows, 'apple', [1, 2])).toEqual([1]);
    let doc = outline('apple 1\nbanana\napple 2\napricot');
    const bar = new FindBar(document, { rows: () => doc, show() {}, clear() {}, onClose() {} });
    document.body.append(bar.el);
    bar.show();
    for (const q of ['a', 'ap', 'app', 'apple', 'apple 2']) {
      bar.search(q);
      expect(bar.count.textContent).toBe(q === 'a' ? '1 of 4' : q === 'ap' ? '1 of 3' : q === 'apple 2' ? '1 of 1' : '1 of 2');
    }
    // the document changed between two keys: every row is looked at again
    doc = outline('apple 1\napple 22\napple 2');
    bar.search('apple 2');
    expect(bar.count.textContent).toBe('1 of 2');
    // closed and opened again with the same query: not the cleared hits
    bar.close();
    bar.show('apple 2');
    expect(bar.count.textContent).toBe('1 of 2');
  });
});

describe('EditorChrome', () => {
  it('counts the conflict badge of a big document when idle, from the newest rows', async () => {
    const { engine, chrome } = editorOf('a');
    const how = { readOnly: false, zoomPath: null, zoomFound: true, signedOut: false };
    /** @param {number} conflicts */
    const rowsWith = (conflicts) =>
      toRows(Array.from({ length: 6000 }, (_, i) => ({ id: `blk_${i}`, depth: 0, content: `b${i}` }))).map((r, i) =>
        i >= 6000 - conflicts ? { ...r, conflictOf: 'blk_0', conflictAuthor: { userId: 'usr_b', name: 'Bob' } } : r,
      );
    const idle = () => new Promise((ok) => setTimeout(ok, 20));
    chrome.render({ ...engine.state, rows: rowsWith(2) }, how);
    // several changes before the page is idle: counted once, from the last rows
    chrome.render({ ...engine.state, rows: rowsWith(3) }, how);
    await idle();
    expect(chrome.conflicts.hidden).toBe(false);
    expect(chrome.conflicts.textContent).toBe('3 conflicts');
    chrome.render({ ...engine.state, rows: rowsWith(0) }, how);
    await idle();
    expect(chrome.conflicts.hidden).toBe(true);
  });
});
