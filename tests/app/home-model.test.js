// @ts-check
import { describe, it, expect } from 'vitest';
import { buildTree, folderMoveTargets, flattenFolders, viaLabel, roleLabel, relativeTime, displayTitle, snippet, docHref } from '../../static/app/pages/home-model.js';
import { formatWait, loginErrorMessage } from '../../static/app/pages/login.js';
import { ApiError } from '../../static/app/api.js';

/** @param {string} id @param {string|null} folderId @param {string} [role] */
const doc = (id, folderId, role = 'owner') => ({ docId: id, title: id, icon: null, ownerId: 'u', folderId, headSeq: 0, updatedAt: 0, role: /** @type {any} */ (role), via: 'owner' });

describe('buildTree', () => {
  it('nests folders and places documents', () => {
    const folders = [
      { folderId: 'f1', name: 'Team space', parentId: null },
      { folderId: 'f2', name: 'Projects', parentId: 'f1' },
      { folderId: 'f0', name: 'Archive', parentId: null },
    ];
    const t = buildTree([doc('d1', null), doc('d2', 'f1'), doc('d3', 'f2')], folders);
    expect(t.roots.map((n) => n.folder.name)).toEqual(['Archive', 'Team space']);
    const team = t.roots[1];
    expect(team.docs.map((d) => d.docId)).toEqual(['d2']);
    expect(team.children[0].folder.name).toBe('Projects');
    expect(team.children[0].depth).toBe(1);
    expect(team.total).toBe(2);
    expect(t.loose.map((d) => d.docId)).toEqual(['d1']);
    expect(flattenFolders(t.roots).map((f) => f.path)).toEqual(['Archive', 'Team space', 'Team space / Projects']);
  });
  it('shows folders known only from a document, and lifts orphans to the top', () => {
    const t = buildTree([doc('d1', 'fx', 'viewer')], [{ folderId: 'f2', name: 'Sub', parentId: 'hidden' }]);
    expect(t.roots.map((n) => [n.folder.folderId, n.folder.known])).toEqual([['fx', false], ['f2', true]]);
  });
  it('cuts cycles', () => {
    const t = buildTree([], [{ folderId: 'a', name: 'A', parentId: 'b' }, { folderId: 'b', name: 'B', parentId: 'a' }]);
    expect(flattenFolders(t.roots)).toHaveLength(2);
  });
});

describe('labels', () => {
  it('says how a document was shared', () => {
    expect(viaLabel('owner')).toBe('Yours');
    expect(viaLabel('direct')).toBe('Shared with you');
    expect(viaLabel('team:Writers')).toBe('Shared with team Writers');
    expect(viaLabel('folder:Team space')).toBe('Shared via folder Team space');
    expect(roleLabel('editor')).toBe('Can edit');
  });
  it('relative times', () => {
    const now = 1_000_000_000_000;
    expect(relativeTime(now - 10_000, now)).toBe('just now');
    expect(relativeTime(now - 5 * 60_000, now)).toBe('5 min ago');
    expect(relativeTime(now - 3 * 3_600_000, now)).toBe('3 h ago');
    expect(relativeTime(now - 30 * 3_600_000, now)).toBe('yesterday');
    expect(relativeTime(0, now)).toBe('');
  });
  it('titles, snippets, links', () => {
    expect(displayTitle('  ')).toBe('Untitled');
    const long = `${'a '.repeat(100)}needle ${'b '.repeat(100)}`;
    const s = snippet(long, 'needle', 60);
    expect(s).toContain('needle');
    expect(s.startsWith('…')).toBe(true);
    expect(docHref('doc_1')).toBe('/d/doc_1');
    expect(docHref('doc_1', 'blk_2')).toBe('/d/doc_1#blk_2');
  });
});

describe('login messages', () => {
  it('wrong password, rate limit with minutes, offline', () => {
    expect(loginErrorMessage(new ApiError(401, 'unauthorized', 'x'))).toBe('Wrong user name or password.');
    expect(loginErrorMessage(new ApiError(429, 'too_many_requests', 'x', 240))).toBe('Too many attempts — try again in 4 minutes.');
    expect(loginErrorMessage(new ApiError(429, 'too_many_requests', 'x', 61))).toBe('Too many attempts — try again in 2 minutes.');
    expect(loginErrorMessage(new ApiError(0, 'network', 'x'))).toMatch(/reach the server/);
    expect(formatWait(30)).toBe('30 seconds');
    expect(formatWait(60)).toBe('1 minute');
    expect(formatWait(null)).toBe('a few minutes');
  });
});

describe('folderMoveTargets', () => {
  it('offers the top level and my folders, never the folder itself or one inside it', () => {
    const folders = [
      { folderId: 'a', name: 'A', ownerId: 'me', parentId: null },
      { folderId: 'b', name: 'B', ownerId: 'me', parentId: 'a' },
      { folderId: 'c', name: 'C', ownerId: 'me', parentId: 'b' },
      { folderId: 'd', name: 'D', ownerId: 'me', parentId: null },
      { folderId: 'x', name: 'Theirs', ownerId: 'other', parentId: null },
    ];
    const { roots } = buildTree([], folders);
    expect(folderMoveTargets(roots, 'b', 'me')).toEqual([
      { value: '', label: 'Top level' },
      { value: 'a', label: 'A' },
      { value: 'd', label: 'D' },
    ]);
  });
});

describe('HomeLists', () => {
  /** @returns {Pick<Storage, 'getItem'|'setItem'> & {data: Record<string, string>}} */
  const memory = () => {
    /** @type {Record<string, string>} */
    const data = {};
    return { data, getItem: (k) => data[k] ?? null, setItem: (k, v) => { data[k] = v; } };
  };
  it('keeps the tree built from its lists, the selection valid, folding remembered, lists paged', async () => {
    const { HomeLists, DOC_PAGE } = await import('../../static/app/pages/home-state.js');
    const store = memory();
    const l = new HomeLists(store);
    const docs = Array.from({ length: DOC_PAGE + 7 }, (_, i) => /** @type {any} */ ({ docId: `d${i}`, title: `D${i}`, role: 'owner', folderId: i === 0 ? 'f1' : null }));
    l.setAll(docs, [{ folderId: 'f1', name: 'F', ownerId: 'me', parentId: null }]);
    expect(l.tree.byId.get('f1')?.docs.map((d) => d.docId)).toEqual(['d0']);
    l.select('f1');
    expect(l.selected).toBe('f1');
    l.select('nope');
    expect(l.selected).toBeNull();
    l.select('f1');
    l.setAll([], []); // the folder went away: so did the selection
    expect(l.selected).toBeNull();
    l.setAll(docs, []);
    l.toggleFolder('f1');
    expect(new HomeLists(store).isCollapsed('f1')).toBe(true);
    l.expand('f1');
    expect(new HomeLists(store).isCollapsed('f1')).toBe(false);
    const p = l.page('mine', docs);
    expect([p.items.length, p.rest]).toEqual([DOC_PAGE, 7]);
    l.showMore('mine');
    expect(l.page('mine', docs).rest).toBe(0);
    l.removeDoc('d1');
    expect(l.docs.some((d) => d.docId === 'd1')).toBe(false);
  });
});
