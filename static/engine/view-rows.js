// The engine's rows (EngineState.rows) for its view. Invariants: `get(view)` always equals
// `view.rows()` by value; a Row object is handed out again exactly when its values did not
// change (same object = unchanged row), and the array itself stays the same when no row changed.
// Edits of content/props of rows already shown are patched in O(changed); a few new bullets
// (Enter) are spliced in after their previous sibling's subtree, a pasted stretch of many in
// one splice, moved subtrees (Tab) taken out and put back with their depths shifted;
// anything else recomputes through `view.rows()` once, reusing every Row object whose values
// are unchanged.

/** @typedef {import('./types.js').Row} Row */
/** @typedef {import('./types.js').Op} Op */
/** @typedef {import('./types.js').Block} Block */
/** @typedef {import('./types.js').Effect} Effect */
/** @typedef {import('./model.js').DocModel} DocModel */

import { toRow } from './model.js';

export class ViewRows {
  /** @param {{get(id: string): boolean|undefined, size: number}|null} [folds] this person's folds (folds.js) over the document's `collapsed` */
  constructor(folds = null) {
    this.folds = folds;
    /** @type {Row[]} the rows last computed (valid for the view while `valid`) */
    this.rows = [];
    this.valid = false;
    /** Block ID → position in `rows`; built on first need, kept while the order is unchanged. @type {Map<string, number>|null} */
    this.index = null;
    /** IDs certainly not in `rows` (see invalidate); null: not known. @type {((id: string) => boolean)|null} */
    this.isNew = null;
  }

  /**
   * The view changed in a way not described by `patch` (rebuilt, structure changed).
   * `isNew` (optional) answers true only for IDs certainly not in the rows last computed
   * (new bullets): they need no lookup. Kept only for the first change after a computation.
   * @param {(id: string) => boolean} [isNew]
   */
  invalidate(isNew) {
    this.isNew = this.valid ? isNew ?? null : null;
    this.valid = false;
  }

  /** @param {DocModel} view @returns {Row[]} */
  get(view) {
    if (this.valid) return this.rows;
    const folds = this.folds;
    let fresh = view.rows();
    if (folds && folds.size > 0) {
      // The model's rows are its cache: folded ones are copied, never changed.
      fresh = fresh.map((r) => {
        const c = folds.get(r.id);
        return c === undefined || c === r.collapsed ? r : { ...r, collapsed: c };
      });
    }
    const { rows, sameOrder } = reuseRows(this.rows, fresh, this.isNew);
    this.isNew = null;
    if (!sameOrder) this.index = null;
    this.rows = rows;
    this.valid = true;
    return rows;
  }

  /**
   * The view changed only content/props of these blocks, all shown before and after in the
   * same place (see `changedInPlace`): their Row objects are replaced, every other one kept.
   * @param {DocModel} view @param {Iterable<string>} ids
   */
  patch(view, ids) {
    if (!this.valid) return;
    const list = [...ids];
    if (list.length === 0) return;
    let index = this.index;
    // A few rows right after a structural edit (Enter splits a bullet): found by a scan, not
    // by an index of every row that the next structural edit would throw away again.
    const rows = this.rows;
    const scan = !index && list.length <= 4;
    if (!index && !scan) {
      index = new Map();
      for (let i = 0; i < rows.length; i++) index.set(rows[i].id, i);
      this.index = index;
    }
    /** @param {string} id */
    const positionOf = (id) => {
      if (index) return index.get(id);
      const i = rows.findIndex((r) => r.id === id);
      return i < 0 ? undefined : i;
    };
    /** @type {Row[]|null} */
    let next = null;
    for (const id of list) {
      const at = positionOf(id);
      const b = view.get(id);
      if (at === undefined || !b || b.deleted) {
        // Not where `changedInPlace` said: recompute rather than guess.
        this.valid = false;
        return;
      }
      const old = (next ?? this.rows)[at];
      const row = patchedRow(old, b, this.folds?.get(id));
      if (row === old) continue;
      next ??= this.rows.slice();
      next[at] = row;
    }
    if (next) this.rows = next;
  }

