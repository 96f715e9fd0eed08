// @ts-check
import { describe, it, expect } from 'vitest';
import { matchRoute, safeNext, loginUrlFor } from '../../static/app/router.js';

describe('matchRoute', () => {
  it('knows the three pages', () => {
    expect(matchRoute('/')).toEqual({ name: 'home' });
    expect(matchRoute('/login', '?next=%2Fd%2Fdoc_1')).toEqual({ name: 'login', next: '/d/doc_1' });
    expect(matchRoute('/d/doc_1')).toEqual({ name: 'doc', docId: 'doc_1', zoomId: null, blockId: null });
    expect(matchRoute('/d/doc_1/', '', '#blk_9')).toEqual({ name: 'doc', docId: 'doc_1', zoomId: null, blockId: 'blk_9' });
  });
  it('names a zoomed bullet in the path', () => {
    expect(matchRoute('/d/doc_1/b/blk_2')).toEqual({ name: 'doc', docId: 'doc_1', zoomId: 'blk_2', blockId: null });
    expect(matchRoute('/d/doc_1/b/blk_2', '', '#blk_3')).toEqual({ name: 'doc', docId: 'doc_1', zoomId: 'blk_2', blockId: 'blk_3' });
    expect(matchRoute('/d/doc_1/b/').name).toBe('notfound'); // no bullet named
  });
  it('knows the account, invitation and admin pages', () => {
    expect(matchRoute('/settings')).toEqual({ name: 'settings' });
    expect(matchRoute('/invite/dsi_0a1b')).toEqual({ name: 'invite', token: 'dsi_0a1b' });
    expect(matchRoute('/invite/a%2Fb').name).toBe('notfound');
    expect(matchRoute('/admin/people')).toEqual({ name: 'admin', tab: 'people' });
    expect(matchRoute('/admin/audit/')).toEqual({ name: 'admin', tab: 'audit' });
    expect(matchRoute('/admin/actors').name).toBe('notfound'); // the operators' page is the server's
  });
  it('anything else is not found', () => {
    expect(matchRoute('/d/').name).toBe('notfound');
    expect(matchRoute('/d/a/c/d').name).toBe('notfound');
    expect(matchRoute('/d/a/x/blk_1').name).toBe('notfound');
    expect(matchRoute('/admin').name).toBe('notfound');
    expect(matchRoute('/d/%E0%A4%A').name).toBe('notfound');
  });
});

describe('safeNext', () => {
  it('keeps local paths', () => {
    expect(safeNext('/d/doc_1#blk_2')).toBe('/d/doc_1#blk_2');
    expect(safeNext('/')).toBe('/');
  });
  it('refuses other origins, protocol-relative paths and loops', () => {
    for (const bad of ['https://evil.example/', '//evil.example', '/\\evil', 'javascript:alert(1)', '/login', '/login?next=/x', '/invite/dsi_1', '', null, undefined]) {
      expect(safeNext(bad)).toBe('/');
    }
  });
  it('builds the login redirect', () => {
    expect(loginUrlFor('/')).toBe('/login');
    expect(loginUrlFor('/d/doc_1')).toBe('/login?next=%2Fd%2Fdoc_1');
  });
});
