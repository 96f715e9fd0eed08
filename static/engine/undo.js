// Undo/redo of the user's own changes (PROTOCOL §7): each step keeps its forward ops and their
// inverses; undo sends the inverses as ordinary new ops. Invariant: a step is never applied
// blindly over someone else's work — if another client changed, holds or removed a bullet
// the step touches, the whole step is skipped with a reason and dropped from the history.

/** @typedef {import('./types.js').Op} Op */
/** @typedef {import('./types.js').Block} Block */
/** @typedef {import('./types.js').BlockProps} BlockProps */
/** @typedef {import('./model.js').DocModel} DocModel */

/** @typedef {{kind: string, forward: Op[], inverse: Op[], at: number}} Step */
/**
 * A step in the history; `afterForward` / `afterInverse`: how its targets looked right after
 * our last redo / undo of it (unset until then: derived from the ops themselves).
 * @typedef {Step & {afterForward?: Map<string, Expect>, afterInverse?: Map<string, Expect>}} Entry
 */
/** @typedef {{blockId: string, reason: 'changed'|'locked'|'gone'}} Skipped */
/** @typedef {{ops: Op[], skipped: Skipped[]}} UndoResult */

/** Ops applied to scratch copies here: no leases, no author (the engine sends the real ones). */
const SCRATCH_CTX = {
  clientId: 'cl_undo', userId: 'usr_undo', name: '', now: 0,
  heldByOthers: () => false, leasesEnabled: false,
};

const TYPING_PAUSE_MS = 1000;

/**
 * The ops that undo `op`, given the view before it. Empty when the op changes nothing (or
 * when the rules would send its text elsewhere, e.g. a rescue of a purged block).
 * baseVersions here are what the op leaves behind; undo() refreshes them when sending.
 * @param {DocModel} model the view BEFORE the op
 * @param {Op} op
 * @param {() => string} newOpId
 * @returns {Op[]}
 */
export function inverseOps(model, op, newOpId) {
  const id = op.kind === 'set_title' ? '' : op.blockId;
  const b = op.kind === 'set_title' ? undefined : model.get(id);
  switch (op.kind) {
    case 'insert':
      return b || model.isPurged(id) ? [] : [{ opId: newOpId(), kind: 'delete', blockId: id }];
    case 'delete':
      return b && !b.deleted ? [{ opId: newOpId(), kind: 'restore', blockId: id }] : [];
    case 'restore':
      return b && b.deleted ? [{ opId: newOpId(), kind: 'delete', blockId: id }] : [];
    case 'set_content': {
      if (!b) return [];
      /** @type {Op[]} */
      const out = [];
      if (b.content !== op.content) {
        out.push({ opId: newOpId(), kind: 'set_content', blockId: id, content: b.content, baseVersion: b.version + 1 });
      }
      // set_content revives a tombstone; undoing it deletes the block again.
      if (b.deleted) out.push({ opId: newOpId(), kind: 'delete', blockId: id });
      return out;
    }
    case 'move':
      if (!b || (b.parentId === (op.parentId ?? null) && b.orderKey === op.orderKey)) return [];
      return [{ opId: newOpId(), kind: 'move', blockId: id, parentId: b.parentId, orderKey: b.orderKey }];
    case 'set_props': {
      if (!b) return [];
      /** @type {Record<string, unknown>} */
      const old = {};
      let any = false;
      const props = /** @type {Record<string, unknown>} */ (op.props ?? {});
      const current = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (b));
      for (const p of Object.keys(props)) {
        if (props[p] !== undefined && props[p] !== current[p]) {
          old[p] = current[p];
          any = true;
        }
      }
      return any ? [{ opId: newOpId(), kind: 'set_props', blockId: id, props: /** @type {BlockProps} */ (old) }] : [];
    }
    case 'set_title':
      return model.title === op.title
        ? []
        : [{ opId: newOpId(), kind: 'set_title', title: model.title, baseVersion: model.titleVersion + 1 }];
    default:
      return [];
  }
}

