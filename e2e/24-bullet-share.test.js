// @ts-check
// Scenario 24: sharing one bullet (PROTOCOL §10). Alice shares "Launch plan" — not the
// document — with Bob from the bullet's own dialog (Alt+S). Bob's home lists it under
// "Shared with me: bullets"; opening it shows that bullet's children and nothing else of the
// document (not its title, not the other bullets); what he types reaches Alice live, and a
// bullet Alice moves out of the shared one disappears from his page. His history panel and
// his search show his part only. E2E_SHOTS=<dir> saves the dialog, Bob's home, Bob's page
// and his history panel.

import assert from 'node:assert/strict';

import { scenario, waitFor, readRows, newId, SEL } from './harness.js';
import { setup, focusEnd, rowOf } from './fixtures.js';

const shots = process.env.E2E_SHOTS;
const SECRET = 'quarterlyzebra';

scenario('24 bullet share: one bullet shared, its guest sees it live and nothing else', async (h) => {
  const s = await setup(h, {
    users: ['alice', 'bob'],
    shareTo: [],
    title: 'Board secrets',
    seed: [`Budget ${SECRET}`, 'Launch plan', 'Book the venue'],
    open: ['alice'],
  });
  const { api, doc, ids, users, pages, srv } = s;
  const [, plan, venue] = ids;
  const alice = pages.alice;
  // "Book the venue" goes under "Launch plan".
  await focusEnd(alice, venue);
  await alice.keyboard.press('Tab');
  await waitFor(async () => (await rowOf(alice, venue))?.level === 2, { message: 'the venue bullet indented' });

  // Alice shares the bullet from its own dialog.
  await focusEnd(alice, plan);
  await alice.keyboard.press('Alt+S');
  const dialog = alice.locator('#share-dialog');
  await dialog.waitFor({ timeout: 10_000 });
  assert.match((await dialog.textContent()) ?? '', /Share the bullet “Launch plan”/);
  await alice.locator('#share-add [name=name]').fill('bob');
  await alice.locator('#share-add [name=access]').selectOption('write');
  await alice.locator('#share-add button[type=submit]').click();
  await waitFor(async () => ((await alice.locator('#share-list').textContent()) ?? '').includes('bob'), {
    message: 'bob listed as sharing the bullet',
  });
  // Who sees the bullet, and through what: Alice owns the document, Bob has this bullet.
  await waitFor(async () => /Bob[\s\S]*through the bullet “Launch plan”/.test((await alice.locator('#share-everyone').textContent()) ?? ''), {
    message: 'the dialog says bob sees the bullet through its share',
  });
  if (shots) await alice.screenshot({ path: `${shots}/bullet-share-dialog.png` });
  await alice.keyboard.press('Escape');

  // Bob's home lists the bullet, not the document.
  const bobCtx = await h.loggedIn('bob', s.base, users.bob);
  const bob = await bobCtx.newPage();
  await bob.goto('/');
  const entry = bob.locator(`#shared-bullets a[data-block-id="${plan}"]`);
  await entry.waitFor({ timeout: 15_000 });
  assert.equal((await entry.locator('.doc-title').textContent())?.trim(), 'Launch plan');
  const home = (await bob.locator('#home-main').textContent()) ?? '';
  assert.ok(!home.includes('Board secrets'), `the document's title is not on bob's home: ${home}`);
  if (shots) await bob.screenshot({ path: `${shots}/bullet-share-home.png` });

  // Opening it: the bullet's children, the bullet's text as the title, nothing else.
  await entry.click();
  await bob.locator(`#editor[data-doc-id="${doc}"]`).waitFor({ timeout: 15_000 });
  await waitFor(async () => (await rowOf(bob, venue))?.text === 'Book the venue', { message: 'bob sees the venue bullet' });
  const page = (await bob.locator(SEL.editor).textContent()) ?? '';
  assert.ok(!page.includes(SECRET) && !page.includes('Board secrets'), `nothing from outside on bob's page: ${page}`);
  const titleEditable = await bob.locator('#doc-title').evaluate((el) => /** @type {HTMLElement} */ (el).isContentEditable);
  assert.equal(titleEditable, false, 'a bullet guest does not rename the document');

  // Bob writes; Alice sees it under her bullet.
  await focusEnd(bob, venue);
  await bob.keyboard.press('Enter');
  await bob.keyboard.type('Send invites');
  await waitFor(async () => (await readRows(alice)).some((r) => r.text === 'Send invites' && r.level === 2), {
    timeout: 20_000,
    message: "bob's bullet reaches alice under Launch plan",
  });
  if (shots) await bob.screenshot({ path: `${shots}/bullet-share-guest.png` });

  // Alice moves "Book the venue" out of the shared bullet: it leaves bob's page.
  await focusEnd(alice, venue);
  await alice.keyboard.press('Shift+Tab');
  await waitFor(async () => !(await readRows(bob)).some((r) => r.id === venue), {
    timeout: 20_000,
    message: 'the bullet moved out disappears for bob',
  });
  assert.ok((await readRows(bob)).some((r) => r.text === 'Send invites'), 'what is still inside stays');

  // History: Alice names a version; Bob sees his part of it, unnamed, and may restore it but
  // name none.
  await api.json('POST', `/api/v1/docs/${doc}/versions`, { name: `Before the ${SECRET} talks` });
  await bob.locator('#editor-menu .menu-trigger').click();
  await bob.locator('#editor-menu [role=menuitem]', { hasText: 'History and versions' }).click();
  const item = bob.locator('#history-panel .hist-item').first();
  await item.waitFor({ timeout: 10_000 });
  await item.click();
  await bob.locator('#history-panel #restore-all').waitFor({ timeout: 10_000 });
  await waitFor(async () => ((await bob.locator('#history-panel .hist-preview').textContent()) ?? '').includes('Send invites'), {
    message: "bob's part of the version in its preview",
  });
  const panel = (await bob.locator('#history-panel').textContent()) ?? '';
  assert.ok(!panel.includes(SECRET) && !panel.includes('Board secrets'), `nothing from outside in bob's history: ${panel}`);
  assert.equal(await bob.locator('#name-version').count(), 0, 'a bullet guest names no version');
  if (shots) await bob.screenshot({ path: `${shots}/bullet-share-history.png` });
  await bob.keyboard.press('Escape');

  // Search from his home finds his bullets, titled by the shared one, and nothing outside.
  await bob.goto('/');
  await bob.locator('#search').fill('invites');
  const hit = bob.locator('#home-main .result-link').first();
  await hit.waitFor({ timeout: 10_000 });
  assert.match((await hit.textContent()) ?? '', /Send invites[\s\S]*Launch plan/);
  await bob.locator('#search').fill(SECRET);
  await bob.locator('#home-main', { hasText: 'Nothing found' }).waitFor({ timeout: 10_000 });

  // A conflict inside his part (his stale edit of a bullet alice changed meanwhile): his home
  // counts it beside the shared bullet.
  const invites = (await api.snapshot(doc)).blocks.find((/** @type {any} */ b) => b.content === 'Send invites');
  assert.ok(invites, "bob's bullet on the server");
  const stale = { opId: '', kind: 'set_content', blockId: invites.id, content: '', baseVersion: invites.version };
  const post = (/** @type {any} */ who, /** @type {string} */ client, /** @type {string} */ content) =>
    who.json('POST', `/api/v1/docs/${doc}/sync`, { clientId: client, lastSeq: 0, ops: [{ ...stale, opId: newId('op_'), content }] });
  await post(api, 'cl_e2e_alice_api', 'Send invites on Monday');
  await post(srv.api(users.bob), 'cl_e2e_bob_api', 'Send invites on Tuesday');
  await bob.goto('/');
  const bullet = bob.locator(`#shared-bullets a[data-block-id="${plan}"]`);
  await waitFor(async () => ((await bullet.locator('.conflict-count').textContent().catch(() => '')) ?? '') === '1 conflict', {
    message: 'the conflict count beside the shared bullet',
  });
});
