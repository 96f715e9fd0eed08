// @ts-check
// The account and admin pages' pure parts: what a person must fix on an invitation form,
// the people search, the audit filter's query and a row's detail, a browser's short name.
import { describe, it, expect } from 'vitest';
import { inviteProblem } from '../../static/app/pages/invite.js';
import { filterPeople } from '../../static/app/pages/admin-people.js';
import { auditQuery, detailText } from '../../static/app/pages/admin-audit.js';
import { browserName } from '../../static/app/pages/settings.js';

describe('inviteProblem', () => {
  const ok = { kind: /** @type {const} */ ('join'), name: 'bea', password: 'long enough', repeat: 'long enough' };
  it('accepts a good form', () => {
    expect(inviteProblem(ok)).toBeNull();
    expect(inviteProblem({ ...ok, kind: 'reset', name: '' })).toBeNull();
  });
  it('names the field to fix', () => {
    expect(inviteProblem({ ...ok, name: 'b e a' })?.field).toBe('name');
    expect(inviteProblem({ ...ok, name: '' })?.field).toBe('name');
    expect(inviteProblem({ ...ok, password: 'short', repeat: 'short' })?.field).toBe('password');
    expect(inviteProblem({ ...ok, repeat: 'long enougH' })?.field).toBe('repeat');
  });
});

describe('filterPeople', () => {
  const p = (/** @type {string} */ name, /** @type {string} */ displayName, active = true) =>
    ({ id: name, name, displayName, isAdmin: false, active, createdAt: 0, lastSeenAt: null, signIn: 'password' });
  const people = [p('zed', 'Zed Old', false), p('ann', 'Ann Example'), p('bo', 'Bo Example')];
  it('matches name or display name in any case, the active first', () => {
    expect(filterPeople(people, 'EXAMPLE').map((x) => x.name)).toEqual(['ann', 'bo']);
    expect(filterPeople(people, 'zed').map((x) => x.name)).toEqual(['zed']);
    expect(filterPeople(people, '').map((x) => x.name)).toEqual(['ann', 'bo', 'zed']);
  });
});

describe('audit page', () => {
  it('builds its query from the filter', () => {
    expect(auditQuery({})).toBe('');
    expect(auditQuery({ actor: ' bea ', action: 'login', before: 12 })).toBe('?actor=bea&action=login&before=12');
    expect(auditQuery({ action: 'user', format: 'jsonl' })).toBe('?action=user&format=jsonl');
  });
  it('writes a row detail as one line', () => {
    expect(detailText({ method: 'password', admin: false })).toBe('method: password · admin: false');
    expect(detailText({ transferred: { documents: 2 } })).toBe('transferred: {"documents":2}');
    expect(detailText({ expiresAt: 0 })).toMatch(/^expiresAt: .*1970/);
  });
});

describe('browserName', () => {
  it('names common browsers and systems', () => {
    expect(browserName('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36')).toBe('Chrome on Linux');
    expect(browserName('Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0')).toBe('Firefox on Windows');
    expect(browserName('Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1')).toBe('Safari on iOS');
    expect(browserName('')).toBe('Unknown browser');
    expect(browserName('curl/8.5.0')).toBe('curl/8.5.0');
  });
});

describe('single sign-on on the login page', async () => {
  const { ssoMessage } = await import('../../static/app/pages/login.js');
  it('says why a sign-in came back', () => {
    expect(ssoMessage(null)).toBeNull();
    expect(ssoMessage('unreachable')).toMatch(/cannot be reached/);
    expect(ssoMessage('not_invited')).toMatch(/invitation/);
    expect(ssoMessage('deactivated')).toMatch(/deactivated/);
    expect(ssoMessage('something new')).toMatch(/did not work/);
  });
});