/**
 * Inverses of a whole step (several ops in order): each op's inverse is taken against the
 * view the earlier ops produced, and the result runs in reverse order.
 * @param {DocModel} model the view BEFORE the ops
 * @param {Op[]} ops
 * @param {() => string} newOpId
 * @returns {Op[]}
 */
export function inverseOfOps(model, ops, newOpId) {
  const scratch = model.clone();
  /** @type {Op[]} */
  let out = [];
  for (const op of ops) {
    out = [...inverseOps(scratch, op, newOpId), ...out];
    scratch.applyOp(op, SCRATCH_CTX);
  }
  return out;
}

/**
 * What a list of own ops leaves each touched target looking like, so that a later undo can
 * tell whether someone else changed it since. Target 'title' stands for the title.
 * @typedef {{content?: string, parentId?: string|null, orderKey?: string,
 *   props?: Record<string, unknown>, live?: boolean, title?: string}} Expect
 * With `state` (the view right after the ops), the values are read from it, since an op
 * can change more than it names (a delete takes a restored child with it).
 * @param {Op[]} ops @param {DocModel} [state] @returns {Map<string, Expect>}
 */
function expectations(ops, state) {
  /** @type {Map<string, Expect>} */
  const out = new Map();
  for (const op of ops) {
    const id = op.kind === 'set_title' ? 'title' : op.blockId;
    const e = out.get(id) ?? {};
    out.set(id, e);
    switch (op.kind) {
      case 'insert':
        e.content = op.content;
        e.live = true;
        break;
      case 'set_content':
        e.content = op.content;
        e.live = true;
        break;
      case 'move':
        e.parentId = op.parentId ?? null;
        e.orderKey = op.orderKey;
        break;
      case 'set_props':
        e.props = { ...e.props, ...op.props };
        break;
      case 'delete':
        e.live = false;
        break;
      case 'restore':
        e.live = true;
        break;
      case 'set_title':
        e.title = op.title;
        break;
    }
  }
  if (state) {
    for (const [id, e] of out) {
      if (id === 'title') {
        if (e.title !== undefined) e.title = state.title;
        continue;
      }
      const b = state.get(id);
      if (!b) continue;
      const cur = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (b));
      if (e.content !== undefined) e.content = b.content;
      if (e.parentId !== undefined) [e.parentId, e.orderKey] = [b.parentId, b.orderKey];
      if (e.props) for (const p of Object.keys(e.props)) e.props[p] = cur[p];
      if (e.live !== undefined) e.live = !b.deleted;
    }
  }
  return out;
}

/**
 * Merges consecutive text changes of one target into one op that keeps the first
 * baseVersion (what the user saw when typing started), as the send queue does.
 * @param {Op[]} ops @returns {Op[]}
 */
function collapseText(ops) {
  /** @type {Op[]} */
  const out = [];
  for (const op of ops) {
    const last = out[out.length - 1];
    if (last && last.kind === 'set_content' && op.kind === 'set_content' && last.blockId === op.blockId) {
      out[out.length - 1] = { ...op, baseVersion: last.baseVersion };
    } else if (last && last.kind === 'set_title' && op.kind === 'set_title') {
      out[out.length - 1] = { ...op, baseVersion: last.baseVersion };
    } else out.push(op);
  }
  return out;
}

/** @param {Step} step @returns {string|null} the one target of a pure text step, else null */
function textTarget(step) {
  let target = null;
  for (const op of step.forward) {
    const t = op.kind === 'set_content' ? op.blockId : op.kind === 'set_title' ? 'title' : null;
    if (t == null || (target !== null && t !== target)) return null;
    target = t;
  }
  return target;
}

