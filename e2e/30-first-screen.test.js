// @ts-check
// Scenario 30: the first screen of a document reopened on this device is drawn from what
// this device kept of it, before its whole copy is read — and the editor then takes over the
// very same rows. Shown here where nothing else could be shown: offline, with this device's
// copy of the document gone. And a document whose access ended forgets what was kept of it.
// E2E_SHOTS=<dir> saves screenshots.

import assert from 'node:assert/strict';

import { scenario, waitFor, rowSel, readRows, readStage } from './harness.js';
import { setup, waitRowsShown } from './fixtures.js';

const shots = process.env.E2E_SHOTS;

/** @param {import('playwright-core').Page} page @param {string} userId @param {string} doc */
const kept = (page, userId, doc) =>
  page.evaluate(([u, d]) => localStorage.getItem(`docsync:first:${u}:${d}`), [userId, doc]);

/**
 * After `letIn` lets the document in, the read-only row `id` becomes editable — the very
 * element drawn early, not one drawn again.
 * @param {import('playwright-core').Page} page @param {string} id @param {() => Promise<void>} letIn
 */
async function takesOver(page, id, letIn) {
  await page.evaluate((sel) => {
    /** @type {any} */ (document.querySelector(sel)).__drawnEarly = true;
  }, rowSel(id));
  await letIn();
  await waitFor(
    async () => (await page.locator(`${rowSel(id)} .row-text`).getAttribute('contenteditable')) !== null,
    { message: 'the rows editable once the document is in' },
  );
  assert.equal(await page.evaluate((sel) => !!(/** @type {any} */ (document.querySelector(sel)))?.__drawnEarly, rowSel(id)), true,
    'the same row element, not drawn again');
}

/**
 * Opens `doc` offline with this device's copy of it deleted (the app itself stays cached):
 * only the kept first screen can be shown, read-only, until the page is online again.
 * @param {import('playwright-core').Page} page @param {import('playwright-core').BrowserContext} context
 * @param {string} doc @param {string[]} ids rows that must be shown
 */
async function openWithoutCopy(page, context, doc, ids) {
  await page.evaluate(async () => void (await navigator.serviceWorker.ready));
  await page.goto('/');
  await page.evaluate(() => new Promise((resolve, reject) => {
    const del = indexedDB.deleteDatabase('docsync');
    del.onsuccess = () => resolve(undefined);
    del.onerror = () => reject(del.error);
    del.onblocked = () => reject(new Error('the copy is still open'));
  }));
  await context.setOffline(true);
  await page.goto(`/d/${doc}`);
  await waitRowsShown(page, ids);
}

scenario('30 first screen: drawn from this device at once, then the editor takes the same rows', async (h) => {
  const seed = Array.from({ length: 12 }, (_, i) => `Bullet ${i + 1} of the plan`);
  const { srv, users, owner, api, doc, ids, pages, contexts } = await setup(h, { users: ['alice', 'bob'], seed, title: 'Kept plan' });
  const bob = pages.bob;
  const bobId = users.bob.id;

  // Bob's page keeps the first screen while he reads it.
  await waitFor(async () => (await kept(bob, bobId, doc)) !== null, { message: 'the first screen kept on this device' });
  const keptRows = JSON.parse(/** @type {string} */ (await kept(bob, bobId, doc))).rows;
  assert.deepEqual(keptRows.map((/** @type {any} */ r) => r.content), seed);

  // Offline, without this device's copy of the document: the kept first screen is all there is.
  await openWithoutCopy(bob, contexts.bob, doc, ids);
  const early = await readRows(bob);
  assert.deepEqual(early.map((r) => r.text), seed, 'the kept rows, in order');
  assert.equal(await bob.locator('#doc-title').textContent(), 'Kept plan');
  // Read-only until the document itself is in: nothing typed here could be kept.
  assert.equal(await bob.locator(`${rowSel(ids[0])} .row-text`).getAttribute('contenteditable'), null);
  if (shots) await bob.screenshot({ path: `${shots}/first-screen-offline.png` });
  // At a phone's width the kept rows fit it too (nothing wider than the screen).
  const desk = bob.viewportSize();
  await bob.setViewportSize({ width: 390, height: 844 });
  await waitFor(async () => (await bob.evaluate(() => document.documentElement.scrollWidth)) <= 390,
    { message: 'the early rows fit a phone\'s width' });
  assert.ok(await bob.locator(rowSel(ids[0])).isVisible());
  if (shots) await bob.screenshot({ path: `${shots}/first-screen-offline-phone.png` });
  if (desk) await bob.setViewportSize(desk);
  // The row elements drawn now are the ones the editor goes on with.
  await takesOver(bob, ids[0], () => contexts.bob.setOffline(false));
  await bob.locator(`${rowSel(ids[0])} .row-text`).click();
  await bob.keyboard.press('End');
  await bob.keyboard.type(' (bob)', { delay: 10 });
  await waitFor(async () => (await api.snapshot(doc)).blocks.some((/** @type {any} */ b) => b.content === 'Bullet 1 of the plan (bob)'),
    { message: "bob's typing reached the server" });

  // Access ended: the next opening shows what was kept only until the server says so, and
  // forgets it.
  await waitFor(async () => (await kept(bob, bobId, doc)) !== null, { message: 'kept again' });
  await api.setShares(doc, []);
  await bob.goto(`/d/${doc}`);
  await waitFor(async () => (await kept(bob, bobId, doc)) === null, { message: 'what was kept forgotten when access ended' });
  await waitFor(async () => (await readStage(bob)) === 'No access', { message: 'the page says so' });
  void srv;
  void owner;
});

