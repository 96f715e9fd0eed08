// Editor flat list → ops: compares the editor's new flat list (ids, depths, text, props) with
// the model's rows and returns the few ops that turn one into the other under the rules of
// model.js. Invariant: applying the ops in order to the model gives exactly `next` as rows().

import { nKeysBetween } from './order-key.js';
import { newBlock } from './model.js';

/** @typedef {import('./types.js').Op} Op */
/** @typedef {import('./types.js').Row} Row */
/** @typedef {import('./types.js').Block} Block */
/** @typedef {import('./types.js').FlatRow} FlatRow */
/** @typedef {import('./types.js').BlockProps} BlockProps */
/** @typedef {import('./model.js').DocModel} DocModel */

/**
 * Props a FlatRow may change; `undefined` in a row means "leave as it is". Not `collapsed`:
 * folding is each person's view (folds.js), never an op from the editor's rows.
 */
const PROPS = /** @type {const} */ (['type', 'checked', 'language', 'conflictResolved']);

/** Applying ops to the scratch copy: no leases, no author (the real author is the engine's). */
const SCRATCH_CTX = {
  clientId: 'cl_diff', userId: 'usr_diff', name: '', now: 0,
  heldByOthers: () => false, leasesEnabled: false,
};

/**
 * Depths as the tree allows them: the first row is at 0, and a row at most one deeper than
 * its predecessor (an editor that hands us a deeper row gets it clamped, not an error).
 * @param {FlatRow[]} next @returns {Int32Array}
 */
export function clampDepths(next) {
  const out = new Int32Array(next.length);
  let prev = -1;
  for (let i = 0; i < next.length; i++) {
    const raw = next[i].depth;
    // (the usual depth is a whole number in range: no Math calls for it)
    const d = raw >= 0 && raw <= prev + 1 && raw === (raw | 0) ? raw : Math.max(0, Math.min(Math.floor(raw) || 0, prev + 1));
    out[i] = d;
    prev = d;
  }
  return out;
}

/**
 * Ops turning `model.rows()` into `next`. Unknown ids become inserts (order key between the
 * new neighbours, parent from depth); ids of tombstones are restored first; an id purged by
 * compaction cannot come back, so its text goes to the server's rescue block (a set_content,
 * rule 3) and that row (with any children, placed at top level) will differ from `next`.
 * Removed blocks become one delete per removed subtree root, after every move (so children
 * that stay are moved out first). Throws on duplicate ids in `next`.
 * @param {DocModel} model the current view
 * @param {FlatRow[]} next the editor's new flat list: all live rows in document order
 * @param {() => string} newOpId
 * @returns {Op[]}
 */
export function diffRows(model, next, newOpId) {
  const depths = clampDepths(next);
  const current = model.rows();
  if (sameShape(current, next, depths)) {
    /** @type {Op[]} */
    const ops = [];
    for (let i = 0; i < next.length; i++) {
      const r = next[i];
      // Rows are cached objects: skip the per-prop work when nothing can differ.
      const c = current[i];
      if (r.content === c.content && !propsDiffer(c, r)) continue;
      pushContentOps(ops, /** @type {Block} */ (model.get(r.id)), r, newOpId);
    }
    return ops;
  }
  return windowDiff(model, current, next, depths, newOpId) ?? structuralDiff(model, current, next, depths, newOpId);
}

/** @param {Row[]} current @param {FlatRow[]} next @param {Int32Array} depths */
function sameShape(current, next, depths) {
  if (current.length !== next.length) return false;
  for (let i = 0; i < next.length; i++) {
    if (current[i].id !== next[i].id || current[i].depth !== depths[i]) return false;
  }
  return true;
}

/**
 * Spelled out rather than looped over PROPS: this runs for every row on every keystroke, and
 * fixed property names keep the lookups monomorphic (a loop made the fast path 5× slower).
 * @param {Row|Block} b @param {FlatRow} r
 */
function propsDiffer(b, r) {
  return (
    (r.type !== undefined && r.type !== b.type) ||
    (r.checked !== undefined && r.checked !== b.checked) ||
    (r.language !== undefined && r.language !== b.language) ||
    (r.conflictResolved !== undefined && r.conflictResolved !== b.conflictResolved)
  );
}

/**
 * set_content (baseVersion = the block's version now) and set_props (changed props only).
 * @param {Op[]} ops @param {Block} b @param {FlatRow} r @param {() => string} newOpId
 */
