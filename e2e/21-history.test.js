// @ts-check
// Scenario 21: history in the browser. alice names the automatic version of a six-bullet
// outline, bob deletes half of it and keeps typing in one bullet; alice compares the version
// with now in the history panel and restores it: bob sees the deleted bullets come back live,
// his bullet keeps his text and the version's text lands in a conflict copy. The conflict
// review resolves two pairs (Keep both, Accept); a bullet's history shows its three authors
// newest first. E2E_SHOTS=<dir> saves screenshots (desktop, phone, dark).

import assert from 'node:assert/strict';

import { scenario, waitFor, readRows, newId } from './harness.js';
import { setup, focusEnd, rowOf } from './fixtures.js';

const shots = process.env.E2E_SHOTS;
/** @param {import('playwright-core').Page} page @param {string} name */
const shot = async (page, name) => {
  if (shots) await page.screenshot({ path: `${shots}/${name}.png` });
};

/** The version called exactly `name` in the history panel's list. @param {import('playwright-core').Page} page @param {string} name */
const versionItem = (page, name) => page.locator('#history-panel .hist-item').filter({ has: page.locator('.hist-item-name', { hasText: new RegExp(`^${name}$`) }) });

/** @param {import('playwright-core').Page} page @param {string} item */
async function menu(page, item) {
  await page.locator('#editor-menu .menu-trigger').click();
  await page.locator('#editor-menu [role=menuitem]', { hasText: item }).click();
}