scenario('30 first rows from the server: a document new to this device shows its top while the snapshot is on its way', async (h) => {
  const seed = Array.from({ length: 8 }, (_, i) => `Server row ${i + 1}`);
  const { srv, users, api, doc, ids } = await setup(h, { users: ['alice', 'carol'], seed, title: 'New here', open: [] });
  // The snapshot is held back until the test lets it go (a big document's, still arriving).
  /** @type {() => void} */
  let release = () => {};
  const held = new Promise((r) => (release = () => r(undefined)));
  let snapshotAsked = 0;
  const context = await h.loggedIn('carol', srv.base, users.carol);
  const page = await context.newPage();
  await page.route('**/api/v1/docs/*/snapshot*', async (route) => {
    snapshotAsked++;
    await held;
    await route.continue();
  });
  await page.goto(`/d/${doc}`);
  await waitRowsShown(page, ids);
  assert.deepEqual((await readRows(page)).map((r) => r.text), seed, 'the first rows, in order');
  assert.equal(await page.locator('#doc-title').textContent(), 'New here');
  assert.equal(await page.locator(`${rowSel(ids[0])} .row-text`).getAttribute('contenteditable'), null, 'read-only');
  assert.ok(snapshotAsked >= 1, 'the snapshot was asked for and is still on its way');
  if (shots) await page.screenshot({ path: `${shots}/first-rows-cold.png` });
  await takesOver(page, ids[0], async () => release());
  await page.locator(`${rowSel(ids[1])} .row-text`).click();
  await page.keyboard.press('End');
  await page.keyboard.type(' (carol)', { delay: 10 });
  await waitFor(async () => (await api.snapshot(doc)).blocks.some((/** @type {any} */ b) => b.content === 'Server row 2 (carol)'),
    { message: "carol's typing reached the server" });
});

scenario('30 keys typed into the first screen before it is editable are typed again once it is, even after the tab closed', async (h) => {
  const seed = ['Groceries', 'Call the plumber', 'Book the train'];
  const { users, api, doc, ids, pages, contexts } = await setup(h, { users: ['alice', 'bob'], seed, title: 'Early keys' });
  const bobId = users.bob.id;
  /** Opens the document offline without this device's copy: the kept rows stay read-only. */
  const openEarly = async (/** @type {import('playwright-core').Page} */ page) => {
    await openWithoutCopy(page, contexts.bob, doc, ids);
    assert.equal(await page.locator(`${rowSel(ids[0])} .row-text`).getAttribute('contenteditable'), null, 'read-only');
  };
  const serverTexts = async () => (await api.snapshot(doc)).blocks.map((/** @type {any} */ b) => b.content);
  let bob = pages.bob;
  await waitFor(async () => (await kept(bob, bobId, doc)) !== null, { message: 'the first screen kept on this device' });

  // Typed at once into the read-only first screen: a click, End, text, Enter, more text.
  await openEarly(bob);
  await bob.locator(`${rowSel(ids[0])} .row-text`).click();
  await bob.keyboard.press('End');
  await bob.keyboard.type(' and milk', { delay: 5 });
  await bob.keyboard.press('Enter');
  await bob.keyboard.type('Water the plants', { delay: 5 });
  assert.equal((await readRows(bob))[0].text, 'Groceries', 'nothing typed into the read-only row');
  await contexts.bob.setOffline(false);
  await waitFor(async () => {
    const t = await serverTexts();
    return t.includes('Groceries and milk') && t.includes('Water the plants');
  }, { message: 'the held keys typed again once the editor had the rows, and saved' });
  await waitFor(async () => (await readRows(bob)).map((r) => r.text).join('|') === 'Groceries and milk|Water the plants|Call the plumber|Book the train',
    { message: 'the new bullet where Enter was pressed' });
  await waitFor(async () => await bob.locator('#offline-indicator').isHidden(), { message: "the header's Offline pill gone once online" });
  if (shots) await bob.screenshot({ path: `${shots}/first-screen-typed-ahead.png` });

  // The tab closed before the editor took over: the next page of the document types them.
  await waitFor(async () => (await kept(bob, bobId, doc))?.includes('Water the plants') ?? false, { message: 'the new first screen kept' });
  await openEarly(bob);
  await bob.locator(`${rowSel(ids[2])} .row-text`).click();
  await bob.keyboard.press('End');
  await bob.keyboard.type(' for Friday', { delay: 5 });
  await bob.close();
  await contexts.bob.setOffline(false);
  bob = await contexts.bob.newPage();
  await bob.goto(`/d/${doc}`);
  await waitFor(async () => (await serverTexts()).includes('Book the train for Friday'),
    { message: 'keys held by a closed tab typed by the next page of the document' });
  assert.equal((await serverTexts()).filter((t) => t.includes('for Friday')).length, 1, 'typed once');
});
