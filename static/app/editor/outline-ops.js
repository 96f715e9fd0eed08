// Pure structure edits of the outline: each takes the whole flat list (document order, every
// live row including collapsed ones' children, `depth` giving the tree) and returns the next
// flat list for `engine.commitRows(next, {step})`, plus where the caret goes afterwards.
// DOM-free and engine-free, so the editor and the unit tests run the same code.
//
// Rows that do not change are passed through as the same objects (the engine's Row objects
// are valid FlatRows), so a diff can skip them by reference. Changed rows are fresh objects
// holding only FlatRow fields.

import { fromMarkdown } from './outline-io.js';

/** @typedef {import('../../engine/types.js').FlatRow} FlatRow */
/** @typedef {import('../../engine/types.js').BlockType} BlockType */
/** @typedef {'typing'|'insert'|'delete'|'indent'|'outdent'|'move'|'check'|'paste'|'props'|'merge'|'split'|'fold'} Step */
/** @typedef {{id: string, offset: number}} Caret */
/**
 * `folds`: bullets this edit opens or closes for the person making it (a view setting, see
 * engine/folds.js — the rows show it already; it is no change to the document). Step 'fold':
 * nothing but that.
 * @typedef {{ok: true, rows: FlatRow[], step: Step, focus: Caret|null, folds?: [string, boolean][]}
 *   | {ok: false, reason: 'locked', blockId: string, heldBy: string, message: string}} OpResult
 */
/** Returns the name of whoever else holds the bullet, or null when it is free. */
/** @typedef {(id: string) => string|null} LockedBy */

/** @type {LockedBy} */
const nobody = () => null;

/**
 * A fresh FlatRow from a row (which may be an engine Row with extra fields) plus changes.
 * @param {FlatRow} row
 * @param {Partial<FlatRow>} [patch]
 * @returns {FlatRow}
 */
export function withProps(row, patch = {}) {
  return {
    id: row.id,
    depth: row.depth,
    content: row.content,
    type: row.type ?? 'bullet',
    checked: row.checked ?? false,
    collapsed: row.collapsed ?? false,
    language: row.language ?? null,
    conflictResolved: row.conflictResolved ?? false,
    ...patch,
  };
}

/**
 * Opens row `k` of `next` if it is folded (for the person editing: a view setting) and says
 * so as the result's `folds`.
 * @param {FlatRow[]} next @param {number} k @returns {[string, boolean][]}
 */
function unfold(next, k) {
  if (!next[k].collapsed) return [];
  next[k] = withProps(next[k], { collapsed: false });
  return [[next[k].id, false]];
}

/** @param {FlatRow[]} rows @param {string} id */
export function indexOfId(rows, id) {
  for (let i = 0; i < rows.length; i++) if (rows[i].id === id) return i;
  return -1;
}

/** Index just past the last descendant of rows[i]. @param {FlatRow[]} rows @param {number} i */
export function subtreeEnd(rows, i) {
  const d = rows[i].depth;
  let j = i + 1;
  while (j < rows.length && rows[j].depth > d) j++;
  return j;
}

/** @param {FlatRow[]} rows @param {number} i */
export function hasChildren(rows, i) {
  return i + 1 < rows.length && rows[i + 1].depth > rows[i].depth;
}

/**
 * The rows a reader sees: children of collapsed rows left out.
 * @template {FlatRow} R
 * @param {R[]} rows
 * @returns {R[]}
 */
export function visibleRows(rows) {
  /** @type {R[]} */
  const out = [];
  let hideBelow = Infinity;
  for (const r of rows) {
    if (r.depth > hideBelow) continue;
    hideBelow = Infinity;
    out.push(r);
    if (r.collapsed) hideBelow = r.depth;
  }
  return out;
}

/** Index of the visible row above rows[i] (-1 when none). @param {FlatRow[]} rows @param {number} i */
export function prevVisibleIndex(rows, i) {
  let j = i - 1;
  if (j < 0) return -1;
  // Climb to the outermost collapsed ancestor of rows[j] (if any): that one is what shows.
  let best = j;
  let depth = rows[j].depth;
  for (let k = j - 1; k >= 0 && depth > 0; k--) {
    if (rows[k].depth < depth) {
      depth = rows[k].depth;
      if (rows[k].collapsed) best = k;
    }
  }
  return best;
}

/** Index of the visible row below rows[i] (-1 when none). @param {FlatRow[]} rows @param {number} i */
export function nextVisibleIndex(rows, i) {
  const j = rows[i].collapsed ? subtreeEnd(rows, i) : i + 1;
  return j < rows.length ? j : -1;
}