function pushContentOps(ops, b, r, newOpId) {
  if (r.content === b.content && !propsDiffer(b, r)) return;
  if (r.content !== b.content) {
    ops.push({ opId: newOpId(), kind: 'set_content', blockId: b.id, content: r.content, baseVersion: b.version });
  }
  /** @type {Record<string, unknown>} */
  const props = {};
  let any = false;
  for (const p of PROPS) {
    if (r[p] !== undefined && r[p] !== b[p]) {
      props[p] = r[p];
      any = true;
    }
  }
  if (any) ops.push({ opId: newOpId(), kind: 'set_props', blockId: b.id, props: /** @type {BlockProps} */ (props) });
}

/**
 * The usual structural edit (Enter, indent, drag, delete, paste) touches one stretch of the
 * list: rows before it and after it keep their ids and depths. Only that window, rows after
 * it whose parent changed, and the sibling lists they join need ops and keys; every other
 * row is compared with its old self for text and props only. Returns null when ids of
 * tombstones or purged ids come back (the general path handles those with a scratch copy).
 * Duplicate ids throw, as in the general path.
 * @param {DocModel} model @param {Row[]} current @param {FlatRow[]} next @param {Int32Array} depths
 * @param {() => string} newOpId @returns {Op[]|null}
 */
function windowDiff(model, current, next, depths, newOpId) {
  const n = next.length;
  const m = current.length;
  let lo = 0;
  // The same Row object is the same row (id and depth): most of 50,000 rows are compared by
  // identity only. In the prefix a row's clamped depth is its own (the rows before it are the
  // valid current ones); the suffix's first row is checked below.
  while (lo < n && lo < m && (next[lo] === current[lo] || (next[lo].id === current[lo].id && depths[lo] === current[lo].depth))) lo++;
  let suffix = 0;
  while (suffix < n - lo && suffix < m - lo) {
    const a = next[n - 1 - suffix];
    const c = current[m - 1 - suffix];
    if (a !== c && (a.id !== c.id || depths[n - 1 - suffix] !== c.depth)) break;
    suffix++;
  }
  // Clamping can change the depth of the same object only for the suffix's first row (each
  // later one follows a predecessor at its current depth): shrink until that one agrees.
  while (suffix > 0 && depths[n - suffix] !== current[m - suffix].depth) suffix--;
  const hiN = n - suffix; // next window: [lo, hiN)
  const hiC = m - suffix; // current window: [lo, hiC)
  for (let i = lo; i < hiN; i++) {
    const b = model.get(next[i].id);
    if (b ? b.deleted : model.isPurged(next[i].id)) return null;
  }

  // Parent of each row as an index into next (-1 = top level).
  const parentIdx = new Int32Array(n);
  const stack = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) {
    parentIdx[i] = depths[i] === 0 ? -1 : stack[depths[i] - 1];
    stack[depths[i]] = i;
  }
  const parentOf = (/** @type {number} */ i) => (parentIdx[i] < 0 ? null : next[parentIdx[i]].id);

  // Ids of the two windows only: every row outside them is the same row in both lists, so
  // an id is in `next` when it is in the new window or a live block outside the old one.
  /** @type {Set<string>} */
  const oldWindow = new Set();
  for (let j = lo; j < hiC; j++) oldWindow.add(current[j].id);
  /** @type {Set<string>} */
  const nextIds = new Set();
  for (let i = lo; i < hiN; i++) {
    const id = next[i].id;
    const b = model.get(id);
    if (nextIds.has(id) || (b && !b.deleted && !oldWindow.has(id))) throw new Error(`diffRows: duplicate id ${id}`);
    nextIds.add(id);
  }
  const inNext = (/** @type {string} */ id) => nextIds.has(id) || (!oldWindow.has(id) && model.get(id)?.deleted === false);

  // Sibling lists that gain rows or change order: those of window rows, and of rows after
  // the window whose parent changed (a row before the window keeps all its predecessors).
  // Only the rows from the window to the last such row can need a key: a list gets those of
  // its children, between its nearest child before and after them, which stay (anchors).
  /** @type {Map<number, number>} parent index → last row of the range */
  const dirty = new Map();
  for (let i = lo; i < hiN; i++) dirty.set(parentIdx[i], hiN - 1);
  // A row after the window can change parent only while no row between the window and it
  // is shallower than its parent would be (its parent search would stop there, at a row
  // both lists share); after a top-level row none can.
  let shallowest = Infinity;
  for (let i = hiN; i < n && shallowest > 0; i++) {
    const d = depths[i];
    if (d - 1 < shallowest && parentOf(i) !== current[i - hiN + hiC].parentId) {
      dirty.set(parentIdx[i], Math.max(dirty.get(parentIdx[i]) ?? i, i));
    }
    if (d < shallowest) shallowest = d;
  }
  /** @type {Map<string|null, {list: number[], anchored: boolean}>} */
  const wanted = new Map();
  for (const [pi, to] of dirty) {
    const childDepth = pi < 0 ? 0 : depths[pi] + 1;
    const from = Math.max(lo, pi + 1);
    /** @type {number[]} */
    const list = [];
    for (let k = from - 1; k > pi && k >= 0; k--) {
      if (depths[k] < childDepth) break;
      if (parentIdx[k] === pi) {
        list.push(k);
        break;
      }
    }
    for (let i = from; i <= to; i++) if (parentIdx[i] === pi) list.push(i);
    for (let k = to + 1; k < n; k++) {
      if (depths[k] < childDepth) break;
      if (parentIdx[k] === pi) {
        list.push(k);
        break;
      }
    }
    wanted.set(pi < 0 ? null : next[pi].id, { list, anchored: true });
  }
  const keys = assignKeys(model, next, wanted, lo, hiN);
  if (!keys) return null;
  // Keys go only to rows of the lists above: outside [keyFrom, keyTo] and the window a row
  // has none, and is compared with its old self without reading the (mostly empty) keys.
  let keyFrom = n;
  let keyTo = -1;
  for (const { list } of wanted.values()) {
    for (const i of list) {
      if (i < keyFrom) keyFrom = i;
      if (i > keyTo) keyTo = i;
    }
  }

  /** @type {Op[]} */
  const ops = [];
  for (let i = 0; i < n; i++) {
    const r = next[i];
    const key = i < keyFrom || i > keyTo ? undefined : keys[i];
    if (key === undefined && (i < lo || i >= hiN)) {
      // In place: only text and props can differ (the old row says what they were).
      const c = i < lo ? current[i] : current[i - hiN + hiC];
      if (r === c) continue;
      if (r.content !== c.content || propsDiffer(c, r)) pushContentOps(ops, /** @type {Block} */ (model.get(r.id)), r, newOpId);
      continue;
    }
    const parentId = parentOf(i);
    const b = model.get(r.id);
    /** @type {Block} */
    let after;
    if (!b) {
      /** @type {Op} */
      const op = { opId: newOpId(), kind: 'insert', blockId: r.id, parentId, orderKey: /** @type {string} */ (key), content: r.content };
      if (r.type !== undefined && r.type !== 'bullet') op.type = r.type;
      if (r.checked) op.checked = true;
      if (r.language != null) op.language = r.language;
      ops.push(op);
      after = insertedBlock(op);
    } else {
      // A window row without a key already sits under its parent in the right order.
      if (key !== undefined && (b.parentId !== parentId || b.orderKey !== key)) {
        ops.push({ opId: newOpId(), kind: 'move', blockId: r.id, parentId, orderKey: key });
      }
      after = b;
    }
    pushContentOps(ops, after, r, newOpId);
  }

  // Only rows of the old window can be gone: one delete per removed subtree root.
  for (let j = lo; j < hiC; j++) {
    const row = current[j];
    if (nextIds.has(row.id)) continue;
    if (row.parentId === null || inNext(row.parentId) || model.get(row.parentId)?.deleted !== false) {
      ops.push({ opId: newOpId(), kind: 'delete', blockId: row.id });
    }
  }
  return ops;
}