export class UndoHistory {
  /** @param {{limit?: number}} [options] 200 steps per tab and document by default */
  constructor({ limit = 200 } = {}) {
    this.limit = limit;
    /** @type {Entry[]} */
    this._undo = [];
    /** @type {Entry[]} */
    this._redo = [];
    /**
     * The version our own latest change gave each block (record, undo, redo): a block now
     * past it was changed by someone else.
     * @type {Map<string, number>}
     */
    this._ownVersion = new Map();
  }

  get canUndo() {
    return this._undo.length > 0;
  }

  get canRedo() {
    return this._redo.length > 0;
  }

  clear() {
    this._undo = [];
    this._redo = [];
    this._ownVersion.clear();
  }

  /**
   * Records a step (its forward ops as sent, its inverses from inverseOps/inverseOfOps).
   * 'typing' steps on the same single target merge while less than 1 s apart; any new
   * step clears redo; beyond the limit the oldest step is forgotten.
   * @param {Step} step
   */
  record(step) {
    if (step.forward.length === 0 && step.inverse.length === 0) return;
    this._redo = [];
    this._noteOwn(step.forward);
    const last = this._undo[this._undo.length - 1];
    if (
      last && step.kind === 'typing' && last.kind === 'typing' &&
      step.at - last.at < TYPING_PAUSE_MS && textTarget(step) !== null && textTarget(step) === textTarget(last)
    ) {
      // One step until a pause: the first inverse (text before typing started) is kept.
      last.forward = collapseText([...last.forward, ...step.forward]);
      last.at = step.at;
      return;
    }
    this._undo.push({ kind: step.kind, forward: collapseText(step.forward), inverse: step.inverse, at: step.at });
    if (this._undo.length > this.limit) this._undo.splice(0, this._undo.length - this.limit);
  }

  /**
   * Records ops about to be applied as one step, their inverses taken against `viewBefore`
   * in undo order (the safe way to call record).
   * @param {DocModel} viewBefore @param {string} kind @param {Op[]} forward @param {number} at
   * @param {() => string} newOpId
   */
  recordOps(viewBefore, kind, forward, at, newOpId) {
    this.record({ kind, forward, inverse: inverseOfOps(viewBefore, forward, newOpId), at });
  }

  /**
   * Ops undoing the last own step, or the reasons it was skipped (then it is dropped; the
   * next call goes on with the step before it).
   * @param {DocModel} model the current view
   * @param {(blockId: string) => boolean} isHeldByOther
   * @param {() => string} newOpId
   * @returns {UndoResult}
   */
  undo(model, isHeldByOther, newOpId) {
    const step = this._undo.pop();
    if (!step) return { ops: [], skipped: [] };
    const expect = step.afterForward ?? expectations(step.forward);
    const [res, after] = this._replay(model, isHeldByOther, newOpId, expect, step.inverse, false);
    if (res.skipped.length === 0) this._redo.push({ ...step, afterInverse: after });
    return res;
  }

  /**
   * Ops redoing the last undone step; same checks as undo.
   * @param {DocModel} model @param {(blockId: string) => boolean} isHeldByOther @param {() => string} newOpId
   * @returns {UndoResult}
   */
  redo(model, isHeldByOther, newOpId) {
    const step = this._redo.pop();
    if (!step) return { ops: [], skipped: [] };
    const expect = step.afterInverse ?? expectations(step.inverse);
    const [res, after] = this._replay(model, isHeldByOther, newOpId, expect, step.forward, true);
    if (res.skipped.length === 0) this._undo.push({ ...step, afterForward: after });
    return res;
  }

  /** @param {Op[]} ops */
  _noteOwn(ops) {
    for (const op of ops) {
      if (op.kind === 'insert') this._ownVersion.set(op.blockId, 1);
      if (op.kind === 'set_content') {
        const id = op.blockId;
        const v = op.baseVersion + 1;
        this._ownVersion.set(id, Math.max(v, this._ownVersion.get(id) ?? 0));
      }
    }
  }

