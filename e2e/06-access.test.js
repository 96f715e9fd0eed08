// @ts-check
// Scenario 6: access changes while carol has the document open. Read-only share: carol sees
// a read-only outline that updates live and sends no ops. Editor: carol types without a
// reload. Revoked: carol's editor says so and keeps what she typed but could not send.

import assert from 'node:assert/strict';

import { scenario, waitFor, rowText, SEL } from './harness.js';
import { setup, focusEnd, converged, rowOf, apiOutline, recordSyncs, recordSyncReplies } from './fixtures.js';

scenario('6 access: read-only with live updates, then editor without reload, then revoked with unsent text kept', async (h) => {
  const s = await setup(h, {
    users: ['alice', 'carol'],
    shareTo: [],
    seed: ['Agenda', 'Budget'],
    open: ['alice'],
  });
  const { api, doc, ids, users, pages } = s;
  const [agenda, budget] = ids;
  const alice = pages.alice;

  // alice shares read-only with carol; carol opens it.
  await api.setShares(doc, [[users.carol, 'read']]);
  const carolCtx = await h.loggedIn('carol', s.base, users.carol);
  const carol = await h.openDoc(carolCtx, doc);
  const carolSyncs = recordSyncs(carol);
  const carolReplies = recordSyncReplies(carol);
  await waitFor(async () => (await rowOf(carol, budget))?.text === 'Budget', { message: 'carol sees the outline' });
  const editable = () =>
    carol.locator(`${SEL.row} ${SEL.rowText}`).first().evaluate((el) => {
      const e = /** @type {HTMLElement} */ (el);
      if (e.isContentEditable) return true;
      if ('readOnly' in e) return !(/** @type {HTMLInputElement} */ (e).readOnly) && !(/** @type {HTMLInputElement} */ (e).disabled);
      return false;
    });
  assert.equal(await editable(), false, 'a viewer gets a read-only outline');
  await rowText(carol, agenda).click();
  await carol.keyboard.type('xyz');
  assert.equal((await rowOf(carol, agenda)).text, 'Agenda', 'typing does nothing for a viewer');

  // Live updates reach the viewer.
  await focusEnd(alice, budget);
  await alice.keyboard.type(': 1200');
  await waitFor(async () => (await rowOf(carol, budget))?.text === 'Budget: 1200', {
    timeout: 15_000,
    message: 'carol sees alice typing without reloading',
  });
  assert.ok(
    carolSyncs.every((q) => !(q.body?.ops?.length > 0) && !(q.body?.leases?.hold?.length > 0)),
    `a viewer sends no ops and asks for no leases: ${JSON.stringify(carolSyncs.map((q) => q.body))}`,
  );

  // Editor: carol can type without a reload (the role arrives with her next sync; alice's
  // edit wakes her).
  await api.setShares(doc, [[users.carol, 'write']]);
  await focusEnd(alice, budget);
  await alice.keyboard.type(' EUR');
  await waitFor(async () => carolReplies.some((r) => r.body?.role === 'editor') && (await editable()), {
    timeout: 40_000,
    message: 'carol\'s editor becomes editable',
  });
  await focusEnd(carol, agenda);
  await carol.keyboard.type(' for Monday');
  await converged(api, doc, [alice, carol], {
    check: (o) => o.find((r) => r.id === agenda)?.text === 'Agenda for Monday',
  });

  // Revoked while carol has unsent text (she is offline for a moment, so the text is
  // surely queued when the share goes): her send is refused, her editor says so and keeps it.
  await carolCtx.setOffline(true);
  await focusEnd(carol, agenda);
  await carol.keyboard.type(' and Tuesday');
  await waitFor(async () => (await rowOf(carol, agenda))?.text === 'Agenda for Monday and Tuesday', { message: 'carol\'s offline typing shown' });
  await api.setShares(doc, []);
  await carolCtx.setOffline(false);
  // The editor's alert and notice only: the toolbar's "Who has access" must not count.
  const said = await waitFor(async () => {
    const alert = carol.locator('#editor-alert');
    const shown = (await alert.isVisible().catch(() => false)) ? (await alert.textContent()) || '' : '';
    const t = shown + ((await carol.locator(SEL.notice).textContent().catch(() => '')) || '');
    return /access|permission|not allowed|no longer|not found|removed|revoked|denied/i.test(t) ? t : false;
  }, { timeout: 20_000, message: 'carol\'s editor says that access was lost' });
  h.log(`carol's editor after revocation: "${said.replace(/\s+/g, ' ').slice(0, 200)}"`);
  await waitFor(async () => carolReplies.some((r) => r.status === 403 || r.status === 404), {
    timeout: 20_000,
    message: 'the server refused carol\'s sync',
  });
  assert.equal((await rowOf(carol, agenda))?.text, 'Agenda for Monday and Tuesday', 'carol keeps her unsent text');
  assert.equal((await apiOutline(api, doc)).find((r) => r.id === agenda).text, 'Agenda for Monday');
});