scenario('21 history: name a version, compare, restore while bob types (conflict copy), review conflicts, a bullet’s authors', async (h) => {
  const texts = ['Flights booked', 'Hotel in Lisbon', 'Pack the charger', 'Museum tickets', 'Dinner at eight', 'Taxi to the airport'];
  const s = await setup(h, { users: ['alice', 'bob', 'carol'], seed: texts, open: ['alice', 'bob'] });
  const { api, doc, ids, pages, srv, users } = s;
  const alice = pages.alice;
  const bob = pages.bob;
  const bobApi = srv.api(users.bob);
  const carolApi = srv.api(users.carol);

  // alice names the automatic version the server kept of the six bullets.
  await h.step('alice names the automatic version', async () => {
    await waitFor(async () => (await api.json('GET', `/api/v1/docs/${doc}/versions`)).versions.some((v) => v.auto && v.seq >= 1), {
      message: 'an automatic version kept',
    });
    await menu(alice, 'History and versions');
    await alice.locator('#history-panel .hist-item').first().click();
    await alice.locator('#rename-version').click();
    await alice.locator('#version-name-dialog input[name=name]').fill('Trip plan, complete');
    await alice.locator('#version-name-dialog button[type=submit]').click();
    await waitFor(async () => (await alice.locator('#history-panel .hist-item-name', { hasText: 'Trip plan, complete' }).count()) === 1, {
      message: 'the named version listed',
    });
    const versions = (await api.json('GET', `/api/v1/docs/${doc}/versions`)).versions;
    assert.ok(versions.some((v) => v.name === 'Trip plan, complete' && v.kind === 'named'), JSON.stringify(versions));
    await alice.keyboard.press('Escape');
  });

  // bob deletes the first three bullets and types in the fifth (he holds it).
  await h.step('bob deletes half and types in one bullet', async () => {
    await focusEnd(bob, ids[0]);
    await bob.keyboard.press('Shift+ArrowDown');
    await bob.keyboard.press('Shift+ArrowDown');
    await bob.keyboard.press('Shift+ArrowDown');
    await waitFor(async () => (await bob.locator('#outline .row.is-selected').count()) === 3, { message: 'three bullets selected' });
    await bob.keyboard.press('Delete');
    await focusEnd(bob, ids[4]);
    await bob.keyboard.type(' (or nine?)', { delay: 10 });
    await waitFor(async () => (await api.snapshot(doc)).blocks.filter((b) => !b.deleted).map((b) => b.content).join('|') === 'Museum tickets|Dinner at eight (or nine?)|Taxi to the airport', {
      message: "bob's changes on the server",
    });
    await waitFor(async () => (await rowOf(alice, ids[4]))?.locked === true, { message: "alice sees bob's lease" });
  });

  // alice compares the version with now and restores it.
  await h.step('alice compares and restores all', async () => {
    await alice.keyboard.press('Alt+Shift+KeyH');
    await versionItem(alice, 'Trip plan, complete').click();
    await waitFor(async () => (await alice.locator('#history-panel .hist-change.is-removed').count()) === 3, { message: 'three removed bullets in the diff' });
    const changed = await alice.locator('#history-panel .hist-change.is-changed ins').first().textContent();
    assert.match(changed ?? '', /or nine\?/);
    // Drawn without inline styles, which the Content-Security-Policy refuses (each refusal a
    // console error, and the indentation lost).
    const refused = h.console.filter((l) => /Content Security Policy/i.test(l));
    assert.deepEqual(refused, [], 'the history panel breaks no CSP rule');
    await shot(alice, 'history-changes');
    await alice.locator('#hist-tab-preview').click();
    await waitFor(async () => (await alice.locator('#history-panel .hist-node').count()) === 6, { message: 'the preview shows six bullets' });
    await shot(alice, 'history-preview');
    await alice.locator('#restore-all').click();
    await waitFor(async () => /Restored/.test((await alice.locator('#history-panel .hist-status').textContent()) ?? ''), { message: 'the restore answered' });
    const said = (await alice.locator('#history-panel .hist-status').textContent()) ?? '';
    assert.match(said, /conflict cop/, said);
    await alice.keyboard.press('Escape');
  });

  await h.step('bob sees the restore live; his bullet keeps his text, a conflict copy holds the version', async () => {
    await waitFor(async () => {
      const rows = await readRows(bob);
      return ids.slice(0, 3).every((id) => rows.some((r) => r.id === id)) && rows.some((r) => r.conflictOf === ids[4]);
    }, { message: "bob's page shows the restored bullets and the copy" });
    const rows = await readRows(bob);
    assert.deepEqual(rows.slice(0, 3).map((r) => r.text), texts.slice(0, 3));
    const i = rows.findIndex((r) => r.id === ids[4]);
    assert.equal(rows[i].text, 'Dinner at eight (or nine?)');
    assert.equal(rows[i + 1].conflictOf, ids[4]);
    assert.equal(rows[i + 1].text, 'Dinner at eight');
  });

  // A second pair: carol edits the last bullet while bob (through the API) holds it.
  await h.step('a second conflict, then the review resolves both', async () => {
    const snap = await api.snapshot(doc);
    const taxi = snap.blocks.find((b) => b.id === ids[5]);
    const bobClient = newId('cl_');
    const carolClient = newId('cl_');
    await bobApi.sync(doc, { clientId: bobClient, lastSeq: snap.headSeq, ops: [{ opId: newId('op_'), kind: 'set_content', blockId: ids[5], content: 'Taxi at 6:00', baseVersion: taxi.version }], leases: { hold: [ids[5]] } });
    const r = await carolApi.sync(doc, { clientId: carolClient, lastSeq: 0, ops: [{ opId: newId('op_'), kind: 'set_content', blockId: ids[5], content: 'Taxi to the airport at six', baseVersion: taxi.version }] });
    assert.equal(r.results[0].status, 'conflict');
    await bobApi.leave(doc, bobClient);
    await carolApi.leave(doc, carolClient);
    await waitFor(async () => ((await alice.locator('#conflicts-badge').textContent()) ?? '').trim() === '2 conflicts', { message: 'the badge counts two conflicts' });
    await alice.locator('#conflicts-badge').click();
    await waitFor(async () => (await alice.locator('#conflict-review .cr-item').count()) === 2, { message: 'two pairs in the review' });
    await shot(alice, 'conflict-review');
    // Pair 1 (bob still types in the original): keep both. Pair 2: accept carol's text.
    await alice.locator(`#conflict-review .cr-item:has-text("Dinner at eight") .cr-keep`).click();
    await waitFor(async () => (await alice.locator('#conflict-review .cr-item').count()) === 1, { message: 'one pair left' });
    await alice.locator('#conflict-review .cr-item .cr-accept').click();
    await waitFor(async () => (await alice.locator('#conflict-review .cr-item').count()) === 0, { message: 'no pair left' });
    await alice.keyboard.press('Escape');
    await waitFor(async () => (await api.json('GET', `/api/v1/conflicts?docId=${doc}`)).conflicts.length === 0, { message: 'no open conflict on the server' });
    const live = (await api.snapshot(doc)).blocks.filter((b) => !b.deleted);
    assert.equal(live.find((b) => b.id === ids[5])?.content, 'Taxi to the airport at six');
    assert.ok(live.some((b) => b.conflictOf === ids[4] && b.conflictResolved && b.content === 'Dinner at eight'));
    assert.ok(await alice.locator('#conflicts-badge').isHidden());
  });

  // Three authors of one bullet (one bob's page never held), newest first.
  await h.step("a bullet's history shows its three authors in order", async () => {
    const editAs = async (/** @type {import('./harness.js').Api} */ who, /** @type {string} */ text) => {
      const snap = await api.snapshot(doc);
      const b = snap.blocks.find((x) => x.id === ids[1]);
      const client = newId('cl_');
      const r = await who.sync(doc, { clientId: client, lastSeq: snap.headSeq, ops: [{ opId: newId('op_'), kind: 'set_content', blockId: ids[1], content: text, baseVersion: b.version }], leases: { hold: [] } });
      assert.equal(r.results[0].status, 'applied', JSON.stringify(r.results));
      await who.leave(doc, client);
    };
    await editAs(api, 'Hotel in Lisbon, two nights');
    await editAs(bobApi, 'Hotel in Lisbon, three nights');
    await editAs(carolApi, 'Hotel in Lisbon, three nights, 2 rooms');
    await waitFor(async () => (await rowOf(alice, ids[1]))?.text === 'Hotel in Lisbon, three nights, 2 rooms', { message: 'the edits shown' });
    await focusEnd(alice, ids[1]);
    await alice.keyboard.press('Alt+KeyH');
    await waitFor(async () => (await alice.locator('#bullet-history .bh-item').count()) >= 4, { message: 'the history listed' });
    const who = await alice.locator('#bullet-history .bh-who').allTextContents();
    assert.deepEqual(who.slice(0, 4), ['Carol', 'Bob', 'Alice', 'Alice'], who.join(', '));
    const added = await alice.locator('#bullet-history .bh-item').first().locator('ins').allTextContents();
    assert.ok(added.join('').includes(', 2 rooms'), added.join('|'));
    await shot(alice, 'bullet-history');
    // Restore bob's text from the history: an ordinary edit.
    await alice.locator('#bullet-history .bh-item').nth(1).locator('.bh-restore').click();
    await waitFor(async () => (await api.snapshot(doc)).blocks.find((b) => b.id === ids[1])?.content === 'Hotel in Lisbon, three nights', { message: 'the older text restored' });
    await alice.keyboard.press('Escape');
  });

  if (shots) {
    await h.step('screenshots: phone width and dark mode', async () => {
      await alice.setViewportSize({ width: 390, height: 800 });
      await menu(alice, 'History and versions');
      await versionItem(alice, 'Trip plan, complete').click();
      await waitFor(async () => (await alice.locator('#history-panel .hist-change').count()) > 0, { message: 'changes shown' });
      await shot(alice, 'history-phone');
      await alice.keyboard.press('Escape');
      await alice.setViewportSize({ width: 1280, height: 800 });
      await alice.emulateMedia({ colorScheme: 'dark' });
      await menu(alice, 'History and versions');
      await versionItem(alice, 'Trip plan, complete').click();
      await waitFor(async () => (await alice.locator('#history-panel .hist-change').count()) > 0, { message: 'changes shown' });
      await shot(alice, 'history-dark');
      await alice.keyboard.press('Escape');
      await alice.emulateMedia({ colorScheme: 'light' });
    });
  }
});

