// @ts-check
// Scenario 17: the states that break trust when they are not told. The session ends while a
// document is open: the status says "Signed out", "Log in again" keeps what is queued and
// comes back to the same document. The owner deletes a document while a collaborator has
// unsent text: never "Live", and "Save my text as a new document" takes the text along.

import assert from 'node:assert/strict';

import { scenario, waitFor, readStage, SEL, rowSel } from './harness.js';
import { setup, focusEnd, apiOutline, render } from './fixtures.js';

const shots = process.env.E2E_SHOTS;

scenario('17 signed out while editing: "Signed out", Log in again, the typed text arrives', async (h) => {
  const s = await setup(h, { seed: ['note'], open: ['alice'], users: ['alice'] });
  const { api, doc, ids, pages, contexts, users } = s;
  const page = pages.alice;
  // the session ends elsewhere (logged out in another tab of this browser)
  const r = await contexts.alice.request.post('/api/v1/auth/logout', { data: {} });
  assert.ok(r.ok(), `logout: ${r.status()}`);
  await focusEnd(page, ids[0]);
  await page.keyboard.type(' kept', { delay: 10 });
  await waitFor(async () => (await readStage(page)) === 'Signed out', { message: 'the status says Signed out' });
  await page.locator('#login-again').waitFor();
  assert.match((await page.locator('#editor-alert').textContent()) ?? '', /signed out/i);
  // the editor's own requests (here "Linked from", asked again when the page comes back into
  // view) meet the ended session too: the page stays, saying so, instead of jumping to /login
  const backlinksAsked = page.waitForResponse((r) => r.url().endsWith('/backlinks'));
  await page.evaluate(() => document.dispatchEvent(new Event('visibilitychange')));
  assert.equal((await backlinksAsked).status(), 401);
  // (a frame later the page has handled that answer: a redirect would have begun)
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
  assert.equal(new URL(page.url()).pathname, `/d/${doc}`);
  assert.equal(await readStage(page), 'Signed out');
  if (shots) await page.screenshot({ path: `${shots}/editor-signed-out.png` });
  await page.locator('#login-again').click();
  await waitFor(async () => new URL(page.url()).pathname === '/login', { message: 'the login page' });
  assert.equal(new URL(page.url()).searchParams.get('next'), `/d/${doc}`);
  await page.locator(`${SEL.loginForm} [name=username]`).fill(users.alice.name);
  await page.locator(`${SEL.loginForm} [name=password]`).fill(users.alice.password);
  await page.locator(SEL.loginForm).evaluate((f) => /** @type {HTMLFormElement} */ (f).requestSubmit());
  await waitFor(async () => new URL(page.url()).pathname === `/d/${doc}`, { message: 'back at the document' });
  await waitFor(async () => render(await apiOutline(api, doc)) === 'note kept', { message: 'the text typed while signed out reached the server' });
});

scenario('17 document deleted with unsent text: no "Live", and the text saved as a new document', async (h) => {
  const s = await setup(h, { seed: ['shared plan'], open: ['bob'] });
  const { api, doc, ids, pages, contexts, srv, users } = s;
  const page = pages.bob;
  await contexts.bob.setOffline(true);
  await focusEnd(page, ids[0]);
  await page.keyboard.type(' + my part', { delay: 10 });
  await page.keyboard.press('Enter');
  await page.keyboard.type('only on my device', { delay: 10 });
  await api.json('DELETE', `/api/v1/docs/${doc}`);
  await contexts.bob.setOffline(false);
  await page.locator('#rescue-new-doc').waitFor({ timeout: 20_000 });
  assert.equal(await readStage(page), 'No access');
  if (shots) await page.screenshot({ path: `${shots}/editor-doc-gone.png` });
  await page.locator('#rescue-new-doc').click();
  await waitFor(async () => {
    const m = /^\/d\/([^/]+)$/.exec(new URL(page.url()).pathname);
    return m && m[1] !== doc ? m[1] : false;
  }, { message: 'a new document opened' });
  const copy = /** @type {string} */ (/^\/d\/([^/]+)$/.exec(new URL(page.url()).pathname)?.[1]);
  const bobApi = srv.api(users.bob);
  await waitFor(async () => render(await apiOutline(bobApi, copy)) === 'shared plan + my part\nonly on my device', { message: "bob's text in his new document" });
  const snap = await bobApi.snapshot(copy);
  assert.match(snap.title, /my copy/);
});

scenario('17 after a dialog, New document: typing goes into the title, Enter into the first bullet', async (h) => {
  const srv = await h.server();
  const { alice } = await h.users(srv, ['alice']);
  const ctx = await h.loggedIn('alice', srv.base, alice);
  const page = await ctx.newPage();
  await page.goto('/');
  await page.locator('#new-folder').click();
  await page.locator('dialog').waitFor();
  await page.keyboard.press('Escape');
  await waitFor(async () => (await page.locator('dialog').count()) === 0, { message: 'the dialog closed' });
  await page.locator('#new-doc').click();
  await page.locator('#editor').waitFor();
  // the editor has loaded the new document and put the caret into its title
  await waitFor(async () => page.evaluate(() => document.activeElement?.id === 'doc-title' && /** @type {HTMLElement} */ (document.activeElement).isContentEditable), { message: 'the title focused' });
  await page.keyboard.type('Fresh start', { delay: 10 });
  await page.keyboard.press('Enter');
  await page.keyboard.type('first', { delay: 10 });
  const doc = /** @type {string} */ (/^\/d\/([^/]+)/.exec(new URL(page.url()).pathname)?.[1]);
  const api = srv.api(alice);
  await waitFor(async () => (await api.snapshot(doc)).title === 'Fresh start', { message: 'the title typed' });
  await waitFor(async () => render(await apiOutline(api, doc)) === 'first', { message: 'the first bullet typed' });
});

scenario('17 presence by people: a colleague is named at once; my own other tab never locks me out', async (h) => {
  const s = await setup(h, { seed: ['shared bullet'], open: ['alice', 'bob'] });
  const { api, doc, ids, pages, contexts } = s;
  // bob has locked nothing: alice still sees him by name
  await waitFor(async () => /Bob here/.test((await pages.alice.locator('#presence').textContent()) ?? ''), {
    message: async () => `alice sees Bob by name (presence: ${await pages.alice.locator('#presence').textContent()})`,
  });
  await pages.bob.close();
  // alice's second tab holds the bullet; her first tab takes it over and types
  const tab2 = await h.openDoc(contexts.alice, doc);
  await focusEnd(tab2, ids[0]);
  await tab2.keyboard.type(' (tab 2)', { delay: 10 });
  await waitFor(async () => render(await apiOutline(api, doc)) === 'shared bullet (tab 2)', { message: 'tab 2 typed' });
  const tab1 = pages.alice;
  await waitFor(async () => /other tab/.test((await tab1.locator('#presence').textContent()) ?? ''), { message: 'tab 1 says the document is open in another tab of hers' });
  assert.equal(await tab1.locator(`${rowSel(ids[0])}[data-locked]`).count(), 0, 'her own tab does not lock the bullet');
  await focusEnd(tab1, ids[0]);
  await tab1.keyboard.type(' + tab 1', { delay: 10 });
  await waitFor(async () => render(await apiOutline(api, doc)) === 'shared bullet (tab 2) + tab 1', { message: 'tab 1 edited the bullet her other tab held: no conflict copy' });
});
