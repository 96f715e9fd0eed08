// @ts-check
// Scenario 15: what a new user meets first. Markdown shortcuts typed at the start of a bullet:
// "``` " makes a code block without a leading space, "```python " also names its language.
// A deep link to a bullet that is gone, and a viewer's keystroke, are answered with a notice.
// A todo's box shows what was saved after a click (it stayed empty: the cancelled click put
// it back after the redraw).

import assert from 'node:assert/strict';

import { scenario, waitFor, readNotice, readRows } from './harness.js';
import { setup, focusEnd } from './fixtures.js';

scenario('15 shortcuts: a code fence takes its space and its language', async (h) => {
  const s = await setup(h, { seed: ['first'], open: ['alice'] });
  const { api, doc, ids, pages } = s;
  const page = pages.alice;
  for (const [fence, language] of [['``` ', null], ['```python ', 'python']]) {
    await focusEnd(page, ids[0]);
    await page.keyboard.press('Enter');
    await page.keyboard.type(`${fence}print(1)`, { delay: 10 });
    const block = await waitFor(async () => {
      const snap = await api.snapshot(doc);
      return snap.blocks.find((/** @type {any} */ b) => !b.deleted && b.type === 'code' && b.language === language && b.content === 'print(1)');
    }, { timeout: 15_000, message: `a code block with language ${language} and the text without the fence` });
    assert.equal(block.content, 'print(1)');
    await page.keyboard.press('Escape');
  }
});

scenario('15 notices: a deep link to a missing bullet, and a viewer who types, are told why', async (h) => {
  const s = await setup(h, { seed: ['only bullet', 'second bullet'], open: ['alice', 'bob'], access: 'read' });
  const { api, doc, ids, pages, contexts } = s;
  // A link to a bullet that was deleted (or never existed).
  const link = await contexts.alice.newPage();
  await link.goto(`/d/${doc}#blk_00000000-0000-4000-8000-000000000000`);
  await link.locator(`#editor[data-doc-id="${doc}"]`).waitFor();
  await waitFor(async () => /no longer exists/.test((await readNotice(link)) ?? ''), { message: 'a notice that the bullet is gone' });
  // bob may only read: his first keystroke says so, and changes nothing.
  const bob = pages.bob;
  await bob.locator(`#outline [role=treeitem][data-block-id="${ids[0]}"] .row-text`).click();
  await bob.keyboard.type('x');
  await waitFor(async () => /only read this document/.test((await readNotice(bob)) ?? ''), { message: "a notice for the viewer's keystroke" });
  const snap = await api.snapshot(doc);
  assert.equal(snap.blocks.find((/** @type {any} */ b) => b.id === ids[0]).content, 'only bullet');
  // Tab leaves the outline for a viewer (one tab stop for all bullets, not one per bullet)
  await bob.keyboard.press('Tab');
  assert.equal(await bob.evaluate(() => !!document.activeElement?.closest('#outline')), false, 'Tab left the outline');
});

scenario('15 todo: a click on the box ticks it (box and server agree), a second click unticks it', async (h) => {
  const s = await setup(h, { seed: ['buy milk'], open: ['alice'] });
  const { api, doc, ids, pages } = s;
  const page = pages.alice;
  await api.json('POST', `/api/v1/docs/${doc}/sync`, {
    clientId: 'cl_setup', lastSeq: 0,
    ops: [{ opId: 'op_todo', kind: 'set_props', blockId: ids[0], props: { type: 'todo' } }],
  });
  const box = page.locator(`[data-block-id="${ids[0]}"] input.row-check`);
  await box.waitFor();
  const serverChecked = async () => (await api.snapshot(doc)).blocks.find((/** @type {any} */ b) => b.id === ids[0])?.checked;
  for (const want of [true, false]) {
    await box.click();
    await waitFor(async () => (await serverChecked()) === want, { message: `the server has checked: ${want}` });
    // The box shows what was saved, also after the click is over.
    await waitFor(async () => (await box.isChecked()) === want, { message: `the box shows checked: ${want}` });
    // Two frames later (every task of the click long done) it still does.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    assert.equal(await box.isChecked(), want, 'the box stays as saved');
  }
});

scenario('15 keyboard: Escape hands Tab back to the page (no silent indent), Share is reachable by keys, closing Find returns to the bullet', async (h) => {
  const s = await setup(h, { seed: ['One', 'Two', 'Three', 'Four', 'Five', 'Six'], open: ['alice'] });
  const { api, doc, ids, pages } = s;
  const page = pages.alice;
  for (const i of [1, 2, 4, 5]) {
    await focusEnd(page, ids[i]);
    await page.keyboard.press('Tab');
  }
  const levels = async () => (await readRows(page)).map((r) => r.level);
  await waitFor(async () => (await levels()).join() === '1,2,2,1,2,2', { message: 'levels 1,2,2,1,2,2' });
  const focused = () => page.evaluate(() => {
    const a = document.activeElement;
    return { inBullet: !!a?.closest('#outline .row-text'), block: a?.closest('[data-block-id]')?.getAttribute('data-block-id') ?? null, cls: a?.className ?? '' };
  });

  // Escape, then Tab: the focus leaves the outline and nothing is indented.
  await focusEnd(page, ids[2]);
  await page.keyboard.press('Escape');
  await page.keyboard.press('Tab');
  assert.equal((await focused()).inBullet, false, 'Tab after Escape left the outline');
  await page.keyboard.press('Tab');
  assert.equal((await levels()).join(), '1,2,2,1,2,2', 'no bullet indented');

  // From a bullet to Share by keys alone: Escape, then Shift+Tab until the Share button.
  await focusEnd(page, ids[4]);
  await page.keyboard.press('Escape');
  let reached = false;
  for (let i = 0; i < 12 && !reached; i++) {
    await page.keyboard.press('Shift+Tab');
    reached = /\bed-share\b/.test((await focused()).cls);
  }
  assert.ok(reached, 'Shift+Tab reached the Share button');
  await page.keyboard.press('Enter');
  await page.locator('#share-dialog').waitFor();
  await page.keyboard.press('Escape');
  assert.equal((await levels()).join(), '1,2,2,1,2,2', 'still no bullet indented');

  // Find, closed with Escape: the caret is back in the bullet it came from and typing lands there.
  await focusEnd(page, ids[3]);
  await page.keyboard.press('Control+f');
  await waitFor(() => page.evaluate(() => document.activeElement?.id === 'find-input'), { message: 'the find box has the focus' });
  await page.keyboard.type('Fiv');
  await page.keyboard.press('Escape');
  await waitFor(async () => (await focused()).inBullet, { message: 'the focus back in a bullet after Find' });
  const back = (await focused()).block;
  assert.ok(back, 'a bullet has the focus');
  await page.keyboard.type('!');
  await waitFor(async () => (await api.snapshot(doc)).blocks.some((b) => b.id === back && b.content.endsWith('!')), { message: 'typing after Find reached the bullet' });
});