/** Ids of the ancestors of rows[i], nearest first. @param {FlatRow[]} rows @param {number} i */
export function ancestorIndices(rows, i) {
  /** @type {number[]} */
  const out = [];
  let depth = rows[i].depth;
  for (let k = i - 1; k >= 0 && depth > 0; k--) {
    if (rows[k].depth < depth) {
      out.push(k);
      depth = rows[k].depth;
    }
  }
  return out;
}

/**
 * @param {string} id @param {string} heldBy @param {string} what
 * @returns {OpResult}
 */
function refuse(id, heldBy, what) {
  return {
    ok: false,
    reason: 'locked',
    blockId: id,
    heldBy,
    message: `Can't ${what}: ${heldBy} is editing that bullet right now.`,
  };
}

/**
 * Copies rows[from..to) shifting depths by `by`.
 * @param {FlatRow[]} rows @param {number} from @param {number} to @param {number} by
 */
function shifted(rows, from, to, by) {
  const out = rows.slice(from, to);
  if (by !== 0) for (let k = 0; k < out.length; k++) out[k] = withProps(out[k], { depth: out[k].depth + by });
  return out;
}

/** @param {FlatRow[]} rows @param {string} id @param {string} content */
export function setContent(rows, id, content) {
  const i = indexOfId(rows, id);
  if (i < 0 || rows[i].content === content) return null;
  const next = rows.slice();
  next[i] = withProps(rows[i], { content });
  return next;
}

/** @param {FlatRow[]} rows @param {string} id @param {Partial<FlatRow>} patch */
export function setProps(rows, id, patch) {
  const i = indexOfId(rows, id);
  if (i < 0) return null;
  const next = rows.slice();
  next[i] = withProps(rows[i], patch);
  return next;
}

/**
 * Enter at `offset`: the text after the caret moves to a new bullet below (the first child
 * when the bullet has expanded children, like Workflowy). At offset 0 of a non-empty bullet a
 * new empty bullet goes above and the caret stays. In a bullet someone else holds, Enter only
 * adds an empty bullet below it (after its children).
 * @param {FlatRow[]} rows @param {string} id @param {number} offset
 * @param {{newId: () => string, lockedBy?: LockedBy}} opts
 * @returns {OpResult|null}
 */
export function splitRow(rows, id, offset, { newId, lockedBy = nobody }) {
  const i = indexOfId(rows, id);
  if (i < 0) return null;
  const x = rows[i];
  const next = rows.slice();
  if (lockedBy(id) != null) {
    const n = withProps({ id: newId(), depth: x.depth, content: '' });
    next.splice(subtreeEnd(rows, i), 0, n);
    return { ok: true, rows: next, step: 'insert', focus: { id: n.id, offset: 0 } };
  }
  const c = x.content;
  const k = Math.max(0, Math.min(offset, c.length));
  if (k === 0 && c !== '') {
    next.splice(i, 0, withProps({ id: newId(), depth: x.depth, content: '' }));
    return { ok: true, rows: next, step: 'insert', focus: { id, offset: 0 } };
  }
  const type = x.type === 'todo' ? 'todo' : 'bullet';
  const asChild = hasChildren(rows, i) && !x.collapsed;
  const n = withProps({ id: newId(), depth: x.depth + (asChild ? 1 : 0), content: c.slice(k), type });
  const tail = k < c.length;
  if (tail) next[i] = withProps(x, { content: c.slice(0, k) });
  next.splice(asChild ? i + 1 : subtreeEnd(rows, i), 0, n);
  return { ok: true, rows: next, step: tail ? 'split' : 'insert', focus: { id: n.id, offset: 0 } };
}

/**
 * Backspace at the start of a bullet. In order: a typed bullet (todo, heading, quote, code)
 * first turns back into a plain bullet; an empty childless bullet is removed; an empty
 * childless bullet above is removed instead (this one keeps its identity); otherwise the text
 * joins the visible bullet above and the children follow it.
 * @param {FlatRow[]} rows @param {string} id
 * @param {{lockedBy?: LockedBy, resetType?: boolean}} [opts] resetType false: skip the first rule
 * @returns {OpResult|null}
 */