scenario('21 home: a document with open conflicts says so; a deleted document waits in the Trash and comes back whole', async (h) => {
  const srv = await h.server();
  const { alice, bob } = await h.users(srv, ['alice', 'bob']);
  const api = srv.api(alice);
  const bobApi = srv.api(bob);
  const doc = await api.createDoc('Packing list');
  await api.setShares(doc, [[bob, 'write']]);
  const [b] = await api.insertBullets(doc, ['Sun cream']);
  // A conflict: bob holds the bullet and types, alice's edit becomes a copy.
  const snap = await api.snapshot(doc);
  const bobClient = newId('cl_');
  await bobApi.sync(doc, { clientId: bobClient, lastSeq: snap.headSeq, ops: [{ opId: newId('op_'), kind: 'set_content', blockId: b, content: 'Sun cream SPF 50', baseVersion: 1 }], leases: { hold: [b] } });
  const r = await api.sync(doc, { clientId: newId('cl_'), lastSeq: 0, ops: [{ opId: newId('op_'), kind: 'set_content', blockId: b, content: 'Sun cream and hat', baseVersion: 1 }] });
  assert.equal(r.results[0].status, 'conflict');
  await bobApi.leave(doc, bobClient);

  const ctx = await h.loggedIn('alice', srv.base, alice);
  const page = await ctx.newPage();
  await page.goto('/');
  const row = page.locator(`a.doc-link[data-doc-id="${doc}"]`);
  await waitFor(async () => ((await row.locator('.conflict-count').textContent().catch(() => '')) ?? '') === '1 conflict', { message: 'the conflict count beside the document' });
  await shot(page, 'home-conflicts');

  // Delete → Trash → Restore: shares and text are back, bob can open it again.
  await page.locator(`li.doc:has(a[data-doc-id="${doc}"]) .menu-trigger`).click();
  await page.locator(`li.doc:has(a[data-doc-id="${doc}"]) [role=menuitem]`, { hasText: 'Delete' }).click();
  await page.locator('dialog button.btn-danger').click();
  await waitFor(async () => (await row.count()) === 0, { message: 'gone from the list' });
  assert.equal((await bobApi.req('GET', `/api/v1/docs/${doc}/snapshot`)).status, 404);
  await page.locator('#open-trash').click();
  await waitFor(async () => (await page.locator(`#trash .trash-item[data-doc-id="${doc}"]`).count()) === 1, { message: 'listed in the trash' });
  await shot(page, 'home-trash');
  await page.locator(`#trash .trash-item[data-doc-id="${doc}"] .trash-restore`).click();
  await waitFor(async () => /Restored/.test((await page.locator('#trash .hist-status').textContent()) ?? ''), { message: 'restored' });
  await page.keyboard.press('Escape');
  await waitFor(async () => (await row.count()) === 1, { message: 'back in the list' });
  const back = await bobApi.json('GET', `/api/v1/docs/${doc}/snapshot`);
  assert.ok(back.blocks.some((x) => x.content === 'Sun cream SPF 50'));
});

