// @ts-check
// Scenario 16: what outliner people use every minute. Zoom into a bullet (Alt+→, the bullet
// dot) with breadcrumbs and a URL that survives a reload and Back; whole-bullet selection
// (Shift+↓) with Tab / Delete as one undo step; copy and paste that keep the tree; expand and
// collapse all; find over bullets that are not drawn (collapsed); export and import Markdown;
// the `?` panel. E2E_SHOTS=<dir> saves screenshots of each.

import assert from 'node:assert/strict';
import fs from 'node:fs';

import { scenario, waitFor, readRows, rowSel } from './harness.js';
import { setup, focusEnd, apiOutline, render, recordSyncs } from './fixtures.js';

const shots = process.env.E2E_SHOTS;
/** @param {import('playwright-core').Page} page @param {string} name */
const shot = async (page, name) => {
  if (shots) await page.screenshot({ path: `${shots}/${name}.png` });
};

/** @param {import('playwright-core').Page} page */
const shownTexts = async (page) => (await readRows(page)).map((r) => `${'  '.repeat(r.level - 1)}${r.text}`).join('\n');

scenario('16 zoom: Alt+→ and the bullet dot zoom in, breadcrumbs and Alt+← out; the URL names the bullet', async (h) => {
  const s = await setup(h, { seed: ['Projects', 'Inbox'], open: ['alice'], users: ['alice'] });
  const { api, doc, ids, pages } = s;
  const page = pages.alice;
  await focusEnd(page, ids[0]);
  await page.keyboard.press('Enter');
  await page.keyboard.press('Tab');
  await page.keyboard.type('Website', { delay: 5 });
  await page.keyboard.press('Enter');
  await page.keyboard.press('Tab');
  await page.keyboard.type('Copy text', { delay: 5 });
  await waitFor(async () => render(await apiOutline(api, doc)) === 'Projects\n  Website\n    Copy text\nInbox', { message: 'the nested bullets saved' });
  const website = (await apiOutline(api, doc)).find((b) => b.text === 'Website')?.id;
  assert.ok(website);

  // Alt+→ on "Website": only its subtree, the URL names it, breadcrumbs lead back
  await focusEnd(page, /** @type {string} */ (website));
  await page.keyboard.press('Alt+ArrowRight');
  await waitFor(async () => new URL(page.url()).pathname === `/d/${doc}/b/${website}`, { message: 'the URL names the zoomed bullet' });
  await waitFor(async () => (await shownTexts(page)) === 'Copy text', { message: 'only the zoomed subtree shown' });
  assert.equal((await page.locator('#zoom-title').textContent())?.trim(), 'Website');
  assert.deepEqual(await page.locator('#breadcrumbs a').allTextContents(), ['E2E outline', 'Projects']);
  await shot(page, 'editor-zoom');

  // typing while zoomed goes into the document
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  await page.keyboard.type('Pictures', { delay: 5 });
  await waitFor(async () => render(await apiOutline(api, doc)) === 'Projects\n  Website\n    Copy text\n    Pictures\nInbox', { message: 'a bullet added while zoomed' });

  // reload keeps the zoom
  await page.reload();
  await page.locator(rowSel(website) + ', #outline .row').first().waitFor();
  await waitFor(async () => (await shownTexts(page)) === 'Copy text\nPictures', { message: 'zoom kept across a reload' });

  // Alt+← one level out (to Projects), then a breadcrumb to the whole document, then Back
  await page.locator('#outline .row-text').first().click();
  await page.keyboard.press('Alt+ArrowLeft');
  await waitFor(async () => new URL(page.url()).pathname === `/d/${doc}/b/${ids[0]}`, { message: 'zoomed out to Projects' });
  await page.locator('#breadcrumbs a', { hasText: 'E2E outline' }).click();
  await waitFor(async () => new URL(page.url()).pathname === `/d/${doc}`, { message: 'whole document' });
  await waitFor(async () => (await shownTexts(page)).startsWith('Projects'), { message: 'all bullets shown again' });
  await page.goBack();
  await waitFor(async () => (await shownTexts(page)) === 'Website\n  Copy text\n  Pictures', { message: 'Back zooms into Projects again' });

  // a click on a bullet's dot zooms into it
  await page.locator(`${rowSel(/** @type {string} */ (website))} .row-handle`).click();
  await waitFor(async () => new URL(page.url()).pathname === `/d/${doc}/b/${website}`, { message: 'the dot zooms in' });
});

