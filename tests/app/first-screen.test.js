// @ts-check
import { describe, it, expect } from 'vitest';
import { readFirstScreen, keepFirstScreen, forgetAllFirstScreens, ROWS, KEEP_DOCS } from '../../static/app/first-screen.js';
import { memoryStorage } from '../engine/memory-storage.js';

/** @param {number} n @returns {import('../../static/engine/types.js').Row[]} */
function rows(n) {
  return Array.from({ length: n }, (_, i) => ({
    id: `blk_${i}`, parentId: null, depth: i % 3, content: `bullet ${i}`, type: i === 1 ? 'todo' : 'bullet',
    checked: i === 1, collapsed: i === 2, language: null, conflictOf: null, conflictAuthor: null,
    conflictResolved: false, version: 7, hasChildren: i % 3 !== 2,
  }));
}

describe('the first screen kept on this device', () => {
  it('gives back the first rows as they were shown, for that person only', () => {
    const s = memoryStorage();
    keepFirstScreen(s, 'usr_a', 'doc_1', { title: 'Plans', icon: '📌', rows: rows(200) });
    const got = readFirstScreen(s, 'usr_a', 'doc_1');
    expect(got?.title).toBe('Plans');
    expect(got?.icon).toBe('📌');
    expect(got?.rows).toHaveLength(ROWS);
    const [first, todo, folded] = /** @type {any[]} */ (got?.rows);
    expect([first.id, first.depth, first.content, first.type, first.hasChildren]).toEqual(['blk_0', 0, 'bullet 0', 'bullet', true]);
    expect([todo.type, todo.checked]).toEqual(['todo', true]);
    expect([folded.collapsed, folded.hasChildren]).toEqual([true, false]);
    expect(readFirstScreen(s, 'usr_b', 'doc_1')).toBeNull();
    expect(readFirstScreen(s, 'usr_a', 'doc_2')).toBeNull();
  });

  it('keeps a bounded number of documents, forgetting the longest unseen', () => {
    const s = memoryStorage();
    for (let i = 0; i < KEEP_DOCS + 5; i++) keepFirstScreen(s, 'u', `doc_${i}`, { title: `${i}`, icon: null, rows: rows(3) });
    keepFirstScreen(s, 'u', 'doc_5', { title: 'seen again', icon: null, rows: rows(3) });
    for (let i = 0; i < 5; i++) expect(readFirstScreen(s, 'u', `doc_${i}`)).toBeNull();
    expect(readFirstScreen(s, 'u', 'doc_5')?.title).toBe('seen again');
    expect(readFirstScreen(s, 'u', `doc_${KEEP_DOCS + 4}`)).not.toBeNull();
    expect([...s.map.keys()].filter((k) => k.startsWith('docsync:first:u:'))).toHaveLength(KEEP_DOCS);
  });

  it('an emptied document forgets its copy; unreadable copies read as none', () => {
    const s = memoryStorage();
    keepFirstScreen(s, 'u', 'doc_1', { title: 'x', icon: null, rows: rows(2) });
    keepFirstScreen(s, 'u', 'doc_1', { title: 'x', icon: null, rows: [] });
    expect(readFirstScreen(s, 'u', 'doc_1')).toBeNull();
    s.setItem('docsync:first:u:doc_2', '{not json');
    expect(readFirstScreen(s, 'u', 'doc_2')).toBeNull();
    s.setItem('docsync:first:u:doc_3', JSON.stringify({ title: 't', rows: [{ id: 1 }, { id: 'ok', depth: 0, content: 'c', type: 'bullet' }] }));
    expect(readFirstScreen(s, 'u', 'doc_3')?.rows.map((r) => r.id)).toEqual(['ok']);
    expect(readFirstScreen(null, 'u', 'doc_3')).toBeNull();
  });

  it('a full storage keeps nothing and throws nothing', () => {
    const s = memoryStorage();
    s.setItem = () => {
      throw new DOMException('full', 'QuotaExceededError');
    };
    expect(() => keepFirstScreen(s, 'u', 'doc_1', { title: 'x', icon: null, rows: rows(2) })).not.toThrow();
    expect(readFirstScreen(s, 'u', 'doc_1')).toBeNull();
  });

  it('logging out with the copies removed forgets every person\'s first screens', () => {
    const s = memoryStorage();
    keepFirstScreen(s, 'a', 'doc_1', { title: 'x', icon: null, rows: rows(2) });
    keepFirstScreen(s, 'b', 'doc_2', { title: 'y', icon: null, rows: rows(2) });
    s.setItem('docsync:hide-completed', '1');
    forgetAllFirstScreens(s);
    expect([...s.map.keys()]).toEqual(['docsync:hide-completed']);
  });
});