scenario('21 trash: text typed offline in a document its owner deleted reaches it once restored', async (h) => {
  const s = await setup(h, { seed: ['shared plan'], open: ['bob'] });
  const { api, doc, ids, pages, contexts } = s;
  const page = pages.bob;
  await contexts.bob.setOffline(true);
  await focusEnd(page, ids[0]);
  await page.keyboard.type(' + my part', { delay: 10 });
  await api.json('DELETE', `/api/v1/docs/${doc}`);
  await contexts.bob.setOffline(false);
  await page.locator('#rescue-retry').waitFor({ timeout: 20_000 });
  assert.match((await page.locator('.ed-alert p').textContent()) ?? '', /kept on this device/);
  await shot(page, 'editor-doc-trashed');
  await api.json('POST', `/api/v1/trash/${doc}/restore`, {});
  await page.locator('#rescue-retry').click();
  await waitFor(async () => (await api.snapshot(doc)).blocks.some((b) => b.content === 'shared plan + my part'), {
    message: "bob's text reached the restored document",
  });
});

scenario('21 history: restore chosen bullets only; a viewer sees versions but no button that writes', async (h) => {
  const s = await setup(h, { users: ['alice', 'vera'], seed: ['Milk', 'Bread', 'Eggs'], open: ['alice', 'vera'], access: 'read' });
  const { api, doc, ids, pages } = s;
  const alice = pages.alice;
  const v = await api.json('POST', `/api/v1/docs/${doc}/versions`, { name: 'Shopping' });
  // Two bullets change; only one is brought back.
  const snap = await api.snapshot(doc);
  const client = newId('cl_');
  await api.sync(doc, { clientId: client, lastSeq: snap.headSeq, leases: { hold: [] }, ops: [
    { opId: newId('op_'), kind: 'set_content', blockId: ids[0], content: 'Oat milk', baseVersion: 1 },
    { opId: newId('op_'), kind: 'set_content', blockId: ids[1], content: 'Rye bread', baseVersion: 1 },
  ] });
  await api.leave(doc, client);
  await waitFor(async () => (await rowOf(alice, ids[1]))?.text === 'Rye bread', { message: 'the edits shown' });
  await menu(alice, 'History and versions');
  await versionItem(alice, 'Shopping').click();
  await waitFor(async () => (await alice.locator('#history-panel .hist-change.is-changed').count()) === 2, { message: 'two changed bullets' });
  await alice.locator(`#history-panel .hist-change[data-block-id="${ids[1]}"] .hist-pick`).check();
  assert.equal((await alice.locator('#restore-selected').textContent())?.trim(), 'Restore 1 bullet');
  await alice.locator('#restore-selected').click();
  await waitFor(async () => (await rowOf(alice, ids[1]))?.text === 'Bread', { message: 'the chosen bullet back' });
  assert.equal((await rowOf(alice, ids[0]))?.text, 'Oat milk', 'the other stays as it is');
  const versions = (await api.json('GET', `/api/v1/docs/${doc}/versions`)).versions;
  assert.ok(versions.some((x) => x.kind === 'restore'), 'a version was kept before the restore');
  assert.ok(v.versionId);
  await alice.keyboard.press('Escape');

  // vera (viewer): the list and the changes, no Name / Restore / Rename.
  const vera = pages.vera;
  await vera.keyboard.press('Alt+Shift+KeyH');
  await versionItem(vera, 'Shopping').click();
  await waitFor(async () => (await vera.locator('#history-panel .hist-change').count()) > 0, { message: 'changes shown to the viewer' });
  for (const sel of ['#restore-all', '#restore-selected', '#rename-version', '#name-version', '#history-panel .hist-pick']) {
    assert.equal(await vera.locator(sel).count(), 0, `${sel} shown to a viewer`);
  }
});