export function mergeBackward(rows, id, { lockedBy = nobody, resetType = true } = {}) {
  const i = indexOfId(rows, id);
  if (i < 0) return null;
  const x = rows[i];
  const holder = lockedBy(id);
  if (holder != null) return refuse(id, holder, 'merge');
  if (resetType && x.type && x.type !== 'bullet') {
    const next = rows.slice();
    next[i] = withProps(x, { type: 'bullet', checked: false, language: null });
    return { ok: true, rows: next, step: 'props', focus: { id, offset: 0 } };
  }
  const p = prevVisibleIndex(rows, i);
  if (p < 0) return null;
  const prev = rows[p];
  const kids = hasChildren(rows, i);
  if (x.content === '' && !kids) {
    const next = rows.slice();
    next.splice(i, 1);
    const ph = lockedBy(prev.id);
    // the caret goes to the bullet above even if someone holds it (read-only there)
    return { ok: true, rows: next, step: 'delete', focus: { id: prev.id, offset: ph == null ? prev.content.length : 0 } };
  }
  const ph = lockedBy(prev.id);
  if (ph != null) return refuse(prev.id, ph, 'merge');
  if (prev.content === '' && !hasChildren(rows, p)) {
    const next = rows.slice();
    next.splice(p, 1);
    // X may now sit deeper than allowed (it was the first child of nothing): keep depth valid
    const before = p > 0 ? next[p - 1].depth : -1;
    if (x.depth > before + 1) {
      const end = subtreeEnd(next, p);
      next.splice(p, end - p, ...shifted(next, p, end, before + 1 - x.depth));
    }
    return { ok: true, rows: next, step: 'delete', focus: { id, offset: 0 } };
  }
  const end = subtreeEnd(rows, i);
  const by = prev.depth < x.depth ? -1 : 0; // prev is the parent: children move up one level
  const next = [
    ...rows.slice(0, p),
    withProps(prev, { content: prev.content + x.content }),
    ...rows.slice(p + 1, i),
    ...shifted(rows, i + 1, end, by),
    ...rows.slice(end),
  ];
  return { ok: true, rows: next, step: 'merge', focus: { id: prev.id, offset: prev.content.length } };
}

/**
 * Delete at the end of a bullet: the visible bullet below joins this one.
 * @param {FlatRow[]} rows @param {string} id @param {{lockedBy?: LockedBy}} [opts]
 * @returns {OpResult|null}
 */
export function mergeForward(rows, id, { lockedBy = nobody } = {}) {
  const i = indexOfId(rows, id);
  if (i < 0) return null;
  const holder = lockedBy(id);
  if (holder != null) return refuse(id, holder, 'merge');
  const n = nextVisibleIndex(rows, i);
  if (n < 0) return null;
  // the same rules as Backspace at the start of the bullet below (without the type reset)
  return mergeBackward(rows, rows[n].id, { lockedBy, resetType: false });
}

/**
 * Tab: the bullet (with its children) becomes the last child of its previous sibling, which
 * is expanded if it was collapsed.
 * @param {FlatRow[]} rows @param {string} id @param {{lockedBy?: LockedBy}} [opts]
 * @returns {OpResult|null}
 */
export function indent(rows, id, { lockedBy = nobody } = {}) {
  const i = indexOfId(rows, id);
  if (i < 0) return null;
  const x = rows[i];
  let s = -1;
  for (let j = i - 1; j >= 0; j--) {
    if (rows[j].depth < x.depth) break;
    if (rows[j].depth === x.depth) {
      s = j;
      break;
    }
  }
  if (s < 0) return null;
  const holder = lockedBy(id);
  if (holder != null) return refuse(id, holder, 'indent');
  const end = subtreeEnd(rows, i);
  const next = [...rows.slice(0, i), ...shifted(rows, i, end, 1), ...rows.slice(end)];
  return { ok: true, rows: next, step: 'indent', focus: null, folds: unfold(next, s) };
}

/**
 * Shift+Tab: the bullet (with its children) becomes the next sibling of its parent; the
 * siblings below it stay where they are (Workflowy's rule).
 * @param {FlatRow[]} rows @param {string} id @param {{lockedBy?: LockedBy}} [opts]
 * @returns {OpResult|null}
 */
export function outdent(rows, id, { lockedBy = nobody } = {}) {
  const i = indexOfId(rows, id);
  if (i < 0 || rows[i].depth === 0) return null;
  const holder = lockedBy(id);
  if (holder != null) return refuse(id, holder, 'outdent');
  const [p] = ancestorIndices(rows, i);
  const pend = subtreeEnd(rows, p);
  const end = subtreeEnd(rows, i);
  const next = [...rows.slice(0, i), ...rows.slice(end, pend), ...shifted(rows, i, end, -1), ...rows.slice(pend)];
  return { ok: true, rows: next, step: 'outdent', focus: null };
}

