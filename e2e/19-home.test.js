// @ts-check
// Scenario 19: the home page of someone with many documents and long tags. A long #tag never
// makes the page scroll sideways (phone and desktop width); 320 documents are shown a page at
// a time with "Show more".

import assert from 'node:assert/strict';
import path from 'node:path';

import { scenario, waitFor, ROOT } from './harness.js';
import { apiOutline, render } from './fixtures.js';

scenario('19 home: a long #tag stays inside the page; 320 documents are paged', async (h) => {
  const srv = await h.server();
  const { alice } = await h.users(srv, ['alice']);
  const api = srv.api(alice);
  const doc = await api.createDoc('Tagged');
  await api.insertBullets(doc, [`note #${'verylongtagname'.repeat(6)} and #short`]);
  for (let i = 0; i < 319; i++) await api.createDoc(`Document ${String(i).padStart(3, '0')}`);
  for (const phone of [true, false]) {
    const ctx = await h.loggedIn(phone ? 'alice-phone' : 'alice', srv.base, alice, { phone });
    const page = await ctx.newPage();
    await page.goto('/');
    await page.locator('#tags button.tag').first().waitFor();
    await waitFor(async () => (await page.locator('#tags button.tag').count()) === 2, { message: 'both tags listed' });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px (${phone ? 'phone' : 'desktop'})`);
    if (process.env.E2E_SHOTS) await page.screenshot({ path: `${process.env.E2E_SHOTS}/home-${phone ? 'phone' : 'desktop'}-tags.png`, fullPage: false });
    if (!phone) {
      assert.equal(await page.locator('.doc-tree a.doc-link').count(), 50);
      await page.locator('.show-more').click();
      await waitFor(async () => (await page.locator('.doc-tree a.doc-link').count()) === 100, { message: '50 more shown' });
      assert.match((await page.locator('.show-more').textContent()) ?? '', /220 not shown/);
    }
  }
});

scenario('19 folders: the owner renames, moves and deletes a folder from its menu; no document is lost', async (h) => {
  const srv = await h.server();
  const { alice } = await h.users(srv, ['alice']);
  const api = srv.api(alice);
  const work = (await api.json('POST', '/api/v1/folders', { name: 'Work' })).folderId;
  const plans = (await api.json('POST', '/api/v1/folders', { name: 'Plans', parentId: work })).folderId;
  const doc = await api.createDoc('Roadmap');
  await api.json('PATCH', `/api/v1/docs/${doc}`, { folderId: plans });
  const ctx = await h.loggedIn('alice', srv.base, alice);
  const page = await ctx.newPage();
  await page.goto('/');
  const menuOf = async (/** @type {string} */ id, /** @type {string} */ item) => {
    await page.locator(`li.folder[data-folder-id="${id}"] > .folder-row .menu-trigger`).click();
    await page.locator(`li.folder[data-folder-id="${id}"] > .folder-row [role=menuitem]`, { hasText: item }).click();
  };
  await menuOf(work, 'Rename folder');
  await page.locator('#rename-folder [name=name]').fill('Office');
  await page.locator('#rename-folder button[type=submit]').click();
  await waitFor(async () => (await page.locator(`li.folder[data-folder-id="${work}"] .folder-label`).first().textContent()) === 'Office', { message: 'renamed on the page' });
  await menuOf(plans, 'Move folder');
  await page.locator('#move-folder select[name=parentId]').selectOption('');
  await page.locator('#move-folder button[type=submit]').click();
  await waitFor(async () => {
    const f = (await api.json('GET', '/api/v1/folders')).folders.find((/** @type {any} */ x) => x.folderId === plans);
    return f && f.parentId === null;
  }, { message: 'Plans moved to the top level' });
  // The page's list is drawn again once it has read the lists back: open the menu after.
  await waitFor(async () => (await page.locator(`li.folder[data-folder-id="${work}"] li.folder[data-folder-id="${plans}"]`).count()) === 0
    && (await page.locator(`li.folder[data-folder-id="${plans}"]`).count()) === 1, { message: 'Plans shown at the top level' });
  await menuOf(plans, 'Delete folder');
  await page.locator('dialog button.btn-danger').click();
  await waitFor(async () => (await page.locator(`li.folder[data-folder-id="${plans}"]`).count()) === 0, { message: 'the folder is gone from the page' });
  const docs = (await api.json('GET', '/api/v1/docs')).documents ?? [];
  const d = docs.find((/** @type {any} */ x) => x.docId === doc);
  assert.ok(d, 'the document still exists');
  assert.equal(d.folderId ?? null, null);
  await page.locator(`a.doc-link[data-doc-id="${doc}"]`).waitFor();
});

scenario('19 import: a Workflowy OPML export becomes a new document with its tree', async (h) => {
  const srv = await h.server();
  const { alice } = await h.users(srv, ['alice']);
  const api = srv.api(alice);
  const ctx = await h.loggedIn('alice', srv.base, alice);
  const page = await ctx.newPage();
  await page.goto('/');
  await page.locator('#import-doc').click();
  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.locator('#import-one-file').click()]);
  await chooser.setFiles(path.join(ROOT, 'tests/app/fixtures/workflowy-export.opml'));
  await page.locator('#editor').waitFor();
  const doc = /** @type {string} */ (/^\/d\/([^/]+)/.exec(new URL(page.url()).pathname)?.[1]);
  await waitFor(async () => render(await apiOutline(api, doc)) === [
    'Launch plan #q3', '  Write the **announcement**', '  Check the [docs](https://example.com/docs)\nask Lin first', '    Screenshots', 'Ideas',
  ].join('\n'), { message: 'the imported tree saved' });
  const snap = await api.snapshot(doc);
  assert.equal(snap.title, 'workflowy-export');
  assert.equal(snap.blocks.find((/** @type {any} */ b) => b.content.startsWith('Write'))?.checked, true);
});

scenario('19 search and tags: typed words list their bullets, a tag lists its own, the address keeps them, Escape returns to the list', async (h) => {
  const srv = await h.server();
  const { alice } = await h.users(srv, ['alice']);
  const api = srv.api(alice);
  const groceries = await api.createDoc('Groceries');
  await api.insertBullets(groceries, ['oat milk #shop', 'bread #shop', 'call the plumber']);
  const ctx = await h.loggedIn('alice', srv.base, alice);
  const page = await ctx.newPage();
  await page.goto('/');
  await page.locator('#tags button.tag').first().waitFor();

  // Typing searches after a pause; the hits name their document and mark the words.
  await page.locator('#search').fill('milk');
  await page.locator('#results-title').filter({ hasText: 'Results for “milk”' }).waitFor();
  await waitFor(async () => (await page.locator('a.result-link').count()) === 1, { message: 'one hit for milk' });
  assert.equal(await page.locator('a.result-link mark').first().textContent(), 'milk');
  assert.match((await page.locator('a.result-link .result-doc').textContent()) ?? '', /Groceries/);
  assert.equal(new URL(page.url()).searchParams.get('q'), 'milk', 'the address keeps the search');
  await page.locator('#search').fill('nothing-like-this');
  await page.locator('.empty-title', { hasText: 'Nothing found' }).waitFor();

  // A tag lists its bullets and is marked pressed; pressing it again closes it.
  await page.locator('#tags button.tag[data-tag="shop"]').click();
  await page.locator('#results-title').filter({ hasText: '#shop' }).waitFor();
  await waitFor(async () => (await page.locator('a.result-link').count()) === 2, { message: 'two bullets carry #shop' });
  assert.equal(await page.locator('#tags button.tag[data-tag="shop"]').getAttribute('aria-pressed'), 'true');
  assert.equal(new URL(page.url()).searchParams.get('tag'), 'shop');
  if (process.env.E2E_SHOTS) await page.screenshot({ path: `${process.env.E2E_SHOTS}/home-tag-results.png`, fullPage: false });
  await page.locator('#tags button.tag[data-tag="shop"]').click();
  await page.locator('.doc-tree a.doc-link').first().waitFor();
  assert.equal(await page.locator('#results-title').count(), 0, 'back to the document list');

  // A reload of a search address opens the search again; Escape in the box clears it.
  await page.goto('/?q=plumber');
  await waitFor(async () => (await page.locator('a.result-link').count()) === 1, { message: 'the search from the address' });
  await page.locator('#search').press('Escape');
  await page.locator('.doc-tree a.doc-link').first().waitFor();
  assert.equal(new URL(page.url()).search, '', 'the address is the list again');
});

scenario('19 sharing: "Everyone with access" names each person and team with role and path; a person is picked by part of their name', async (h) => {
  const srv = await h.server();
  const u = await h.users(srv, ['alice', 'bob', 'carol', 'dave']);
  const erin = await srv.addUser('erin', { displayName: 'Erin Sommer' });
  const api = srv.api(u.alice);
  const team = (await api.json('POST', '/api/v1/teams', { name: 'Writers' })).teamId;
  await api.json('PUT', `/api/v1/teams/${team}/members`, { members: [u.carol.id, u.dave.id] });
  const work = (await api.json('POST', '/api/v1/folders', { name: 'Work' })).folderId;
  await api.json('PUT', `/api/v1/folders/${work}/shares`, [{ kind: 'team', id: team, access: 'read' }]);
  const doc = await api.createDoc('Roadmap');
  await api.json('PATCH', `/api/v1/docs/${doc}`, { folderId: work });
  await api.setShares(doc, [[u.bob, 'write']]);
  const ctx = await h.loggedIn('alice', srv.base, u.alice);
  const page = await h.openDoc(ctx, doc);
  await page.locator('.ed-share').click();
  await page.locator('#share-everyone .share-person').nth(3).waitFor();
  const rows = await page.locator('#share-everyone .share-row').evaluateAll((els) => els.map((e) => e.textContent?.replace(/\s+/g, ' ').trim()));
  assert.deepEqual(rows, [
    'Alice (you)@alice · owns itOwner',
    'Bob@bob · shared directlyCan edit',
    'Carol@carol · through folder “Work”Can view',
    'Dave@dave · through folder “Work”Can view',
    'Team Writersthrough folder “Work” · 3 members: Alice, Carol, DaveCan view',
  ]);
  // the direct shares list is only bob; no "only you" claim
  assert.doesNotMatch((await page.locator('#share-list').textContent()) ?? '', /Only you/);
  // Picking a person by part of the display name: "Somm" offers erin.
  await page.locator('#share-add input[name=name]').fill('Somm');
  await waitFor(async () => (await page.locator('#share-add datalist option').evaluateAll((os) => os.map((o) => /** @type {HTMLOptionElement} */ (o).value))).includes('erin'), {
    message: 'erin offered for "Somm"',
  });
  assert.match((await page.locator('#share-add datalist option[value=erin]').textContent()) ?? '', /Erin Sommer/);
  await page.locator('#share-add input[name=name]').fill('erin');
  await page.locator('#share-add button[type=submit]').click();
  await waitFor(async () => (await page.locator('#share-everyone .share-person[data-id="' + erin.id + '"]').count()) === 1, { message: 'erin listed with access' });
  assert.match((await page.locator(`#share-everyone .share-person[data-id="${erin.id}"]`).textContent()) ?? '', /shared directly.*Can view/);
  if (process.env.E2E_SHOTS) await page.screenshot({ path: `${process.env.E2E_SHOTS}/share-everyone.png` });
  // a reader sees who has access too (but cannot change it)
  const ctxB = await h.loggedIn('carol', srv.base, u.carol);
  const carol = await h.openDoc(ctxB, doc);
  await carol.locator('.ed-share').click();
  await carol.locator('#share-everyone .share-person').nth(4).waitFor();
  assert.equal(await carol.locator('#share-add').isVisible(), false, 'no add form for a reader');
});
