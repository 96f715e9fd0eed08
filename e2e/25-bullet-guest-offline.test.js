// @ts-check
// Scenario 25: a bullet guest offline for days (PROTOCOL §10 with §7). Bob sees only
// "Launch plan", shared with him to write. Offline, he types into "Book the venue" while
// Alice moves that bullet out of the shared one, and the server's clock moves three days:
// back online, his text is kept as a new bullet inside his part (the moved bullet is not his
// to change any more, and it leaves his page), Alice's bullet keeps her text. Offline again,
// he types while Alice deletes the shared bullet: his editor says so and keeps his text;
// Alice restores it, he tries again, and his text arrives. Last, he types offline while
// Alice ends the share: his editor says so and keeps it, and the server has none of it.

import assert from 'node:assert/strict';

import { scenario, waitFor, readRows, newId, SEL } from './harness.js';
import { setup, focusEnd, rowOf, apiOutline, recordSyncReplies } from './fixtures.js';

const DAY = 86_400_000;
const shots = process.env.E2E_SHOTS;

scenario('25 bullet guest offline: text kept when the bullet moved out, held while it was deleted and sent once restored, kept when the share ended', async (h) => {
  const s = await setup(h, {
    users: ['alice', 'bob'],
    shareTo: [],
    title: 'Board secrets',
    seed: ['Budget quarterlyzebra', 'Launch plan', 'Send invites', 'Book the venue'],
    open: ['alice'],
  });
  const { api, doc, ids, users, pages, srv } = s;
  const [, plan, invites, venue] = ids;
  const alice = pages.alice;
  for (const id of [invites, venue]) {
    await focusEnd(alice, id);
    await alice.keyboard.press('Tab');
    await waitFor(async () => (await rowOf(alice, id))?.level === 2, { message: 'indented under Launch plan' });
  }
  await api.json('PUT', `/api/v1/docs/${doc}/blocks/${plan}/shares`, [{ kind: 'user', id: users.bob.id, access: 'write' }]);

  const bobCtx = await h.loggedIn('bob', s.base, users.bob);
  const bob = await h.openDoc(bobCtx, doc);
  const bobReplies = recordSyncReplies(bob);
  await waitFor(async () => (await rowOf(bob, venue))?.text === 'Book the venue', { message: 'bob sees the venue bullet' });
  // alice's caret leaves the venue bullet (indenting it made it hers for a while): bob may
  // type there only once he has seen it free, else his page rightly keeps it read-only
  await focusEnd(alice, plan);
  await waitFor(async () => !(await rowOf(bob, venue))?.locked, { timeout: 25_000, message: "alice's hold on the venue bullet ended on bob's page" });

  // Offline, bob types into the venue bullet; alice moves it out of the shared bullet; days pass.
  await bobCtx.setOffline(true);
  await focusEnd(bob, venue);
  await bob.keyboard.type(' at noon');
  await waitFor(async () => (await rowOf(bob, venue))?.text === 'Book the venue at noon', { message: "bob's offline text shown" });
  await focusEnd(alice, venue);
  await alice.keyboard.press('Shift+Tab');
  await waitFor(async () => (await apiOutline(api, doc)).find((r) => r.id === venue)?.depth === 0, {
    message: 'the venue bullet moved out on the server',
  });
  await srv.advanceClock(3 * DAY);
  await bobCtx.setOffline(false);

  // His text is kept inside his part as a new bullet; the moved bullet leaves his page and
  // keeps alice's text.
  await waitFor(async () => {
    const outline = await apiOutline(api, doc);
    return outline.some((r) => r.id !== venue && r.text === 'Book the venue at noon' && r.depth === 1);
  }, { timeout: 30_000, message: "bob's offline text kept under Launch plan" });
  await waitFor(async () => {
    const rows = await readRows(bob);
    return !rows.some((r) => r.id === venue) && rows.some((r) => r.text === 'Book the venue at noon');
  }, { timeout: 30_000, message: 'bob sees his text kept, not the moved bullet' });
  assert.equal((await apiOutline(api, doc)).find((r) => r.id === venue)?.text, 'Book the venue', "alice's bullet keeps her text");
  const page = (await bob.locator(SEL.editor).textContent()) ?? '';
  assert.ok(!page.includes('quarterlyzebra') && !page.includes('Board secrets'), `nothing from outside on bob's page: ${page}`);

  /** The guest's editor says their bullet is gone. */
  const saysGone = () => waitFor(async () => {
    const alert = bob.locator('#editor-alert');
    const shown = (await alert.isVisible().catch(() => false)) ? (await alert.textContent()) || '' : '';
    return /bullet shared with you is no longer available/i.test(shown);
  }, { timeout: 30_000, message: "bob's editor says his bullet is gone" });
  /** Alice's ops straight to the server. @param {any[]} ops */
  const aliceOps = async (ops) => {
    const r = await api.json('POST', `/api/v1/docs/${doc}/sync`, { clientId: 'cl_e2e_alice_api', lastSeq: 0, ops });
    assert.deepEqual(r.results.map((/** @type {any} */ x) => x.status), ops.map(() => 'applied'), JSON.stringify(r.results));
  };

  // Offline again; alice deletes the shared bullet: his editor says so and keeps his text;
  // she restores it, he tries again, and his text arrives.
  await bobCtx.setOffline(true);
  await focusEnd(bob, invites);
  await bob.keyboard.type(' by Friday');
  await waitFor(async () => (await rowOf(bob, invites))?.text === 'Send invites by Friday', { message: "bob's second offline text shown" });
  // A day later (bob's lease on the bullet he typed in has long run out).
  await srv.advanceClock(DAY);
  await aliceOps([{ opId: newId('op_'), kind: 'delete', blockId: plan }]);
  await bobCtx.setOffline(false);
  await saysGone();
  assert.ok(bobReplies.some((r) => r.status === 404), 'the server refused his sync while his bullet was deleted');
  assert.equal((await rowOf(bob, invites))?.text, 'Send invites by Friday', 'bob keeps his text while his bullet is deleted');
  await aliceOps([{ opId: newId('op_'), kind: 'restore', blockId: plan }]);
  await bob.locator('#rescue-retry').click();
  await waitFor(async () => (await apiOutline(api, doc)).find((r) => r.id === invites)?.text === 'Send invites by Friday', {
    timeout: 30_000,
    message: "bob's text arrives once the bullet is restored",
  });
  await waitFor(async () => (await rowOf(bob, invites))?.text === 'Send invites by Friday', { timeout: 30_000, message: 'bob sees his part again' });

  // Offline again; alice ends the share: his editor says so and keeps his unsent text.
  await bobCtx.setOffline(true);
  await focusEnd(bob, invites);
  await bob.keyboard.type(' today');
  await waitFor(async () => (await rowOf(bob, invites))?.text === 'Send invites by Friday today', { message: "bob's third offline text shown" });
  await api.json('PUT', `/api/v1/docs/${doc}/blocks/${plan}/shares`, []);
  await bobCtx.setOffline(false);
  await saysGone();
  assert.equal((await rowOf(bob, invites))?.text, 'Send invites by Friday today', 'bob keeps his unsent text');
  assert.equal((await apiOutline(api, doc)).find((r) => r.id === invites)?.text, 'Send invites by Friday', 'the server has none of it');
  if (shots) await bob.screenshot({ path: `${shots}/bullet-share-ended.png` });
});