scenario('16 selection: Shift+↓ selects whole bullets; Tab, Delete and undo act on all of them at once', async (h) => {
  const s = await setup(h, { seed: ['a', 'b', 'c', 'd'], open: ['alice'], users: ['alice'] });
  const { api, doc, ids, pages } = s;
  const page = pages.alice;
  await focusEnd(page, ids[1]);
  await page.keyboard.press('Shift+ArrowDown'); // b selected
  await page.keyboard.press('Shift+ArrowDown'); // b, c
  await waitFor(async () => (await page.locator('#outline .row.is-selected').count()) === 2, { message: 'two bullets selected' });
  await shot(page, 'editor-selection');
  await page.keyboard.press('Tab');
  await waitFor(async () => render(await apiOutline(api, doc)) === 'a\n  b\n  c\nd', { message: 'both indented' });
  await page.keyboard.press('Delete');
  await waitFor(async () => render(await apiOutline(api, doc)) === 'a\nd', { message: 'both deleted' });
  await page.keyboard.press('Control+z');
  await waitFor(async () => render(await apiOutline(api, doc)) === 'a\n  b\n  c\nd', { message: 'one undo brings both back' });
  await page.keyboard.press('Escape');
  assert.equal(await page.locator('#outline .row.is-selected').count(), 0);
});

scenario('16 copy and paste keep the tree; expand/collapse all; find reaches collapsed bullets', async (h) => {
  const s = await setup(h, { seed: ['Groceries', 'Work'], open: ['alice'], users: ['alice'] });
  const { api, doc, ids, pages, contexts } = s;
  const page = pages.alice;
  await contexts.alice.grantPermissions(['clipboard-read', 'clipboard-write']);
  // paste an indented Markdown list into a new bullet below "Groceries": a tree, one step
  await focusEnd(page, ids[0]);
  await page.keyboard.press('Enter');
  await page.evaluate(() => navigator.clipboard.writeText('\n- milk\n  - [ ] oat #shop\n- bread\n'));
  await page.keyboard.press('Control+v');
  await waitFor(async () => render(await apiOutline(api, doc)) === 'Groceries\nmilk\n  oat #shop\nbread\nWork', { message: 'the pasted tree' });
  const snap = await api.snapshot(doc);
  assert.equal(snap.blocks.find((/** @type {any} */ b) => b.content === 'oat #shop')?.type, 'todo');

  // copy "milk" with its child as whole bullets, paste after "Work": the same tree again
  const milk = (await apiOutline(api, doc)).find((b) => b.text === 'milk')?.id;
  await focusEnd(page, /** @type {string} */ (milk));
  await page.keyboard.press('Shift+ArrowDown');
  await page.keyboard.press('Control+c');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(copied, '- milk\n  - [ ] oat #shop\n');
  await page.keyboard.press('Escape');
  await focusEnd(page, ids[1]);
  await page.keyboard.press('Shift+ArrowDown');
  await page.keyboard.press('Control+v');
  await waitFor(async () => render(await apiOutline(api, doc)) === 'Groceries\nmilk\n  oat #shop\nbread\nWork\nmilk\n  oat #shop', { message: 'pasted after the selected bullet' });

  // collapse all from the menu, then find a bullet that is not drawn
  await page.locator('#editor-menu .menu-trigger').click();
  await page.locator('#editor-menu [role=menuitem]', { hasText: 'Collapse all' }).click();
  await waitFor(async () => (await readRows(page)).every((r) => r.text !== 'oat #shop'), { message: 'children hidden' });
  await page.locator('#outline .row-text').first().click();
  await page.keyboard.press('Control+f');
  await page.locator('#find-input').fill('oat');
  await waitFor(async () => (await page.locator('#find-count').textContent()) === '1 of 2', { message: 'two hits counted' });
  await waitFor(async () => (await readRows(page)).some((r) => r.text === 'oat #shop'), { message: 'the hit shown (zoomed to its parent)' });
  await shot(page, 'editor-find');
  await page.keyboard.press('Escape');
  await page.locator('#breadcrumbs a').first().click();
  await page.locator('#editor-menu .menu-trigger').click();
  await page.locator('#editor-menu [role=menuitem]', { hasText: 'Expand all' }).click();
  await waitFor(async () => (await readRows(page)).filter((r) => r.text === 'oat #shop').length === 2, { message: 'expand all shows every bullet' });
});