  /**
   * New bullets (Enter, a bullet or a few pasted): each row goes in right after its previous
   * live sibling's subtree, or first under its parent, and the parent now has children —
   * O(rows) in array moves instead of rebuilding every row from the model. Anything not
   * found where it must be (or too many at once) recomputes rather than guesses.
   * @param {DocModel} view @param {string[]} ids in the order they were inserted
   */
  insert(view, ids) {
    if (!this.valid || ids.length === 0) return;
    if (ids.length > MAX_SPLICED) {
      if (!this.#insertRun(view, ids)) this.invalidate((id) => ids.includes(id));
      return;
    }
    const rows = this.rows.slice();
    for (const id of ids) {
      const b = view.get(id);
      if (!b || b.deleted || view.childIds(id).some((c) => view.get(c)?.deleted === false)) return this.#lost();
      const place = placeIn(rows, view, b);
      if (!place) return this.#lost();
      rows.splice(place.pos, 0, this.#headRow(b, place.depth, false));
      if (place.parentAt >= 0 && !rows[place.parentAt].hasChildren) rows[place.parentAt] = { ...rows[place.parentAt], hasChildren: true };
    }
    this.rows = rows;
    this.index = null;
  }

  /**
   * Bullets moved with their subtrees (Tab, Shift+Tab, Alt+Shift+↑/↓, a drag): each subtree's
   * rows are taken out and put back after the new previous sibling's subtree (or first under
   * the new parent), their depths shifted; the old and new parent's `hasChildren` follow.
   * @param {DocModel} view @param {string[]} ids in the order they were moved
   */
  move(view, ids) {
    if (!this.valid || ids.length === 0) return;
    if (ids.length > MAX_SPLICED) {
      this.invalidate();
      return;
    }
    const rows = this.rows.slice();
    for (const id of ids) {
      const b = view.get(id);
      const from = indexIn(rows, id);
      if (!b || b.deleted || from < 0) return this.#lost();
      let end = from + 1;
      while (end < rows.length && rows[end].depth > rows[from].depth) end++;
      const subtree = rows.splice(from, end - from);
      const place = placeIn(rows, view, b);
      if (!place) return this.#lost();
      const shift = place.depth - subtree[0].depth;
      const head = this.#headRow(b, place.depth, subtree[0].hasChildren);
      rows.splice(place.pos, 0, head, ...subtree.slice(1).map((r) => (shift ? { ...r, depth: r.depth + shift } : r)));
      for (const parent of [subtree[0].parentId, b.parentId]) {
        if (parent === null) continue;
        const q = indexIn(rows, parent);
        if (q < 0) return this.#lost();
        const has = view.childIds(parent).some((c) => view.get(c)?.deleted === false);
        if (rows[q].hasChildren !== has) rows[q] = { ...rows[q], hasChildren: has };
      }
    }
    this.rows = rows;
    this.index = null;
  }

  /**
   * Many new bullets in one stretch (a paste): consecutive live siblings under one parent
   * (the tops), each with only new bullets below it — their rows, in document order (folded
   * ones' children included, as every row is), go in
   * with one splice where the first top belongs (O(rows) once instead of per bullet, and no
   * recomputation of every row). False, changing nothing, when the bullets are not such a
   * stretch (the caller recomputes).
   * @param {DocModel} view @param {string[]} ids
   * @returns {boolean}
   */
  #insertRun(view, ids) {
    const fresh = new Set(ids);
    const tops = ids.filter((id) => {
      const b = view.get(id);
      return !!b && !b.deleted && (b.parentId === null || !fresh.has(b.parentId));
    });
    const first = view.get(tops[0] ?? '');
    if (!first) return false;
    // The tops follow each other among the parent's live children (deleted ones between
    // are no rows); only that stretch is looked at, not every sibling.
    const siblings = view.childIds(first.parentId);
    let k = siblings.indexOf(first.id);
    if (k < 0) return false;
    for (const id of tops) {
      while (k < siblings.length && siblings[k] !== id && view.get(siblings[k])?.deleted !== false) k++;
      if (siblings[k] !== id) return false;
      k++;
    }
    const place = placeIn(this.rows, view, first);
    if (!place) return false;
    /** @type {Row[]} */
    const run = [];
    let seen = 0;
    // Pre-order below the tops (rows below a folded bullet are rows too: the outline leaves
    // them out when it draws), every bullet counted.
    /** @type {[string, number][]} id, depth */
    const stack = tops.map((id) => /** @type {[string, number]} */ ([id, place.depth])).reverse();
    while (stack.length) {
      const [id, depth] = /** @type {[string, number]} */ (stack.pop());
      const b = view.get(id);
      if (!b || !fresh.has(id)) return false;
      seen++;
      if (b.deleted) continue;
      const kids = view.childIds(id).filter((c) => view.get(c)?.deleted === false);
      run.push(this.#headRow(b, depth, kids.length > 0));
      for (let k = kids.length - 1; k >= 0; k--) stack.push([kids[k], depth + 1]);
    }
    if (seen !== fresh.size) return false;
    const rows = this.rows.slice();
    rows.splice(place.pos, 0, ...run);
    const parentAt = place.parentAt;
    if (parentAt >= 0 && !rows[parentAt].hasChildren) rows[parentAt] = { ...rows[parentAt], hasChildren: true };
    this.rows = rows;
    this.index = null;
    return true;
  }

  /** A placed block's own row, with this person's fold. @param {Block} b @param {number} depth @param {boolean} hasChildren */
  #headRow(b, depth, hasChildren) {
    const row = toRow(b, depth, hasChildren);
    const fold = this.folds?.get(b.id);
    if (fold !== undefined) row.collapsed = fold;
    return row;
  }

  #lost() {
    this.valid = false;
  }
}

