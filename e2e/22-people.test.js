// @ts-check
// Scenario 22: a team runs docsync itself. The admin invites a colleague from the admin
// pages; she joins through the link, names herself, makes an API token and sees where she is
// signed in. The admin deactivates her while she types in a shared document: her editor says
// she is signed out and keeps what she typed; signing in says the account is deactivated.
// Reactivated, she signs in and her text arrives. Screenshots of every page are looked at.

import assert from 'node:assert/strict';

import { scenario, waitFor, SEL } from './harness.js';
import { focusEnd, rowOf, waitRowsShown } from './fixtures.js';

const shots = process.env.E2E_SHOTS;

scenario('22 people: invited, joined, deactivated while typing (text kept), reactivated', async (h) => {
  const srv = await h.server();
  const { alice } = await h.users(srv, ['alice']);
  const api = srv.api(alice);
  const doc = await api.createDoc('Team notes');
  const [first] = await api.insertBullets(doc, ['Agenda']);

  // The admin makes a link on the Invitations page.
  const adminCtx = await h.loggedIn('alice', srv.base, alice);
  const admin = await adminCtx.newPage();
  await admin.goto('/admin/invites');
  await admin.locator('#invite-uses').fill('2');
  await admin.locator('#invite-make').click();
  const link = await admin.locator('#link-value').inputValue();
  assert.match(link, /\/invite\/dsi_[0-9a-f]{64}$/);
  if (shots) await admin.screenshot({ path: `${shots}/admin-invite-link.png` });
  await admin.locator('#link-dialog button', { hasText: 'Done' }).click();
  await waitFor(async () => (await admin.locator('#invites li[data-state="open"]').count()) === 1, { message: 'the link is listed as open' });

  // The colleague opens it in her own browser and joins.
  const beaCtx = await h.context('bea', srv.base);
  const bea = await beaCtx.newPage();
  await bea.goto(new URL(link).pathname);
  await bea.locator('#invite-form').waitFor();
  if (shots) await bea.screenshot({ path: `${shots}/invite-join.png` });
  await bea.locator('#invite-name').fill('bea');
  await bea.locator('#invite-display').fill('Bea Berg');
  await bea.locator('#invite-password').fill('my own phrase 42');
  await bea.locator('#invite-repeat').fill('my own phrase 24');
  await bea.locator('#invite-form button[type=submit]').click();
  assert.match(await bea.locator('#invite-error').textContent() ?? '', /differ/, 'a mistyped repeat is caught before sending');
  await bea.locator('#invite-repeat').fill('my own phrase 42');
  await bea.locator('#invite-form button[type=submit]').click();
  await waitFor(() => new URL(bea.url()).pathname === '/', { message: 'bea lands on her documents' });
  await waitFor(async () => /Bea Berg/.test((await bea.locator('#whoami').textContent()) ?? ''), { message: 'signed in as Bea' });

  // Her account page: a new name, a token shown once, this browser listed.
  await bea.goto('/settings');
  await bea.locator('#sessions li').first().waitFor();
  assert.equal(await bea.locator('#sessions li .badge', { hasText: 'This browser' }).count(), 1);
  await bea.locator('#token-label').fill('Calendar bot');
  await bea.locator('#token-scope').selectOption('read');
  await bea.locator('#token-form button[type=submit]').click();
  const token = await bea.locator('#token-secret').inputValue();
  assert.match(token, /^dsr_/, 'a read-only token');
  await waitFor(async () => (await bea.locator('#tokens li[data-token]').count()) === 1, { message: 'the token is listed' });
  if (shots) await bea.screenshot({ path: `${shots}/settings.png`, fullPage: true });
  const refused = await fetch(`${srv.base}/api/v1/docs`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: '{}' });
  assert.equal(refused.status, 403, 'the read-only token cannot create a document');

  // The admin sees her on the People page and shares the document with her.
  await admin.goto('/admin/people');
  await admin.locator('#people li[data-person="bea"]').waitFor();
  if (shots) await admin.screenshot({ path: `${shots}/admin-people.png`, fullPage: true });
  const beaId = (await api.json('GET', '/api/v1/admin/users')).people.find((/** @type {any} */ p) => p.name === 'bea').id;
  await api.json('PUT', `/api/v1/docs/${doc}/shares`, [{ kind: 'user', id: beaId, access: 'write' }]);

  // Bea types in the document; offline for a moment so her text is surely queued when the
  // admin deactivates her.
  await bea.goto(`/d/${doc}`);
  await bea.locator(`#editor[data-doc-id="${doc}"]`).waitFor();
  await waitRowsShown(bea, [first]);
  await beaCtx.setOffline(true);
  await focusEnd(bea, first);
  await bea.keyboard.type(' for Friday');
  await waitFor(async () => (await rowOf(bea, first))?.text === 'Agenda for Friday', { message: 'her typing is shown' });
  await admin.locator('#people li[data-person="bea"] button', { hasText: 'Deactivate' }).click();
  await admin.locator('dialog button.btn-danger', { hasText: 'Deactivate' }).click();
  await waitFor(async () => (await admin.locator('#people li[data-person="bea"] .badge', { hasText: 'Deactivated' }).count()) === 1, { message: 'listed as deactivated' });
  await beaCtx.setOffline(false);
  const said = await waitFor(async () => {
    const t = ((await bea.locator(SEL.editor).textContent()) || '') + ((await bea.locator(SEL.notice).textContent().catch(() => '')) || '');
    return /sign(ed)? (in|out)|log in/i.test(t) ? t : false;
  }, { timeout: 20_000, message: 'her editor says she is signed out' });
  h.log(`bea's editor: "${said.replace(/\s+/g, ' ').slice(0, 160)}"`);
  assert.equal((await rowOf(bea, first))?.text, 'Agenda for Friday', 'her text stays in her editor');
  assert.equal((await api.snapshot(doc)).blocks.find((/** @type {any} */ b) => b.id === first).content, 'Agenda', 'nothing reached the document');
  if (shots) await bea.screenshot({ path: `${shots}/deactivated-editor.png` });

  // "Log in again" from the editor: the login page says why it cannot.
  await bea.locator('#login-again').click();
  await bea.locator('#login-username').waitFor();
  await bea.locator('#login-username').fill('bea');
  await bea.locator('#login-password').fill('my own phrase 42');
  await bea.locator('#login button[type=submit]').click();
  await waitFor(async () => /deactivated/i.test((await bea.locator('#login-error').textContent()) ?? ''), { message: 'the login page says the account is deactivated' });
  if (shots) await bea.screenshot({ path: `${shots}/login-deactivated.png` });

  // Reactivated: she signs in, lands back in the document, and what she typed arrives.
  await admin.locator('#people li[data-person="bea"] button', { hasText: 'Reactivate' }).click();
  await waitFor(async () => (await admin.locator('#people li[data-person="bea"] .badge', { hasText: 'Deactivated' }).count()) === 0, { message: 'active again' });
  await bea.locator('#login-password').fill('my own phrase 42');
  await bea.locator('#login button[type=submit]').click();
  await waitFor(() => new URL(bea.url()).pathname === `/d/${doc}`, { message: 'back in the document' });
  await waitFor(async () => (await api.snapshot(doc)).blocks.find((/** @type {any} */ b) => b.id === first).content === 'Agenda for Friday', {
    timeout: 20_000, message: 'her kept text reaches the document',
  });

  // The audit page lists what happened.
  await admin.goto('/admin/audit');
  await admin.locator('#audit-rows tr[data-action="user.deactivated"]').waitFor();
  for (const a of ['invite.created', 'invite.used', 'user.created', 'token.created', 'user.reactivated']) {
    assert.equal(await admin.locator(`#audit-rows tr[data-action="${a}"]`).count() >= 1, true, `${a} listed`);
  }
  if (shots) await admin.screenshot({ path: `${shots}/admin-audit.png`, fullPage: true });
  // A team made on the Teams page, bea added by searching for her name.
  await admin.goto('/admin/teams');
  await admin.locator('#team-add').click();
  await admin.locator('#team-dialog [name=name]').fill('Design');
  await admin.locator('#team-dialog button[type=submit]').click();
  const card = admin.locator('.team-card[data-team="Design"]');
  await card.waitFor();
  await card.locator('input').fill('Bea');
  await waitFor(async () => (await card.locator('datalist option').count()) === 1, { message: 'bea is found by her name' });
  await card.locator('input').fill('bea');
  await card.locator('button[type=submit]').click();
  await admin.locator('.team-card[data-team="Design"] li[data-member="bea"]').waitFor();
  if (shots) await admin.screenshot({ path: `${shots}/admin-teams.png` });
});
