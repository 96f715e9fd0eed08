// @ts-check
// journal.js: what is typed but not yet on disk is held synchronously, let go of exactly when
// IndexedDB committed it, and merged into the queue exactly once.
import { describe, it, expect } from 'vitest';
import { Journal, readJournal, mergeJournal, journalOwners, journalCount, clearJournal } from '../../static/engine/journal.js';
import { memoryStorage } from './memory-storage.js';

/** @param {number} n @param {string} opId @param {string} content @returns {any} */
const rec = (n, opId, content) => ({
  docId: 'doc_j', clientId: 'cl_j', n, ackedSeq: null,
  op: { opId, kind: 'set_content', blockId: 'blk_1', content, baseVersion: 3 },
});

describe('Journal', () => {
  it('holds a record from put until IndexedDB committed that exact record', () => {
    const s = memoryStorage();
    const j = new Journal(s, 'doc_j', () => 'cl_j');
    const v1 = rec(1, 'op_1', 'h');
    j.put([v1]);
    expect(readJournal(s, 'doc_j', 'cl_j').records).toEqual([v1]);
    // Typing merged into the same op while its first write was under way.
    const v2 = rec(1, 'op_1', 'he');
    j.put([v2]);
    j.committed([v1]); // the older version reached disk: the newer one must stay
    expect(readJournal(s, 'doc_j', 'cl_j').records).toEqual([v2]);
    j.committed([v2]);
    expect(s.map.size).toBe(0);
  });

  it('a draft is replaced by the records of the commit that took its text', () => {
    const s = memoryStorage();
    const j = new Journal(s, 'doc_j', () => 'cl_j');
    j.setDraft(rec(0, 'op_d', 'typed').op);
    expect(readJournal(s, 'doc_j', 'cl_j').draft?.opId).toBe('op_d');
    j.put([rec(1, 'op_1', 'typed')]);
    expect(readJournal(s, 'doc_j', 'cl_j').draft).toBeNull();
    j.forget([{ clientId: 'cl_j', n: 1 }]);
    expect(s.map.size).toBe(0);
  });

  it('keys by document and clientId; owners and counts see every tab', () => {
    const s = memoryStorage();
    new Journal(s, 'doc_j', () => 'cl_a').put([rec(1, 'op_a', 'a')]);
    new Journal(s, 'doc_j', () => 'cl_b').setDraft(rec(0, 'op_b', 'b').op);
    new Journal(s, 'doc_k', () => 'cl_a').put([rec(1, 'op_c', 'c'), rec(2, 'op_d', 'd')]);
    expect(journalOwners(s, 'doc_j').sort()).toEqual(['cl_a', 'cl_b']);
    expect(journalCount(s)).toBe(4);
    clearJournal(s, 'doc_j', 'cl_a');
    expect(journalOwners(s, 'doc_j')).toEqual(['cl_b']);
  });

  it('a full or broken storage does not stop the edit', () => {
    const s = memoryStorage();
    s.setItem = () => {
      throw new Error('QuotaExceededError');
    };
    const j = new Journal(s, 'doc_j', () => 'cl_j');
    expect(() => j.put([rec(1, 'op_1', 'x')])).not.toThrow();
    expect(readJournal(s, 'doc_j', 'cl_j').records).toEqual([]);
  });

  it('an unreadable entry reads as empty', () => {
    const s = memoryStorage();
    s.setItem('docsync:journal:doc_j:cl_j', '{not json');
    expect(readJournal(s, 'doc_j', 'cl_j')).toEqual({ records: [], draft: null });
  });
});

describe('mergeJournal', () => {
  it("the journal's newer version of an unacknowledged record wins; an acknowledged one stays as sent", () => {
    const disk = [rec(1, 'op_1', 'he'), { ...rec(2, 'op_2', 'x'), ackedSeq: 7 }];
    const journal = { records: [rec(1, 'op_1', 'hello'), rec(2, 'op_2', 'xy')], draft: null };
    const { records, writes } = mergeJournal(disk, journal, new Set(['op_1', 'op_2']), 'doc_j', 'cl_j');
    expect(records.map((r) => /** @type {any} */ (r.op).content)).toEqual(['hello', 'x']);
    expect(writes.map((r) => r.n)).toEqual([1]);
  });

  it('adds records never written, then the draft last; a second merge adds nothing', () => {
    const disk = [rec(1, 'op_1', 'a')];
    const journal = { records: [rec(2, 'op_2', 'b')], draft: rec(0, 'op_d', 'bc').op };
    const known = new Set(['op_1']);
    const first = mergeJournal(disk, journal, known, 'doc_j', 'cl_j');
    expect(first.records.map((r) => [r.n, r.op.opId])).toEqual([[1, 'op_1'], [2, 'op_2'], [3, 'op_d']]);
    // The start crashed after writing but before clearing the journal: merged again.
    const again = mergeJournal(first.records, journal, new Set(first.records.map((r) => r.op.opId)), 'doc_j', 'cl_j');
    expect(again.writes).toEqual([]);
    expect(again.records).toHaveLength(3);
  });

  it('an op adopted already (its opId queued under another client) is not added twice', () => {
    const journal = { records: [rec(4, 'op_4', 'b')], draft: null };
    const { records } = mergeJournal([], journal, new Set(['op_4']), 'doc_j', 'cl_j');
    expect(records).toEqual([]);
  });
});