/**
 * Alt+Shift+↑: swap with the previous sibling (children travel along). The first child moves
 * on to become the last child of its parent's previous sibling.
 * @param {FlatRow[]} rows @param {string} id @param {{lockedBy?: LockedBy}} [opts]
 * @returns {OpResult|null}
 */
export function moveUp(rows, id, { lockedBy = nobody } = {}) {
  const i = indexOfId(rows, id);
  if (i < 0) return null;
  const x = rows[i];
  let target = -1;
  /** @type {number} */
  let expand = -1;
  for (let j = i - 1; j >= 0; j--) {
    if (rows[j].depth < x.depth) {
      // rows[j] is the parent: look for the parent's previous sibling
      const pd = rows[j].depth;
      for (let k = j - 1; k >= 0; k--) {
        if (rows[k].depth < pd) break;
        if (rows[k].depth === pd) {
          target = j;
          expand = k;
          break;
        }
      }
      break;
    }
    if (rows[j].depth === x.depth) {
      target = j;
      break;
    }
  }
  if (target < 0) return null;
  const holder = lockedBy(id);
  if (holder != null) return refuse(id, holder, 'move');
  const end = subtreeEnd(rows, i);
  const next = [...rows.slice(0, target), ...rows.slice(i, end), ...rows.slice(target, i), ...rows.slice(end)];
  return { ok: true, rows: next, step: 'move', focus: null, folds: expand >= 0 ? unfold(next, expand) : [] };
}

/**
 * Alt+Shift+↓: swap with the next sibling (children travel along). The last child moves on
 * to become the first child of its parent's next sibling.
 * @param {FlatRow[]} rows @param {string} id @param {{lockedBy?: LockedBy}} [opts]
 * @returns {OpResult|null}
 */
export function moveDown(rows, id, { lockedBy = nobody } = {}) {
  const i = indexOfId(rows, id);
  if (i < 0) return null;
  const x = rows[i];
  const end = subtreeEnd(rows, i);
  if (end >= rows.length) return null;
  const n = rows[end];
  if (n.depth < x.depth - 1) return null;
  const holder = lockedBy(id);
  if (holder != null) return refuse(id, holder, 'move');
  if (n.depth === x.depth) {
    const nend = subtreeEnd(rows, end);
    const next = [...rows.slice(0, i), ...rows.slice(end, nend), ...rows.slice(i, end), ...rows.slice(nend)];
    return { ok: true, rows: next, step: 'move', focus: null };
  }
  // n is the parent's next sibling: become its first child
  const next = [...rows.slice(0, i), n, ...rows.slice(i, end), ...rows.slice(end + 1)];
  return { ok: true, rows: next, step: 'move', focus: null, folds: unfold(next, i) };
}

/**
 * Ctrl+Enter cycles: any type → todo → todo done → plain bullet.
 * @param {FlatRow[]} rows @param {string} id @param {{lockedBy?: LockedBy}} [opts]
 * @returns {OpResult|null}
 */
export function toggleTodo(rows, id, { lockedBy = nobody } = {}) {
  const i = indexOfId(rows, id);
  if (i < 0) return null;
  const holder = lockedBy(id);
  if (holder != null) return refuse(id, holder, 'change');
  const x = rows[i];
  /** @type {Partial<FlatRow>} */
  let patch;
  /** @type {Step} */
  let step = 'props';
  if (x.type !== 'todo') patch = { type: 'todo', checked: false, language: null };
  else if (!x.checked) {
    patch = { checked: true };
    step = 'check';
  } else patch = { type: 'bullet', checked: false };
  const next = rows.slice();
  next[i] = withProps(x, patch);
  return { ok: true, rows: next, step, focus: null };
}

/**
 * Collapse or expand a bullet that has children, for the person doing it (`folds`).
 * @param {FlatRow[]} rows @param {string} id @param {boolean} collapsed
 * @returns {OpResult|null}
 */
export function setCollapsed(rows, id, collapsed) {
  const i = indexOfId(rows, id);
  if (i < 0 || !hasChildren(rows, i) || !!rows[i].collapsed === collapsed) return null;
  const next = rows.slice();
  next[i] = withProps(rows[i], { collapsed });
  return { ok: true, rows: next, step: 'fold', focus: null, folds: [[id, collapsed]] };
}

