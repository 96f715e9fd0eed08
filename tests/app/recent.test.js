// @ts-check
import { describe, it, expect } from 'vitest';
import { rememberDoc, recentDocs, forgetDoc } from '../../static/app/recent.js';

function memoryStorage() {
  /** @type {Map<string, string>} */
  const m = new Map();
  return {
    getItem: (/** @type {string} */ k) => m.get(k) ?? null,
    setItem: (/** @type {string} */ k, /** @type {string} */ v) => void m.set(k, v),
    removeItem: (/** @type {string} */ k) => void m.delete(k),
  };
}

describe('recent documents', () => {
  it('keeps newest first, one entry per document, per user', () => {
    const storage = memoryStorage();
    const a = { storage, userId: 'usr_a' };
    rememberDoc({ docId: 'doc_1', title: 'One' }, { ...a, now: 1 });
    rememberDoc({ docId: 'doc_2', title: 'Two' }, { ...a, now: 2 });
    rememberDoc({ docId: 'doc_1', title: 'One again' }, { ...a, now: 3 });
    expect(recentDocs(a).map((d) => [d.docId, d.title])).toEqual([['doc_1', 'One again'], ['doc_2', 'Two']]);
    expect(recentDocs({ storage, userId: 'usr_b' })).toEqual([]);
  });
  it('keeps the old title when only the id is given, and forgets', () => {
    const storage = memoryStorage();
    const a = { storage, userId: 'u' };
    rememberDoc({ docId: 'doc_1', title: 'Kept' }, a);
    rememberDoc({ docId: 'doc_1' }, a);
    expect(recentDocs(a)[0].title).toBe('Kept');
    forgetDoc('doc_1', a);
    expect(recentDocs(a)).toEqual([]);
  });
  it('caps the list at 50 and survives junk in storage', () => {
    const storage = memoryStorage();
    for (let i = 0; i < 60; i++) rememberDoc({ docId: `doc_${i}`, title: '' }, { storage, userId: 'u' });
    expect(recentDocs({ storage, userId: 'u' })).toHaveLength(50);
    storage.setItem('docsync.recent', '{not json');
    expect(recentDocs({ storage, userId: 'u' })).toEqual([]);
    expect(recentDocs({ storage: null, userId: 'u' })).toEqual([]);
  });
});

describe('updateRecent', () => {
  it('changes title and icon in place, never the order, and ignores unknown documents', async () => {
    const { updateRecent } = await import('../../static/app/recent.js');
    const storage = memoryStorage();
    const a = { storage, userId: 'u' };
    rememberDoc({ docId: 'doc_1', title: 'One' }, { ...a, now: 1 });
    rememberDoc({ docId: 'doc_2', title: 'Two' }, { ...a, now: 2 });
    updateRecent({ docId: 'doc_1', title: 'One renamed', icon: '📘' }, a);
    updateRecent({ docId: 'doc_9', title: 'Nine' }, a);
    expect(recentDocs(a).map((d) => [d.docId, d.title, d.icon])).toEqual([['doc_2', 'Two', null], ['doc_1', 'One renamed', '📘']]);
  });
});