/**
 * The general path: structure changed. Ops are applied to a scratch copy as they are made,
 * so each decision sees the state the previous ops produced (restores, relocations).
 * @param {DocModel} model @param {Row[]} current @param {FlatRow[]} next @param {Int32Array} depths
 * @param {() => string} newOpId @returns {Op[]}
 */
function structuralDiff(model, current, next, depths, newOpId) {
  const n = next.length;
  /** @type {(string|null)[]} */
  const parents = new Array(n);
  /** @type {string[]} */
  const stack = [];
  const nextIds = new Set();
  for (let i = 0; i < n; i++) {
    const id = next[i].id;
    if (nextIds.has(id)) throw new Error(`diffRows: duplicate id ${id}`);
    nextIds.add(id);
    // stack[d] = the latest row at depth d; entries deeper than this row are stale but unread.
    parents[i] = depths[i] === 0 ? null : stack[depths[i] - 1];
    stack[depths[i]] = id;
  }

  // Desired children per parent, in order (indexes into next).
  /** @type {Map<string|null, {list: number[], anchored: boolean}>} */
  const wanted = new Map();
  for (let i = 0; i < n; i++) {
    const w = wanted.get(parents[i]);
    if (w) w.list.push(i);
    else wanted.set(parents[i], { list: [i], anchored: false });
  }

  const keys = /** @type {(string|undefined)[]} */ (assignKeys(model, next, wanted));

  // A scratch copy is only needed when ids of tombstones come back (a restore also brings
  // back what the same delete removed, so later decisions must see it) or purged ids show
  // up. Otherwise the model is read directly: nothing below reads a block the ops changed.
  let needScratch = false;
  for (let i = 0; i < n && !needScratch; i++) {
    const b = model.get(next[i].id);
    needScratch = b ? b.deleted : model.isPurged(next[i].id);
  }
  const scratch = needScratch ? model.clone() : null;
  const view = scratch ?? model;
  /** @type {Op[]} */
  const ops = [];
  /** @param {Op} op */
  const emit = (op) => {
    ops.push(op);
    if (scratch) scratch.applyOp(op, SCRATCH_CTX);
  };
  for (let i = 0; i < n; i++) {
    const r = next[i];
    const parentId = parents[i];
    let b = view.get(r.id);
    if (!b && view.isPurged(r.id)) {
      // Cannot come back under this id; the rules rescue the text into a new block.
      emit({ opId: newOpId(), kind: 'set_content', blockId: r.id, content: r.content, baseVersion: 0 });
      continue;
    }
    if (b && b.deleted) {
      emit({ opId: newOpId(), kind: 'restore', blockId: r.id });
      b = /** @type {Block} */ (view.get(r.id));
    }
    const key = keys[i];
    /** @type {Block} */
    let after;
    if (!b) {
      /** @type {Op} */
      const op = { opId: newOpId(), kind: 'insert', blockId: r.id, parentId, orderKey: /** @type {string} */ (key), content: r.content };
      if (r.type !== undefined && r.type !== 'bullet') op.type = r.type;
      if (r.checked) op.checked = true;
      if (r.language != null) op.language = r.language;
      emit(op);
      after = scratch ? /** @type {Block} */ (scratch.get(r.id)) : insertedBlock(op);
    } else {
      if (key !== undefined && (b.parentId !== parentId || b.orderKey !== key)) {
        emit({ opId: newOpId(), kind: 'move', blockId: r.id, parentId, orderKey: key });
      } else if (key === undefined && b.parentId !== parentId) {
        // Only a restored block can get here (its place is decided by the rules): move it.
        emit({ opId: newOpId(), kind: 'move', blockId: r.id, parentId, orderKey: view.keyAtEnd(parentId) });
      }
      after = /** @type {Block} */ (view.get(r.id)); // a move changes neither text nor props
    }
    const before = ops.length;
    pushContentOps(ops, after, r, newOpId);
    if (scratch) for (let k = before; k < ops.length; k++) scratch.applyOp(ops[k], SCRATCH_CTX);
  }

  // One delete per removed subtree root, after every move. Removed blocks were never moved,
  // so the model's rows tell their parents, unless a restore brought more blocks back.
  const live = scratch ? scratch.rows() : current;
  for (const row of live) {
    if (nextIds.has(row.id)) continue;
    const parent = row.parentId === null ? undefined : view.get(row.parentId);
    if (row.parentId === null || nextIds.has(row.parentId) || !parent || parent.deleted) {
      const b = view.get(row.id);
      if (b && !b.deleted) emit({ opId: newOpId(), kind: 'delete', blockId: row.id });
    }
  }
  return ops;
}