scenario('21 history: a restore shows at once in a document only its owner has open, and nothing is left to restore', async (h) => {
  // Alone on the document (private mode: no wake-ups, a sync every 30 s): the restoring tab
  // must bring the restore in itself.
  const s = await setup(h, { users: ['alice'], seed: ['Apples', 'Pears', 'Plums'], open: ['alice'] });
  const { api, doc, ids, pages } = s;
  const alice = pages.alice;
  await api.json('POST', `/api/v1/docs/${doc}/versions`, { name: 'Fruit' });
  await focusEnd(alice, ids[1]);
  await alice.keyboard.type(' and figs');
  await waitFor(async () => (await api.snapshot(doc)).blocks.find((b) => b.id === ids[1])?.content === 'Pears and figs', { message: 'the typing saved' });
  await menu(alice, 'History and versions');
  await versionItem(alice, 'Fruit').click();
  await waitFor(async () => (await alice.locator('#history-panel .hist-change.is-changed').count()) === 1, { message: 'one changed bullet' });
  await alice.locator('#restore-all').click();
  await waitFor(async () => (await rowOf(alice, ids[1]))?.text === 'Pears', { timeout: 5_000, message: 'the restore shown in the editor without a reload' });
  await waitFor(async () => /same as this version/.test((await alice.locator('#history-panel .hist-diff').textContent()) ?? ''), {
    timeout: 5_000, message: 'the panel shows nothing left to restore',
  });
  assert.equal(await alice.locator('#history-panel .hist-change').count(), 0, 'no restored change still listed');
  await shot(alice, '21-restore-private');
  await alice.keyboard.press('Escape');
  // Typing on is based on the restored text: no conflict copy against oneself.
  await focusEnd(alice, ids[1]);
  await alice.keyboard.type('!');
  await waitFor(async () => (await api.snapshot(doc)).blocks.find((b) => b.id === ids[1])?.content === 'Pears!', { message: 'typing on saved' });
  const snap = await api.snapshot(doc);
  assert.equal(snap.blocks.filter((b) => !b.deleted && b.conflictOf).length, 0, 'no conflict copy');
});
