// The person's edits in this tab, before they are queued: each one is checked (role, others'
// locks), applied to the view by the server's rules, and recorded as an undo step with its
// inverse. Owns the undo history and the journal's draft (text typed but not yet handed over).
// Invariants: a refused edit changes nothing (no view change, no queue entry, no undo step)
// and says why; an edit that reached the view reaches the queue in the same call (`applied`).

import { UndoHistory } from './undo.js';
import { newOpId } from './ids.js';

/** @typedef {import('./types.js').Op} Op */
/** @typedef {import('./types.js').EditResult} EditResult */
/** @typedef {import('./types.js').FlatRow} FlatRow */
/** @typedef {import('./types.js').Lock} Lock */
/** @typedef {import('./local-view.js').LocalView} LocalView */
/** @typedef {import('./journal.js').Journal} Journal */
/** @typedef {import('./notices.js').Notices} Notices */

/**
 * @typedef {object} EditsDeps
 * @property {LocalView} local
 * @property {Journal} journal
 * @property {Notices} notices
 * @property {() => string|null} role
 * @property {() => Map<string, Lock>} locks
 * @property {() => any} context the context own ops are applied in (model.js)
 * @property {(ops: Op[]) => void} applied ops now in the view: claim, queue, persist, show
 * @property {() => void} changed a refusal or a notice to show
 */

export class LocalEdits {
  /** @type {EditsDeps} */
  #o;

  /** @param {EditsDeps} o */
  constructor(o) {
    this.#o = o;
    this.history = new UndoHistory();
  }

  /**
   * The editor's one write path: the new flat list is diffed into ops, then as submit.
   * @param {FlatRow[]} next @param {string} step @returns {EditResult}
   */
  commitRows(next, step) {
    return this.#refuseIfViewer() ?? this.submit(this.#o.local.diff(next), step);
  }

  /**
   * Text typed into a bullet's field that the editor hands over later (after the frame is
   * painted): kept synchronously in the journal as the op it would become, so a crash in
   * between loses nothing. The next commit (or any edit) replaces it.
   * @param {string} blockId @param {string} content
   */
  noteTyping(blockId, content) {
    if (this.#o.role() === 'viewer') return;
    const b = this.#o.local.model.get(blockId);
    if (!b || b.deleted || b.content === content) return;
    const prev = this.#o.journal.draft;
    const opId = prev && prev.kind === 'set_content' && prev.blockId === blockId ? prev.opId : newOpId();
    this.#o.journal.setDraft({ opId, kind: 'set_content', blockId, content, baseVersion: b.version });
  }

  /** Ops built by the caller: checked, applied, one undo step. @param {Op[]} ops @param {string} step @returns {EditResult} */
  submit(ops, step) {
    // What was typed is in these ops now (or was refused): no draft to recover.
    this.#o.journal.setDraft(null);
    const refused = this.#refuseIfViewer();
    if (refused) return refused;
    if (ops.length === 0) return { ok: true, ops };
    const locked = this.#o.local.lockedBy(ops, this.#o.locks());
    return locked ? this.#refuseLocked(locked) : this.#apply(ops, step, true);
  }

  /** @param {string} text @returns {EditResult} */
  setTitle(text) {
    const refused = this.#refuseIfViewer();
    if (refused) return refused;
    const view = this.#o.local.model;
    if (text === view.title) return { ok: true, ops: [] };
    /** @type {Op} */
    const op = { opId: newOpId(), kind: 'set_title', title: text, baseVersion: view.titleVersion };
    const locked = this.#o.local.lockedBy([op], this.#o.locks());
    return locked ? this.#refuseLocked(locked) : this.#apply([op], 'typing', true);
  }

  /**
   * A conflict copy accepted, discarded or kept; refused while another client holds either.
   * @param {'accept'|'discard'|'keep'} how @param {string} copyId @returns {EditResult}
   */
  resolveConflict(how, copyId) {
    const refused = this.#refuseIfViewer();
    if (refused) return refused;
    const plan = this.#o.local.resolveConflict(how, copyId);
    if (!plan) return this.#told(this.#o.notices.invalid('That conflict copy is gone.'));
    const locks = this.#o.locks();
    const locked = (plan.guard && locks.get(plan.guard)) || this.#o.local.lockedBy(plan.ops, locks);
    return locked ? this.#refuseLocked(locked) : this.#apply(plan.ops, plan.step, true);
  }

  /**
   * Undo or redo, skipping steps whose bullets someone else changed or holds (said once).
   * @param {'undo'|'redo'} which
   * @returns {{done: boolean, skipped: {blockId: string, reason: string}[]}}
   */
  undoRedo(which) {
    if (this.#o.role() === 'viewer') return { done: false, skipped: [] };
    const locks = this.#o.locks();
    const held = (/** @type {string} */ id) => locks.has(id);
    const view = this.#o.local.model;
    const { ops, skipped } = which === 'undo'
      ? this.history.undo(view, held, newOpId)
      : this.history.redo(view, held, newOpId);
    if (skipped.length) {
      this.#o.notices.note(skipped.length === 1
        ? `One ${which} step was skipped: someone else changed or holds that bullet.`
        : `${skipped.length} ${which} steps were skipped: someone else changed or holds those bullets.`);
    }
    if (ops.length) this.#apply(ops, which, false);
    else this.#o.changed();
    return { done: ops.length > 0, skipped };
  }

  /**
   * Applies own ops to the view (only these: no rebuild), records the undo step with their
   * inverse, then hands them on to be queued.
   * @param {Op[]} ops @param {string} step @param {boolean} record @returns {EditResult}
   */
  #apply(ops, step, record) {
    const ctx = this.#o.context();
    const inverse = this.#o.local.apply(ops, ctx, record);
    if (record) this.history.record({ kind: step, forward: ops, inverse, at: ctx.now });
    this.#o.applied(ops);
    return { ok: true, ops };
  }

  /** @returns {EditResult|null} */
  #refuseIfViewer() {
    return this.#o.role() === 'viewer' ? this.#told(this.#o.notices.viewer()) : null;
  }

  /** @param {Lock} lock @returns {EditResult} */
  #refuseLocked(lock) {
    return this.#told(this.#o.notices.locked(lock));
  }

  /** A refusal, shown now. @param {EditResult} r */
  #told(r) {
    this.#o.changed();
    return r;
  }
}
