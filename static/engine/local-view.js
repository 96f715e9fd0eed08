// What this tab shows: the confirmed state with the own queue re-applied by the server's
// rules (model.js), and its rows as handed to the editor (view-rows.js). Invariants: after
// `rebuild` the model is exactly confirmed + queue; an own op applied here in between
// (`apply`) is the same op the queue holds, applied by the same rules; a row object the
// editor gets back unchanged means the row is unchanged (so diffs start from the rows).

import { TITLE_LEASE } from './model.js';
import { diffRows } from './diff.js';
import { inverseOps } from './undo.js';
import { newOpId } from './ids.js';
import { ViewRows, changedInPlace, placedBlock } from './view-rows.js';

/** @typedef {import('./model.js').DocModel} DocModel */
/** @typedef {import('./types.js').Op} Op */
/** @typedef {import('./types.js').Row} Row */
/** @typedef {import('./types.js').FlatRow} FlatRow */
/** @typedef {import('./types.js').Lock} Lock */
/** @typedef {import('./model.js').OpContext} OpContext */

/** @typedef {import('./types.js').LogEntry} LogEntry */
/** @typedef {import('./types.js').Block} Block */

/**
 * The same block as far as anything shown or decided goes (the server's times differ).
 * @param {Block|undefined} a @param {Block} b
 */
function sameBlock(a, b) {
  return !!a && a.parentId === (b.parentId ?? null) && a.orderKey === b.orderKey &&
    a.content === b.content && a.version === b.version && !!a.deleted === !!b.deleted &&
    (a.type ?? 'bullet') === (b.type ?? 'bullet') && !!a.checked === !!b.checked &&
    !!a.collapsed === !!b.collapsed && (a.language ?? null) === (b.language ?? null) &&
    (a.conflictOf ?? null) === (b.conflictOf ?? null) &&
    !!a.conflictResolved === !!b.conflictResolved;
}

/** More rows changed than this in one commit: the whole list is diffed (see quickDiff). */
const QUICK_DIFF_MAX_ROWS = 32;

export class LocalView {
  /** @param {DocModel} model @param {import('./folds.js').Folds|null} [folds] this person's folds */
  constructor(model, folds = null) {
    this.model = model;
    /** The rows as handed out (Row identity = unchanged row), with this person's folds. */
    this.rows = new ViewRows(folds);
    /** Something the view depends on changed (queue, leases, icon): rebuild it. */
    this.stale = false;
  }

  /** The rows for the editor. @returns {Row[]} */
  rowList() {
    return this.rows.get(this.model);
  }

  /** Folds changed for these bullets: their rows are replaced in place. @param {string[]} ids */
  refolded(ids) {
    if (ids.length) this.rows.patch(this.model, ids);
  }

  /**
   * view = confirmed + queue, by the server's rules.
   * @param {DocModel} confirmed @param {Op[]} queued @param {OpContext} ctx
   */
  rebuild(confirmed, queued, ctx) {
    const v = confirmed.clone();
    for (const op of queued) v.applyOp(op, ctx);
    // A block the old view did not show is certainly a new row.
    const old = this.model;
    this.model = v;
    this.rows.invalidate((id) => {
      const b = old.get(id);
      return !b || b.deleted;
    });
    this.stale = false;
  }

