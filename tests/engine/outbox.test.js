// @ts-check
// outbox.js: merging of typing, what may go on the wire, rebasing held-back text ops, pending.
import { describe, it, expect } from 'vitest';
import { Outbox, textTarget, baseVersionOf } from '../../static/engine/outbox.js';
import { conflictCopyId } from '../../static/engine/model.js';
import { Journal } from '../../static/engine/journal.js';

/** @returns {{box: Outbox, stale: {n: number}, deleted: any[]}} */
function make() {
  const stale = { n: 0 };
  /** @type {any[]} */
  const deleted = [];
  const store = /** @type {any} */ ({ deleteQueued: async (/** @type {string} */ _d, /** @type {any[]} */ keys) => deleted.push(...keys) });
  const box = new Outbox({ docId: 'doc_t', clientId: () => 'cl_me', store, journal: new Journal(null, 'doc_t', () => 'cl_me'), onViewStale: () => stale.n++, onStorageError: () => {} });
  return { box, stale, deleted };
}
/** @param {string} opId @param {string} blockId @param {string} content @param {number} baseVersion @returns {any} */
const text = (opId, blockId, content, baseVersion) => ({ opId, kind: 'set_content', blockId, content, baseVersion });
/** @param {any[]} items */
const save = (items) => items.forEach((i) => (i.saved = true));

describe('Outbox', () => {
  it('merges typing into the last unsent text op of the same bullet, keeping its opId and first baseVersion', () => {
    const { box } = make();
    save(box.add([text('op_1', 'blk_a', 'h', 3)]));
    const changed = box.add([text('op_2', 'blk_a', 'hi', 4)]);
    expect(box.items).toHaveLength(1);
    expect(changed[0].rec.op).toEqual(text('op_1', 'blk_a', 'hi', 3));
    box.items[0].sent = true; // on the wire once: frozen
    box.add([text('op_3', 'blk_a', 'hi!', 4)]);
    expect(box.items.map((i) => i.rec.op.opId)).toEqual(['op_1', 'op_3']);
    expect(box.items.map((i) => i.rec.n)).toEqual([1, 2]);
  });

  it('sendable: a prefix of saved ops, ending before a text op whose bullet has an earlier one open; pending counts saved unacked ops', () => {
    const { box } = make();
    const [a] = box.add([text('op_1', 'blk_a', 'x', 1)]);
    box.items[0].sent = true;
    const [b, c] = box.add([{ opId: 'op_2', kind: 'delete', blockId: 'blk_z' }, text('op_3', 'blk_a', 'xy', 1)]);
    expect(box.sendable()).toEqual([]); // nothing on disk yet
    expect(box.pending()).toBe(0);
    save([a, b, c]);
    box.changed();
    expect(box.sendable()).toEqual([a, b]);
    expect(box.pending()).toBe(3);
    box.setAcked(a, 7);
    expect(box.pending()).toBe(2);
    expect(box.sendable()).toEqual([b]); // op_3 waits for op_1's outcome
    expect(box.takeWrites().put).toEqual([a.rec]);
  });

  it('rebaseNext: applied → the next text op of the bullet gets the new version; conflict → all later ones move to the copy', () => {
    const { box, stale } = make();
    const items = box.add([text('op_1', 'blk_a', 'a', 1)]);
    items[0].sent = true;
    box.add([text('op_2', 'blk_a', 'ab', 1)]);
    box.items[1].sent = true;
    box.add([text('op_3', 'blk_a', 'abc', 7)]);
    // Queued behind an earlier op of the bullet: based on what that one leaves (not on the
    // view's version, which counted every merged keystroke).
    expect(box.items.map((i) => baseVersionOf(i.rec.op))).toEqual([1, 2, 3]);
    box.rebaseNext(box.items[0], { version: 5 }); // someone else's edit came between
    expect(box.items.map((i) => baseVersionOf(i.rec.op))).toEqual([1, 5, 3]);
    const copyId = conflictCopyId('doc_t', 'op_2');
    const entry = { seq: 9, opId: 'op_2', kind: 'set_content', clientId: 'cl_me', userId: 'u', at: 0, effects: [{ e: /** @type {const} */ ('block'), block: /** @type {any} */ ({ id: copyId }) }] };
    expect(box.outcomeOf(box.items[1].rec.op, entry)).toEqual({ copyId });
    box.rebaseNext(box.items[1], { copyId });
    expect(box.items[2].rec.op).toEqual(text('op_3', copyId, 'abc', 1));
    expect(stale.n).toBe(2);
  });

  it('drop removes items now or in the next state transaction', async () => {
    const { box, deleted } = make();
    const [a, b] = box.add([text('op_1', 'blk_a', 'a', 1), { opId: 'op_2', kind: 'delete', blockId: 'blk_b' }]);
    box.drop([a], false);
    expect(box.takeWrites().del).toEqual([{ clientId: 'cl_me', n: 1 }]);
    box.drop([b]);
    await Promise.resolve();
    expect(deleted).toEqual([{ clientId: 'cl_me', n: 2 }]);
    expect(box.items).toEqual([]);
    expect(textTarget({ opId: 'o', kind: 'set_title', title: 't', baseVersion: 1 })).toBe('title');
  });
});