/**
 * New order keys for the rows that must be placed (inserted, moved, restored); rows that can
 * stay keep their key and get none. Per parent, the children that already sit under it in
 * the right relative order (a longest increasing subsequence, by their order keys) stay; each
 * run of others gets keys between its stable neighbours. An `anchored` list is a stretch of a
 * parent's children whose first and last entries may be rows outside the window (`lo`…`hiN`):
 * those stay whatever happens, and only rows between their keys can stay with them.
 * @param {DocModel} model @param {FlatRow[]} next
 * @param {Map<string|null, {list: number[], anchored: boolean}>} wanted
 * @param {number} [lo] @param {number} [hiN] the window of an anchored list
 * @returns {(string|undefined)[]|null} the new key of each row of `next` that needs one, by
 *   index; null when an anchored list has no room between its anchors
 */
function assignKeys(model, next, wanted, lo = 0, hiN = next.length) {
  /** @type {(string|undefined)[]} */
  const keys = new Array(next.length);
  for (const [parentId, { list, anchored }] of wanted) {
    if (!anchored && sameLiveChildren(model, model.childIds(parentId), next, list)) continue; // all stay: the common case
    /** @param {number} i */
    const blockOf = (i) => model.get(next[i].id);
    /** @param {number} i */
    const isHere = (i) => {
      const b = blockOf(i);
      return b !== undefined && !b.deleted && b.parentId === parentId;
    };
    /** @type {Set<number>} */
    const fixed = new Set();
    if (anchored) {
      for (const k of [list[0], list[list.length - 1]]) if (k !== undefined && (k < lo || k >= hiN) && isHere(k)) fixed.add(k);
    }
    const lower = list[0] !== undefined && fixed.has(list[0]) ? /** @type {Block} */ (blockOf(list[0])) : null;
    const upper = list.length > 1 && fixed.has(list[list.length - 1]) ? /** @type {Block} */ (blockOf(list[list.length - 1])) : null;
    // Rows already under the parent, strictly between the anchors, ranked by sibling order.
    const here = list.filter((i) => {
      if (fixed.has(i) || !isHere(i)) return false;
      const b = /** @type {Block} */ (blockOf(i));
      return (!lower || siblingOrder(lower, b) < 0) && (!upper || siblingOrder(b, upper) < 0);
    });
    const ranked = here.map((i, k) => k).sort((a, b) => siblingOrder(/** @type {Block} */ (blockOf(here[a])), /** @type {Block} */ (blockOf(here[b]))));
    const rank = new Array(here.length);
    ranked.forEach((k, r) => (rank[k] = r));
    const stable = new Set(longestIncreasing(rank).map((k) => here[k]));
    for (const k of fixed) stable.add(k);
    /** @param {number} i */
    const keyOf = (i) => /** @type {Block} */ (model.get(next[i].id)).orderKey;
    let j = 0;
    /** @type {string|null} */
    let prevKey = null;
    while (j < list.length) {
      if (stable.has(list[j])) {
        prevKey = keyOf(list[j]);
        j++;
        continue;
      }
      // A run of rows to place, up to the next stable sibling whose key leaves room.
      let end = j;
      while (end < list.length && !stable.has(list[end])) end++;
      for (;;) {
        const nextKey = end < list.length ? keyOf(list[end]) : null;
        if (nextKey === null || prevKey === null || prevKey < nextKey) {
          try {
            const fresh = nKeysBetween(prevKey, nextKey, end - j);
            for (let k = j; k < end; k++) keys[list[k]] = fresh[k - j];
            break;
          } catch {
            if (nextKey === null) throw new Error('diffRows: no order key left at the end of a list');
          }
        }
        // No room between the anchors (equal keys): the caller takes the general path.
        if (fixed.has(list[end])) return null;
        // Equal keys (or no room): the stable neighbour moves too.
        stable.delete(list[end]);
        end++;
        while (end < list.length && !stable.has(list[end])) end++;
      }
      prevKey = keys[list[end - 1]] ?? prevKey;
      j = end;
    }
  }
  return keys;
}