/** Position of a row by ID (-1: not shown). @param {Row[]} rows @param {string} id */
function indexIn(rows, id) {
  return rows.findIndex((r) => r.id === id);
}

/**
 * Where a block's row goes among `rows` (its own subtree taken out): right after its previous
 * live sibling's subtree, else first under its parent. null: the parent or that sibling is
 * not among the rows (the caller recomputes).
 * @param {Row[]} rows @param {DocModel} view @param {Block} b
 * @returns {{pos: number, depth: number, parentAt: number}|null}
 */
function placeIn(rows, view, b) {
  const parentAt = b.parentId === null ? -1 : indexIn(rows, b.parentId);
  if (b.parentId !== null && parentAt < 0) return null;
  const siblings = view.childIds(b.parentId);
  let pos = parentAt + 1;
  for (let k = siblings.indexOf(b.id) - 1; k >= 0; k--) {
    if (view.get(siblings[k])?.deleted !== false) continue;
    const p = indexIn(rows, siblings[k]);
    if (p < 0) return null;
    pos = p + 1;
    while (pos < rows.length && rows[pos].depth > rows[p].depth) pos++;
    break;
  }
  return { pos, depth: parentAt < 0 ? 0 : rows[parentAt].depth + 1, parentAt };
}

/** At most this many new bullets are spliced in one by one; more (a paste) go in as one stretch, or recompute. */
const MAX_SPLICED = 20;

/**
 * The bullet an applied insert or move placed, when that is all it did: one live block, the
 * op's own (no revival, no conflict copy, no rescue). null: any other op or effect.
 * @param {Op} op @param {Effect[]} effects @returns {string|null}
 */
export function placedBlock(op, effects) {
  if ((op.kind !== 'insert' && op.kind !== 'move') || effects.length !== 1) return null;
  const e = effects[0];
  return e.e === 'block' && e.block.id === op.blockId && !e.block.deleted ? e.block.id : null;
}

/**
 * The blocks whose rows an applied op changed in place: only set_content/set_props/set_title,
 * and only when each block effect is the op's own block, live before and after, under the
 * same parent with the same order key (so no row appears, goes, moves or changes depth or
 * hasChildren). null: anything else (inserts, revivals, conflict copies, moves, deletes).
 * @param {Op} op @param {Block|undefined} before the op's block before it was applied
 * @param {Effect[]} effects what applyOp returned
 * @returns {string[]|null}
 */
export function changedInPlace(op, before, effects) {
  if (op.kind !== 'set_content' && op.kind !== 'set_props' && op.kind !== 'set_title') return null;
  /** @type {string[]} */
  const ids = [];
  for (const e of effects) {
    if (e.e === 'title') continue;
    if (e.e !== 'block') return null;
    const b = e.block;
    if (
      !before || b.id !== before.id || before.deleted || b.deleted ||
      b.parentId !== before.parentId || b.orderKey !== before.orderKey
    ) return null;
    ids.push(b.id);
  }
  return ids;
}

/**
 * `old` with the block's current fields (depth and hasChildren kept); `old` itself when
 * nothing differs. Every Row field other than depth/hasChildren is the block's field of the
 * same name, as model.js `toRow` builds it — `collapsed` is this person's fold when given.
 * @param {Row} old @param {Block} b @param {boolean|undefined} fold @returns {Row}
 */