  /**
   * Checks that the targets still look as our last change left them, then makes fresh ops
   * from `todo` against the current view.
   * @param {DocModel} model @param {(blockId: string) => boolean} isHeldByOther
   * @param {() => string} newOpId @param {Map<string, Expect>} expect how our last change left
   * the targets @param {Op[]} todo @param {boolean} isRedo
   * @returns {[UndoResult, Map<string, Expect>]} the result and how `todo` leaves the targets
   */
  _replay(model, isHeldByOther, newOpId, expect, todo, isRedo) {
    /** @type {Skipped[]} */
    const skipped = [];
    const skip = (/** @type {string} */ blockId, /** @type {Skipped['reason']} */ reason) => {
      if (!skipped.some((s) => s.blockId === blockId)) skipped.push({ blockId, reason });
    };
    for (const [id, e] of expect) {
      const why = this._check(model, isHeldByOther, id, e);
      if (why) skip(id, why);
    }
    // Each op is checked against the view the earlier ops of the step leave (a redo
    // restores a parent before moving a bullet back under it).
    const scratch = model.clone();
    /** @type {Op[]} */
    const ops = [];
    for (const op of todo) {
      const id = op.kind === 'set_title' ? 'title' : op.blockId;
      if (isHeldByOther(id)) skip(id, 'locked');
      if (op.kind === 'delete') {
        // The server refuses a delete when anyone holds a bullet of the subtree.
        for (const b of scratch.get(id) ? scratch.subtree(id) : []) {
          if (!b.deleted && isHeldByOther(b.id)) skip(b.id, 'locked');
        }
      }
      if (op.kind === 'move' && op.parentId != null) {
        const p = scratch.get(op.parentId);
        if (!p || p.deleted) skip(id, 'gone');
      }
      if (op.kind !== 'set_title' && op.kind !== 'insert' && !scratch.get(id)) skip(id, 'gone');
      /** @type {Op} */
      let fresh = { ...op, opId: newOpId() };
      const cur = 'blockId' in op ? scratch.get(op.blockId) : undefined;
      if (fresh.kind === 'set_content') fresh.baseVersion = cur ? cur.version : 0;
      if (fresh.kind === 'set_title') fresh.baseVersion = scratch.titleVersion;
      if (isRedo && fresh.kind === 'insert' && cur) {
        // The undo left a tombstone under this id: bring it back instead of re-inserting.
        if (!cur.deleted) continue;
        fresh = { opId: fresh.opId, kind: 'restore', blockId: cur.id };
      }
      ops.push(fresh);
      scratch.applyOp(fresh, SCRATCH_CTX);
    }
    if (skipped.length > 0) return [{ ops: [], skipped }, new Map()];
    this._noteOwn(ops);
    return [{ ops, skipped }, expectations(ops, scratch)];
  }

  /**
   * Why a target no longer looks as our own last change left it, or null.
   * @param {DocModel} model @param {(blockId: string) => boolean} isHeldByOther
   * @param {string} id @param {Expect} e @returns {Skipped['reason']|null}
   */
  _check(model, isHeldByOther, id, e) {
    if (isHeldByOther(id)) return 'locked';
    if (id === 'title' && e.title !== undefined) return model.title === e.title ? null : 'changed';
    const b = model.get(id);
    if (!b) return 'gone';
    // Someone else deleted what we changed: reviving it would undo their delete.
    if (e.live === true && b.deleted) return 'gone';
    if (e.content !== undefined && b.content !== e.content) return 'changed';
    const own = this._ownVersion.get(id);
    if (own !== undefined && b.version > own) return 'changed';
    if (e.parentId !== undefined && (b.parentId !== e.parentId || b.orderKey !== e.orderKey)) return 'changed';
    if (e.props) {
      const cur = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (b));
      for (const [p, v] of Object.entries(e.props)) if (v !== undefined && cur[p] !== v) return 'changed';
    }
    return null;
  }
}