scenario('16 folding is each person\'s: alice collapses all, bob\'s view stays; no op is sent; a reload keeps alice\'s folds', async (h) => {
  const s = await setup(h, { seed: ['Trip', 'Flights', 'Hotel', 'Work', 'Slides', 'Budget'], open: ['alice', 'bob'] });
  const { api, doc, ids, pages } = s;
  const { alice, bob } = pages;
  for (const i of [1, 2, 4, 5]) {
    await focusEnd(alice, ids[i]);
    await alice.keyboard.press('Tab');
  }
  await waitFor(async () => render(await apiOutline(api, doc)) === 'Trip\n  Flights\n  Hotel\nWork\n  Slides\n  Budget', { message: 'the tree' });
  await waitFor(async () => (await readRows(bob)).length === 6, { message: 'bob sees six rows' });
  const syncs = recordSyncs(alice);
  await alice.locator('#editor-menu .menu-trigger').click();
  await alice.locator('#editor-menu [role=menuitem]', { hasText: 'Collapse all' }).click();
  await waitFor(async () => (await readRows(alice)).length === 2, { message: 'alice sees two rows' });
  // bob's view stays as it was, and the document's own fold did not change
  await alice.locator(`${rowSel(ids[0])} .row-text`).click(); // one more round trip for alice
  await alice.keyboard.type(' (May)');
  await waitFor(async () => (await readRows(bob)).some((r) => r.text === 'Trip (May)'), { message: "alice's typing reached bob" });
  assert.equal((await readRows(bob)).length, 6, "bob's rows stay unfolded");
  assert.ok((await api.snapshot(doc)).blocks.every((/** @type {any} */ b) => !b.collapsed), 'no bullet folded in the document');
  const props = syncs.flatMap((x) => x.body?.ops ?? []).filter((/** @type {any} */ op) => op.kind === 'set_props');
  assert.deepEqual(props, [], 'folding sent no op');
  // one bullet unfolded by a click on its arrow, then a reload: alice's folds are kept
  await alice.locator(`${rowSel(ids[3])} .row-toggle`).click();
  await waitFor(async () => (await readRows(alice)).length === 4, { message: 'Work unfolded' });
  await alice.reload();
  await alice.locator(rowSel(ids[3])).waitFor();
  await waitFor(async () => (await readRows(alice)).map((r) => r.text).join() === 'Trip (May),Work,Slides,Budget', { message: 'the folds after a reload' });
  // bob folds one bullet for himself
  await bob.locator(`${rowSel(ids[0])} .row-toggle`).click();
  await waitFor(async () => (await readRows(bob)).length === 4, { message: "bob's own fold" });
  assert.equal((await readRows(alice)).length, 4, "alice's view untouched by bob's fold");
});