/** Siblings' order (childIds): by order key, then ID. @param {Block} a @param {Block} b */
function siblingOrder(a, b) {
  if (a.orderKey !== b.orderKey) return a.orderKey < b.orderKey ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * The block an insert makes under a live parent (rules.rs `insert` + `apply_op`), for the
 * props comparison without a scratch copy.
 * @param {import('./types.js').InsertOp} op @returns {Block}
 */
function insertedBlock(op) {
  const b = newBlock(op.blockId, op.parentId ?? null, op.orderKey, op.content ?? '', 0, '');
  if (op.type != null) b.type = op.type;
  b.checked = op.checked ?? false;
  b.language = op.language ?? null;
  return b;
}

/**
 * True when the live children under a parent are exactly the wanted ones, in order.
 * @param {DocModel} model @param {readonly string[]} siblings @param {FlatRow[]} next @param {number[]} list
 */
function sameLiveChildren(model, siblings, next, list) {
  let j = 0;
  for (const id of siblings) {
    if (/** @type {Block} */ (model.get(id)).deleted) continue;
    if (j >= list.length || next[list[j]].id !== id) return false;
    j++;
  }
  return j === list.length;
}

/**
 * Indexes of a longest strictly increasing subsequence (patience sorting, O(n log n)).
 * @param {number[]} xs @returns {number[]}
 */
export function longestIncreasing(xs) {
  /** @type {number[]} */
  const tails = []; // tails[k] = index in xs of the smallest tail of an increasing run of length k+1
  const prev = new Array(xs.length).fill(-1);
  for (let i = 0; i < xs.length; i++) {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (xs[tails[mid]] < xs[i]) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) prev[i] = tails[lo - 1];
    tails[lo] = i;
  }
  /** @type {number[]} */
  const out = [];
  for (let k = tails.length > 0 ? tails[tails.length - 1] : -1; k >= 0; k = prev[k]) out.push(k);
  return out.reverse();
}