/**
 * Drag and drop: move a bullet with its children before, after (as the next sibling, after
 * the target's children) or into (as the first child) a target bullet.
 * @param {FlatRow[]} rows @param {string} id @param {string} targetId
 * @param {'before'|'after'|'into'} where
 * @param {{lockedBy?: LockedBy}} [opts]
 * @returns {OpResult|null}
 */
export function dropRow(rows, id, targetId, where, { lockedBy = nobody } = {}) {
  const i = indexOfId(rows, id);
  if (i < 0 || id === targetId) return null;
  const end = subtreeEnd(rows, i);
  const t0 = indexOfId(rows, targetId);
  if (t0 < 0 || (t0 > i && t0 < end)) return null; // into its own subtree
  const holder = lockedBy(id);
  if (holder != null) return refuse(id, holder, 'move');
  const moving = rows.slice(i, end);
  const rest = [...rows.slice(0, i), ...rows.slice(end)];
  const t = indexOfId(rest, targetId);
  const target = rest[t];
  let at;
  let depth;
  let expand = false;
  if (where === 'before') {
    at = t;
    depth = target.depth;
  } else if (where === 'after') {
    at = subtreeEnd(rest, t);
    depth = target.depth;
  } else {
    at = t + 1;
    depth = target.depth + 1;
    expand = !!target.collapsed;
  }
  const by = depth - rows[i].depth;
  const moved = by === 0 ? moving : moving.map((r) => withProps(r, { depth: r.depth + by }));
  const next = [...rest.slice(0, at), ...moved, ...rest.slice(at)];
  if (next.every((r, k) => r === rows[k])) return null; // dropped where it already was
  return { ok: true, rows: next, step: 'move', focus: null, folds: expand ? unfold(next, t) : [] };
}

// ---- markdown shortcuts and paste ---------------------------------------------------------

/** @typedef {import('./outline-io.js').Item} Item */