scenario('16 export and import: Markdown out, the same Markdown in gives the same tree; the ? panel', async (h) => {
  const s = await setup(h, { seed: ['Plan'], open: ['alice'], users: ['alice'] });
  const { api, doc, ids, pages } = s;
  const page = pages.alice;
  await focusEnd(page, ids[0]);
  await page.keyboard.press('Enter');
  await page.keyboard.press('Tab');
  await page.keyboard.type('[ ] step one', { delay: 5 });
  await waitFor(async () => render(await apiOutline(api, doc)) === 'Plan\n  step one', { message: 'typed' });
  await page.keyboard.press('Escape');

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    (async () => {
      await page.locator('#editor-menu .menu-trigger').click();
      await page.locator('#editor-menu [role=menuitem]', { hasText: 'Export as Markdown' }).click();
    })(),
  ]);
  const file = await download.path();
  const md = fs.readFileSync(/** @type {string} */ (file), 'utf8');
  assert.equal(md, '# E2E outline\n\n- Plan\n  - [ ] step one\n');

  // import that file into a new, empty document: the same tree, and exporting it gives the same text
  const doc2 = await api.createDoc('E2E outline');
  await page.goto(`/d/${doc2}`);
  await page.locator(`#editor[data-doc-id="${doc2}"]`).waitFor();
  const [chooser] = await Promise.all([
    page.waitForEvent('filechooser'),
    (async () => {
      await page.locator('#editor-menu .menu-trigger').click();
      await page.locator('#editor-menu [role=menuitem]', { hasText: 'Import' }).click();
    })(),
  ]);
  await chooser.setFiles({ name: 'plan.md', mimeType: 'text/markdown', buffer: Buffer.from(md) });
  await waitFor(async () => render(await apiOutline(api, doc2)) === 'Plan\n  step one', { message: 'imported tree saved' });
  const [again] = await Promise.all([
    page.waitForEvent('download'),
    (async () => {
      await page.locator('#editor-menu .menu-trigger').click();
      await page.locator('#editor-menu [role=menuitem]', { hasText: 'Export as Markdown' }).click();
    })(),
  ]);
  assert.equal(fs.readFileSync(/** @type {string} */ (await again.path()), 'utf8'), md);

  // the key list
  await page.locator('#doc-title').click();
  await page.locator('body').click({ position: { x: 5, y: 300 } });
  await page.keyboard.press('?');
  await page.locator('#keys-help').waitFor();
  assert.ok((await page.locator('#keys-help').textContent())?.includes('Zoom into the bullet'));
  await shot(page, 'editor-keys');
});

scenario('16 links: [[ picks a readable document, the link shows its title, the target lists "Linked from"', async (h) => {
  const s = await setup(h, { seed: ['see also'], open: ['alice'], users: ['alice'] });
  const { api, doc, ids, pages } = s;
  const page = pages.alice;
  const target = await api.createDoc('Target plan');
  await api.createDoc('Other notes');
  await focusEnd(page, ids[0]);
  await page.keyboard.type(' [[Tar', { delay: 20 });
  await page.locator('#link-picker [role=option]').first().waitFor();
  assert.deepEqual(await page.locator('#link-picker [role=option]').allTextContents(), ['Target plan']);
  // no keystroke lost while the list of documents arrived (it redraws every row)
  assert.equal(await page.locator(`${rowSel(ids[0])} .row-text`).textContent(), 'see also [[Tar');
  await shot(page, 'editor-link-picker');
  await page.keyboard.press('Enter');
  await waitFor(async () => render(await apiOutline(api, doc)) === `see also [[${target}]]`, { message: 'the link saved as the document ID' });
  await page.keyboard.press('Escape');
  await waitFor(async () => (await page.locator(`${rowSel(ids[0])} a.md-doclink`).textContent()) === 'Target plan', { message: 'the link shows the title' });
  await page.locator(`${rowSel(ids[0])} a.md-doclink`).click();
  await waitFor(async () => new URL(page.url()).pathname === `/d/${target}`, { message: 'the link opens the target' });
  await page.locator('#backlinks .ed-backlink').first().waitFor();
  assert.match((await page.locator('#backlinks').textContent()) ?? '', /Linked from 1 bullet.*E2E outline.*see also/);
  await shot(page, 'editor-backlinks');
});