function patchedRow(old, b, fold) {
  const src = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (b));
  const row = /** @type {Record<string, unknown>} */ ({ ...old });
  let differs = false;
  for (const k of Object.keys(row)) {
    const folded = k === 'collapsed' && fold !== undefined;
    if (k === 'depth' || k === 'hasChildren' || (!folded && !(k in src))) continue;
    const v = folded ? fold : src[k];
    if (!sameValue(k, row[k], v)) differs = true;
    row[k] = v;
  }
  return differs ? /** @type {Row} */ (/** @type {unknown} */ (row)) : old;
}

/**
 * `next` with every row equal by value to the previous row of the same ID replaced by that
 * previous object; `prev` itself when nothing changed at all. Walks both lists together
 * (rows deleted are skipped by looking a few rows ahead); a row not found that way (new,
 * or moved) is looked up in an ID map of `prev`, built once, unless `isNew` says it is new.
 * @param {Row[]} prev @param {Row[]} next
 * @param {((id: string) => boolean)|null} [isNew] true only for IDs certainly not in `prev`
 * @returns {{rows: Row[], sameOrder: boolean}} sameOrder: same IDs at the same positions
 */
export function reuseRows(prev, next, isNew = null) {
  if (prev === next) return { rows: next, sameOrder: true };
  if (next.length === 0 || prev.length === 0) return { rows: next, sameOrder: prev.length === next.length };
  // Every Row has the fields toRow gives it: one key list for all comparisons.
  const keys = Object.keys(next[0]);
  let sameOrder = prev.length === next.length;
  let allSame = sameOrder;
  /** @type {Map<string, number>|null} */
  let at = null;
  const out = new Array(next.length);
  let j = 0;
  for (let i = 0; i < next.length; i++) {
    const n = next[i];
    /** @type {Row|undefined} */
    let p;
    if (j < prev.length && prev[j].id === n.id) p = prev[j++];
    else {
      sameOrder = false;
      allSame = false;
      const k = findAhead(prev, j, n.id);
      if (k >= 0) {
        p = prev[k];
        j = k + 1;
      } else if (isNew && isNew(n.id)) {
        p = undefined;
      } else {
        if (!at) {
          at = new Map();
          for (let m = 0; m < prev.length; m++) at.set(prev[m].id, m);
        }
        const m = at.get(n.id);
        p = m === undefined ? undefined : prev[m];
        if (m !== undefined) j = m + 1;
      }
    }
    if (p && sameRow(keys, p, n)) out[i] = p;
    else {
      out[i] = n;
      allSame = false;
    }
  }
  return { rows: allSame ? prev : out, sameOrder };
}

const LOOK_AHEAD = 8;

/** Index of `id` among the next few rows of `rows` from `from`, or -1. @param {Row[]} rows @param {number} from @param {string} id */
function findAhead(rows, from, id) {
  const end = Math.min(rows.length, from + LOOK_AHEAD);
  for (let k = from + 1; k < end; k++) if (rows[k].id === id) return k;
  return -1;
}

/** The fields of a Row (types.js); a Row with others is compared field by field generically. */
const ROW_FIELDS = 13;

/** @param {string[]} keys @param {Row} a @param {Row} b */
function sameRow(keys, a, b) {
  if (keys.length === ROW_FIELDS) {
    // Spelled out: fixed property names are several times faster than keyed lookups here,
    // and this runs for every row after each structural change.
    return (
      a.content === b.content && a.depth === b.depth && a.hasChildren === b.hasChildren &&
      a.version === b.version && a.parentId === b.parentId && a.type === b.type &&
      a.checked === b.checked && a.collapsed === b.collapsed && a.language === b.language &&
      a.conflictOf === b.conflictOf && a.conflictResolved === b.conflictResolved &&
      a.id === b.id && sameValue('conflictAuthor', a.conflictAuthor, b.conflictAuthor)
    );
  }
  const x = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (a));
  const y = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (b));
  for (const k of keys) if (!sameValue(k, x[k], y[k])) return false;
  return true;
}

/** Row fields are primitives, except conflictAuthor ({userId, name}), compared by value. @param {string} k @param {unknown} a @param {unknown} b */
function sameValue(k, a, b) {
  if (a === b) return true;
  if (k !== 'conflictAuthor' || !a || !b) return false;
  const p = /** @type {{userId: string, name: string}} */ (a);
  const q = /** @type {{userId: string, name: string}} */ (b);
  return p.userId === q.userId && p.name === q.name;
}