/** @type {[RegExp, Partial<FlatRow>][]} */
const SHORTCUTS = [
  [/^\[ ?\] /, { type: 'todo', checked: false }],
  [/^\[[xX]\] /, { type: 'todo', checked: true }],
  [/^### /, { type: 'h3' }],
  [/^## /, { type: 'h2' }],
  [/^# /, { type: 'h1' }],
  [/^> /, { type: 'quote' }],
];
/** ```` ``` ```` and a space (```` ```python ```` and a space names the language). */
const CODE_FENCE = /^```([A-Za-z0-9_+#.-]*) /;

/**
 * A markdown shortcut typed at the start of a line: `[] `/`[ ] ` todo, `# `…`### ` headings,
 * `> ` quote, ```` ``` ```` code. Returns the props and how many characters to strip.
 * @param {string} content
 * @param {BlockType|undefined} type the row's current type (code blocks take no shortcuts)
 * @returns {{patch: Partial<FlatRow>, strip: number}|null}
 */
export function detectShortcut(content, type) {
  if (type === 'code') return null;
  const fence = CODE_FENCE.exec(content);
  if (fence) return { patch: { type: /** @type {BlockType} */ ('code'), checked: false, language: fence[1] || null }, strip: fence[0].length };
  for (const [re, patch] of SHORTCUTS) {
    const m = re.exec(content);
    if (m && patch.type !== type) return { patch: { checked: false, ...patch }, strip: m[0].length };
  }
  return null;
}

/** @typedef {{depth: number, content: string, type: BlockType, checked: boolean}} PastedLine */

/**
 * Splits pasted text into bullets (a nested Markdown list, or plain indented text: one bullet
 * per non-blank line), `[ ]`/`[x]`, `#`…`###` and `>` turned into types. Depths start at 0
 * and never jump by more than one level.
 * @param {string} text
 * @returns {PastedLine[]}
 */
export function parsePaste(text) {
  return fromMarkdown(text).items.map(({ depth, content, type, checked }) => ({ depth, content, type, checked }));
}

/**
 * Multi-line paste at the caret (selection `from`..`to` replaced): the first line joins the
 * text before the caret, the others become new bullets after this one's children, indented
 * relative to it, and the text after the caret ends up after the last pasted line.
 * Returns null for a single line (the field inserts that itself).
 * @param {FlatRow[]} rows @param {string} id @param {number} from @param {number} to
 * @param {string} text
 * @param {{newId: () => string, lockedBy?: LockedBy}} opts
 * @returns {OpResult|null}
 */
export function pasteText(rows, id, from, to, text, opts) {
  return pasteItems(rows, id, from, to, fromMarkdown(text).items, opts);
}

/**
 * Pastes bullets read from any format (see outline-io.js) at the caret, as pasteText does.
 * @param {FlatRow[]} rows @param {string} id @param {number} from @param {number} to
 * @param {Item[]} lines
 * @param {{newId: () => string, lockedBy?: LockedBy}} opts
 * @returns {OpResult|null}
 */
export function pasteItems(rows, id, from, to, lines, { newId, lockedBy = nobody }) {
  if (lines.length < 2) return null;
  const i = indexOfId(rows, id);
  if (i < 0) return null;
  const holder = lockedBy(id);
  if (holder != null) return refuse(id, holder, 'paste');
  const x = rows[i];
  const head = x.content.slice(0, from);
  const tail = x.content.slice(to);
  const [first, ...more] = lines;
  /** @type {Partial<FlatRow>} */
  const patch = { content: head + first.content };
  if (head === '' && tail === '' && first.type !== 'bullet') {
    patch.type = first.type;
    patch.checked = first.checked;
    patch.language = first.language ?? null;
  }
  const added = more.map((l) =>
    withProps({ id: newId(), depth: x.depth + l.depth, content: l.content, type: l.type, checked: l.checked, language: l.language ?? null }),
  );
  const last = added[added.length - 1];
  const caret = last.content.length;
  last.content += tail;
  if (tail !== '' && more.length === 0) patch.content += tail;
  const next = rows.slice();
  next[i] = withProps(x, patch);
  const folds = x.collapsed && added.some((r) => r.depth > x.depth) ? unfold(next, i) : [];
  next.splice(subtreeEnd(rows, i), 0, ...added);
  return { ok: true, rows: next, step: 'paste', focus: { id: last.id, offset: caret }, folds };
}

/**
 * Bullets inserted as siblings after a bullet's subtree (pasting while whole bullets are
 * selected, importing into a bullet's level).
 * @param {FlatRow[]} rows @param {string|null} afterId null: at the end of the document
 * @param {Item[]} items
 * @param {{newId: () => string, asChildren?: boolean}} opts `asChildren`: as the last children
 * @returns {OpResult|null}
 */
export function insertItemsAfter(rows, afterId, items, { newId, asChildren = false }) {
  if (!items.length) return null;
  const i = afterId == null ? -1 : indexOfId(rows, afterId);
  if (afterId != null && i < 0) return null;
  const depth = i < 0 ? 0 : rows[i].depth + (asChildren ? 1 : 0);
  const at = i < 0 ? rows.length : subtreeEnd(rows, i);
  const added = items.map((l) => withProps({ id: newId(), depth: depth + l.depth, content: l.content, type: l.type, checked: l.checked, language: l.language ?? null }));
  const next = [...rows.slice(0, at), ...added, ...rows.slice(at)];
  const folds = asChildren && i >= 0 ? unfold(next, i) : [];
  const last = added[added.length - 1];
  return { ok: true, rows: next, step: 'paste', focus: { id: last.id, offset: last.content.length }, folds };
}

// ---- whole bullets at once (a block selection) ----------------------------------------------

/**
 * The bullets a selection from shown row `anchor` to shown row `head` covers: the range in
 * shown rows grown to the end of the last bullet's subtree, and its roots (rows whose parent
 * is outside the range) in order.
 * @template {FlatRow} R
 * @param {R[]} shown @param {number} anchor @param {number} head
 * @returns {{from: number, to: number, roots: R[]}}
 */
export function blockRange(shown, anchor, head) {
  const from = Math.max(0, Math.min(anchor, head));
  let to = Math.min(shown.length, Math.max(anchor, head) + 1);
  /** @type {R[]} */
  const roots = [];
  let cover = Infinity;
  for (let k = from; k < to; k++) {
    if (shown[k].depth <= cover) {
      roots.push(shown[k]);
      cover = shown[k].depth;
    }
  }
  const lastRoot = roots[roots.length - 1];
  if (lastRoot) while (to < shown.length && shown[to].depth > lastRoot.depth) to++;
  return { from, to, roots };
}

/**
 * The first locked row among bullets and their subtrees, as a refusal.
 * @param {FlatRow[]} rows @param {string[]} ids @param {LockedBy} lockedBy @param {string} what
 * @returns {OpResult|null}
 */
function lockedAmong(rows, ids, lockedBy, what) {
  for (const id of ids) {
    const i = indexOfId(rows, id);
    if (i < 0) continue;
    const end = subtreeEnd(rows, i);
    for (let k = i; k < end; k++) {
      const h = lockedBy(rows[k].id);
      if (h != null) return refuse(rows[k].id, h, what);
    }
  }
  return null;
}

/**
 * Applies a one-bullet edit to several bullets in turn (in the order given), as one result:
 * bullets it cannot apply to are left as they are; null when none changed.
 * @param {FlatRow[]} rows @param {string[]} ids
 * @param {(rows: FlatRow[], id: string) => OpResult|null} edit
 * @param {Step} step
 * @returns {OpResult|null}
 */
function each(rows, ids, edit, step) {
  let next = rows;
  let changed = false;
  for (const id of ids) {
    const r = edit(next, id);
    if (!r) continue;
    if (!r.ok) return r;
    next = r.rows;
    changed = true;
  }
  return changed ? { ok: true, rows: next, step, focus: null } : null;
}

/**
 * Whether `ids` are siblings in a row: the same depth, each starting where the previous one's
 * subtree ends. Returns their first index and the end of the last one's subtree, or null.
 * @param {FlatRow[]} rows @param {string[]} ids
 */
function siblingRun(rows, ids) {
  if (!ids.length) return null;
  const first = indexOfId(rows, ids[0]);
  if (first < 0) return null;
  const depth = rows[first].depth;
  let at = first;
  for (let k = 0; k < ids.length; k++) {
    if (at >= rows.length || rows[at].id !== ids[k] || rows[at].depth !== depth) return null;
    at = subtreeEnd(rows, at);
  }
  return { first, end: at, depth };
}

/**
 * The first bullet someone holds among `ids`, as a refusal.
 * @param {string[]} ids @param {LockedBy} lockedBy @param {string} what
 */
function lockedRoot(ids, lockedBy, what) {
  for (const id of ids) {
    const h = lockedBy(id);
    if (h != null) return refuse(id, h, what);
  }
  return null;
}

/**
 * Tab on a selection: each bullet under its previous sibling (first to last), as pressing Tab
 * on each in turn would; siblings in a row are done in one pass (1,000 bullets of a
 * 10,000-bullet document in one copy of the list).
 * @param {FlatRow[]} rows @param {string[]} ids roots in document order @param {{lockedBy?: LockedBy}} [o]
 * @returns {OpResult|null}
 */
export function indentMany(rows, ids, { lockedBy = nobody } = {}) {
  const locked = lockedRoot(ids, lockedBy, 'indent');
  if (locked) return locked;
  const run = siblingRun(rows, ids);
  if (!run) return each(rows, ids, (r, id) => indent(r, id, { lockedBy }), 'indent');
  let prev = -1;
  for (let j = run.first - 1; j >= 0 && rows[j].depth >= run.depth; j--) {
    if (rows[j].depth === run.depth) {
      prev = j;
      break;
    }
  }
  // no previous sibling: the first bullet stays, the others go under it
  const from = prev >= 0 ? run.first : subtreeEnd(rows, run.first);
  if (from >= run.end) return null;
  const next = rows.slice();
  for (let k = from; k < run.end; k++) next[k] = withProps(rows[k], { depth: rows[k].depth + 1 });
  const holder = prev >= 0 ? prev : run.first;
  return { ok: true, rows: next, step: 'indent', focus: null, folds: unfold(next, holder) };
}

/**
 * Shift+Tab on a selection (last to first, so their order stays); siblings in a row move in
 * one pass: after their parent's subtree, one level up, the siblings below them staying.
 * @param {FlatRow[]} rows @param {string[]} ids @param {{lockedBy?: LockedBy, minDepth?: number}} [o]
 * @returns {OpResult|null}
 */
export function outdentMany(rows, ids, { lockedBy = nobody, minDepth = 0 } = {}) {
  const can = ids.filter((id) => (rows[indexOfId(rows, id)]?.depth ?? 0) > minDepth);
  const locked = lockedRoot(can, lockedBy, 'outdent');
  if (locked) return locked;
  const run = can.length === ids.length ? siblingRun(rows, can) : null;
  if (!run || run.depth === 0) return each(rows, [...can].reverse(), (r, id) => outdent(r, id, { lockedBy }), 'outdent');
  const [p] = ancestorIndices(rows, run.first);
  const pend = subtreeEnd(rows, p);
  const moved = rows.slice(run.first, run.end).map((r) => withProps(r, { depth: r.depth - 1 }));
  const next = [...rows.slice(0, run.first), ...rows.slice(run.end, pend), ...moved, ...rows.slice(pend)];
  return { ok: true, rows: next, step: 'outdent', focus: null };
}

/** Alt+Shift+↑/↓ on a selection: the bullets move together. */
/** @param {FlatRow[]} rows @param {string[]} ids @param {boolean} up @param {{lockedBy?: LockedBy}} [o] */
export function moveMany(rows, ids, up, { lockedBy = nobody } = {}) {
  const order = up ? ids : [...ids].reverse();
  // the whole block moves only if its leading bullet can
  const lead = (up ? moveUp : moveDown)(rows, order[0], { lockedBy });
  if (!lead || !lead.ok) return lead;
  return each(rows, order, (r, id) => (up ? moveUp : moveDown)(r, id, { lockedBy }), 'move');
}

/**
 * Delete on a selection: the bullets and everything under them. The caret goes to the row
 * above the first one (or the row after, at the top).
 * @param {FlatRow[]} rows @param {string[]} ids @param {{lockedBy?: LockedBy}} [o]
 * @returns {OpResult|null}
 */
export function deleteMany(rows, ids, { lockedBy = nobody } = {}) {
  if (!ids.length) return null;
  const locked = lockedAmong(rows, ids, lockedBy, 'delete');
  if (locked) return locked;
  const gone = new Set();
  for (const id of ids) {
    const i = indexOfId(rows, id);
    if (i < 0) continue;
    const end = subtreeEnd(rows, i);
    for (let k = i; k < end; k++) gone.add(rows[k].id);
  }
  if (!gone.size) return null;
  const first = indexOfId(rows, ids[0]);
  const next = rows.filter((r) => !gone.has(r.id));
  const beforeIdx = first > 0 ? prevVisibleIndex(rows, first) : -1;
  let target = beforeIdx >= 0 && !gone.has(rows[beforeIdx].id) ? rows[beforeIdx] : null;
  for (let k = first; !target && k < rows.length; k++) if (!gone.has(rows[k].id)) target = rows[k];
  return { ok: true, rows: next, step: 'delete', focus: target ? { id: target.id, offset: target.content.length } : null };
}

/**
 * Ctrl+Enter on a selection: every bullet takes the state the first one would take
 * (todo → done → plain bullet).
 * @param {FlatRow[]} rows @param {string[]} ids @param {{lockedBy?: LockedBy}} [o]
 * @returns {OpResult|null}
 */
export function toggleTodoMany(rows, ids, { lockedBy = nobody } = {}) {
  if (!ids.length) return null;
  const locked = ids.map((id) => ({ id, h: lockedBy(id) })).find((x) => x.h != null);
  if (locked) return refuse(locked.id, /** @type {string} */ (locked.h), 'change');
  const first = toggleTodo(rows, ids[0]);
  if (!first || !first.ok) return first;
  const model = first.rows[indexOfId(first.rows, ids[0])];
  const next = rows.slice();
  for (const id of ids) {
    const i = indexOfId(next, id);
    if (i >= 0) next[i] = withProps(next[i], { type: model.type, checked: model.checked, language: model.type === 'code' ? next[i].language : null });
  }
  return { ok: true, rows: next, step: first.step, focus: null };
}

/**
 * Expand or collapse every bullet with children inside a range (the whole document, or a
 * zoomed bullet's subtree). `level`: bullets above that depth (relative to the range) are
 * expanded and those at it collapsed — "show N levels". Folding is the person's own view (`folds`): locks do not matter.
 * @param {FlatRow[]} rows
 * @param {{collapsed?: boolean, level?: number, within?: string|null}} how
 * @returns {OpResult|null}
 */
export function foldAll(rows, { collapsed = false, level, within = null }) {
  let from = 0;
  let to = rows.length;
  let base = 0;
  if (within) {
    const z = indexOfId(rows, within);
    if (z < 0) return null;
    from = z + 1;
    to = subtreeEnd(rows, z);
    base = rows[z].depth + 1;
  }
  let next = rows;
  /** @type {[string, boolean][]} */
  const folds = [];
  for (let k = from; k < to; k++) {
    if (!hasChildren(rows, k)) continue;
    const want = level == null ? collapsed : rows[k].depth - base >= level - 1;
    if (!!rows[k].collapsed === want) continue;
    if (next === rows) next = rows.slice();
    next[k] = withProps(rows[k], { collapsed: want });
    folds.push([rows[k].id, want]);
  }
  return next === rows ? null : { ok: true, rows: next, step: 'fold', focus: null, folds };
}
