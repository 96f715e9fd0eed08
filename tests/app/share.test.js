// @ts-check
import { describe, it, expect } from 'vitest';
import { upsertShare, sortShares } from '../../static/app/pages/share-dialog.js';

describe('share list helpers', () => {
  it('adds a share, or changes the access of an existing one, and strips extra fields', () => {
    /** @type {import('../../static/app/pages/share-dialog.js').Share[]} */
    const list = [{ kind: 'user', id: 'usr_1', access: 'read', name: 'bob' }];
    expect(upsertShare(list, { kind: 'team', id: 'team_1', access: 'write' })).toEqual([
      { kind: 'user', id: 'usr_1', access: 'read' },
      { kind: 'team', id: 'team_1', access: 'write' },
    ]);
    expect(upsertShare(list, { kind: 'user', id: 'usr_1', access: 'write' })).toEqual([{ kind: 'user', id: 'usr_1', access: 'write' }]);
    // A user and a team with the same id are different principals.
    expect(upsertShare(list, { kind: 'team', id: 'usr_1', access: 'read' })).toHaveLength(2);
  });
  it('sorts teams first, then people, by name', () => {
    /** @type {import('../../static/app/pages/share-dialog.js').Share[]} */
    const list = [
      { kind: 'user', id: 'b', access: 'read' },
      { kind: 'team', id: 'z', access: 'read' },
      { kind: 'user', id: 'a', access: 'read' },
    ];
    expect(sortShares(list, (s) => s.id).map((s) => s.id)).toEqual(['z', 'a', 'b']);
  });
});
