// @ts-check
import { describe, it, expect } from 'vitest';
import { logoutChoice } from '../../static/app/device-copies.js';

describe('logout and this device\'s copies', () => {
  it('offers removal, on by default, when everything reached the server', () => {
    const c = logoutChoice({ docs: 3, pending: 0 });
    expect(c).toMatchObject({ offer: true, removeByDefault: true, canRemove: true });
    expect(c.note).toContain('3 documents');
  });

  it('keeps what is waiting to be sent, and says so', () => {
    const c = logoutChoice({ docs: 3, pending: 2 });
    expect(c).toMatchObject({ offer: true, removeByDefault: false, canRemove: false });
    expect(c.note).toContain('2 changes');
    expect(c.note).toContain('stay on this device');
    expect(logoutChoice({ docs: 1, pending: 1 }).note).toContain('1 change made on this device has not');
  });

  it('asks nothing when the device holds nothing', () => {
    expect(logoutChoice({ docs: 0, pending: 0 }).offer).toBe(false);
  });
});