  /**
   * Whether confirmed + `entries` + the rest of the queue is exactly what this view shows
   * already, so the entries need no rebuild (at 50,000 bullets a rebuild is a clone of the
   * model and every row, tens of milliseconds, after every own edit's echo). True when the
   * entries follow the confirmed state without a gap (no one else's op in between), are the
   * queue's first ops in order, and each block as the last of them leaves it is the view's —
   * unless a later queued op of this tab changes that block again. A lease the view did not know of (the
   * server made a conflict copy, or refused) fails the last test.
   * @param {LogEntry[]} entries @param {number} confirmedSeq @param {Op[]} queued
   */
  shows(entries, confirmedSeq, queued) {
    if (this.stale || entries.length === 0 || entries.length > queued.length) return false;
    if (entries[0].seq !== confirmedSeq + 1) return false;
    /** Blocks a later queued op targets: the view may rightly differ from the entry there. */
    const later = new Set();
    for (let i = entries.length; i < queued.length; i++) {
      const op = queued[i];
      if ('blockId' in op) later.add(op.blockId);
      else return false;
    }
    /** Each block as the entries leave it (a later entry may change it again). */
    const left = new Map();
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i];
      if (entry.opId !== queued[i].opId || entry.seq !== confirmedSeq + 1 + i) return false;
      for (const e of entry.effects) {
        if (e.e !== 'block') return false;
        left.set(e.block.id, e.block);
      }
    }
    for (const [id, block] of left) {
      if (!later.has(id) && !sameBlock(this.model.get(id), block)) return false;
    }
    return true;
  }

  /**
   * A keystroke merged into the queued text op before it: the server will move that text's
   * version once for all of them, so the view's version is brought back to that — else the
   * view would count every keystroke, differ from confirmed + queue, and need a rebuild at
   * the echo to agree with the server again.
   * @param {Op} op the merged op (its base the first keystroke's)
   */
  settle(op) {
    const version = 'baseVersion' in op ? op.baseVersion + 1 : null;
    if (version === null) return;
    if (op.kind === 'set_title') {
      if (this.model.titleVersion > version) this.model.titleVersion = version;
      return;
    }
    if (op.kind !== 'set_content') return;
    const b = this.model.get(op.blockId);
    if (!b || b.version <= version || b.content !== op.content) return;
    this.model.setVersion(b.id, version);
    this.rows.patch(this.model, [b.id]);
  }

  /**
   * Applies own ops (only these: no rebuild) and returns their inverse, each taken against
   * the view just before its op (undo runs them last-first); empty unless `record`.
   * @param {Op[]} ops @param {OpContext} ctx @param {boolean} record
   * @returns {Op[]}
   */
  apply(ops, ctx, record) {
    /** @type {Op[]} */
    const inverse = [];
    /** Blocks whose rows changed in place; null: the rows must be recomputed. @type {string[]|null} */
    let inPlace = [];
    /** New bullets whose rows can be spliced in (Enter). @type {string[]} */
    const added = [];
    /** Bullets moved with their subtrees (Tab, Shift+Tab). @type {string[]} */
    const moved = [];
    for (const op of ops) {
      if (record) inverse.unshift(...inverseOps(this.model, op, newOpId));
      const before = 'blockId' in op ? this.model.get(op.blockId) : undefined;
      const { effects } = this.model.applyOp(op, ctx);
      if (inPlace) {
        const placed = placedBlock(op, effects);
        const fresh = op.kind === 'insert' ? placed : null;
        const shifted = op.kind === 'move' ? placed : null;
        const ids = placed ? null : changedInPlace(op, before, effects);
        if (fresh && moved.length === 0) added.push(fresh);
        else if (shifted && added.length === 0) moved.push(shifted);
        else if (ids) inPlace.push(...ids.filter((id) => !added.includes(id)));
        else inPlace = null;
      }
    }
    if (inPlace) {
      // In place first (positions as they were), then the new or moved rows (each one's row
      // is built from its block as it is now, text typed into it included).
      this.rows.patch(this.model, inPlace);
      this.rows.insert(this.model, added);
      this.rows.move(this.model, moved);
    } else {
      // Inserted bullets were not shown before (Enter, paste): no lookup among the old rows.
      const inserted = new Set(ops.flatMap((op) => (op.kind === 'insert' ? [op.blockId] : [])));
      this.rows.invalidate((id) => inserted.has(id));
    }
    return inverse;
  }

  /**
   * The ops that turn the view into the editor's new flat list.
   * @param {FlatRow[]} next
   * @returns {Op[]}
   */
  diff(next) {
    return this.quickDiff(next) ?? diffRows(this.diffModel(), next, newOpId);
  }

  /**
   * diffRows' answer in O(changed) for the typing case: the editor hands back the view's
   * own Row objects for every unchanged row, and the few other rows keep their id and depth.
   * Those alone go through diffRows as a list of their own (all at depth 0, so its
   * same-shape path runs: per row, set_content and set_props of what differs, exactly as
   * for the whole list). null when the list is not of that kind: diff all of it.
   * @param {FlatRow[]} next
   * @returns {Op[]|null}
   */
  quickDiff(next) {
    const rows = this.rowList();
    if (next.length !== rows.length) return null;
    /** @type {number[]} */
    const at = [];
    for (let i = 0; i < next.length; i++) {
      const r = next[i];
      if (r === rows[i]) continue;
      if (r.id !== rows[i].id || r.depth !== rows[i].depth || at.length === QUICK_DIFF_MAX_ROWS) return null;
      at.push(i);
    }
    if (at.length === 0) return [];
    const current = at.map((i) => ({ ...rows[i], depth: 0 }));
    const changed = at.map((i) => ({ ...next[i], depth: 0 }));
    return diffRows(this.diffModel(current), changed, newOpId);
  }

  /**
   * The view as diffRows sees it: `rows()` answers with the view's own rows (equal by value
   * to the model's, and already computed) or the given ones, everything else is the model.
   * @param {Row[]} [given]
   * @returns {DocModel}
   */
  diffModel(given) {
    const view = this.model;
    const rows = given ?? this.rowList();
    /** Methods bound to the view once, not per call (diff calls `get` per row). */
    const bound = new Map();
    return new Proxy(view, {
      get(target, key) {
        if (key === 'rows') return () => rows;
        const v = Reflect.get(target, key, target);
        if (typeof v !== 'function') return v;
        let f = bound.get(key);
        if (!f) bound.set(key, (f = v.bind(target)));
        return f;
      },
    });
  }

  /**
   * The lock of another client that one of these ops would touch, if any. Inserts never
   * need a lease (a new bullet below a locked one is fine); a delete needs the whole
   * subtree free, as on the server (rule 6).
   * @param {Op[]} ops @param {Map<string, Lock>} locks
   * @returns {Lock|null}
   */
  lockedBy(ops, locks) {
    if (locks.size === 0) return null;
    for (const op of ops) {
      if (op.kind === 'insert') continue;
      if (op.kind === 'set_title') {
        const l = locks.get(TITLE_LEASE);
        if (l) return l;
        continue;
      }
      if (!op.blockId) continue;
      if (op.kind === 'delete') {
        for (const b of this.model.subtree(op.blockId)) {
          const l = locks.get(b.id);
          if (l && !b.deleted) return l;
        }
        continue;
      }
      const l = locks.get(op.blockId);
      if (l) return l;
    }
    return null;
  }

  /**
   * The ops that resolve a conflict copy, or null when the copy is gone:
   * `accept` — the original takes the copy's text (against the original's current version)
   * and the copy goes (into a deleted original nothing is written: the copy stays, marked
   * resolved — writing would bring the original back with its own text overwritten);
   * `discard` — the copy goes; `keep` — the copy stays as an ordinary bullet, resolved.
   * `guard` is the block whose lock also refuses it (discard: the original's).
   * @param {'accept'|'discard'|'keep'} how @param {string} copyId
   * @returns {{ops: Op[], step: string, guard: string|null}|null}
   */
  resolveConflict(how, copyId) {
    const copy = this.model.get(copyId);
    if (!copy || copy.deleted || !copy.conflictOf) return null;
    /** @type {Op} */
    const resolved = { opId: newOpId(), kind: 'set_props', blockId: copyId, props: { conflictResolved: true } };
    /** @type {Op} */
    const drop = { opId: newOpId(), kind: 'delete', blockId: copyId };
    if (how === 'keep') return { ops: [resolved], step: 'props', guard: null };
    if (how === 'discard') return { ops: [drop], step: 'delete', guard: copy.conflictOf };
    if (copy.conflictOf === TITLE_LEASE) {
      /** @type {Op} */
      const title = { opId: newOpId(), kind: 'set_title', title: copy.content, baseVersion: this.model.titleVersion };
      return { ops: [title, drop], step: 'merge', guard: null };
    }
    const orig = this.model.get(copy.conflictOf);
    if (!orig || orig.deleted) return { ops: [resolved], step: 'props', guard: null };
    /** @type {Op} */
    const text = { opId: newOpId(), kind: 'set_content', blockId: orig.id, content: copy.content, baseVersion: orig.version };
    return { ops: [text, drop], step: 'merge', guard: null };
  }
}
