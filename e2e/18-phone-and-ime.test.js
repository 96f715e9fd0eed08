// @ts-check
// Scenario 18: a phone (375 px, touch) and an input method. A phone keyboard has no Tab and no
// Alt+Shift+arrows: the toolbar above it indents, outdents, moves and completes bullets; a
// bullet is dragged by its handle with a finger. Chinese typed through an IME (composition
// events) arrives whole: no op in the middle of a composition, no character lost.

import assert from 'node:assert/strict';

import { scenario, waitFor, rowSel } from './harness.js';
import { setup, apiOutline, render } from './fixtures.js';

const shots = process.env.E2E_SHOTS;

scenario('18 phone: the toolbar above the keyboard edits the tree; a finger drags a bullet by its handle', async (h) => {
  const srv = await h.server();
  const { alice } = await h.users(srv, ['alice']);
  const api = srv.api(alice);
  const doc = await api.createDoc('Phone list');
  const ids = await api.insertBullets(doc, ['one', 'two', 'three']);
  const ctx = await h.loggedIn('alice', srv.base, alice, { phone: true });
  const page = await h.openDoc(ctx, doc);
  await page.locator(rowSel(ids[2])).waitFor();
  assert.equal(await page.locator('#touch-toolbar').isVisible(), false, 'no toolbar before a bullet is edited');
  // Nothing is wider than the phone (an admin's header has the most in it): a wider page
  // widens the layout viewport, and the fixed toolbar with it, past the screen's edge.
  const fits = async () => page.evaluate(() => ({ page: document.documentElement.scrollWidth, screen: Math.round(visualViewport?.width ?? innerWidth) }));
  const fit = await fits();
  assert.ok(fit.page <= fit.screen, `the document page is ${fit.page} px wide on a ${fit.screen} px phone`);

  await page.locator(`${rowSel(ids[1])} .row-text`).tap();
  await page.locator('#touch-toolbar').waitFor();
  if (shots) await page.screenshot({ path: `${shots}/editor-phone-toolbar.png` });
  await page.locator('#touch-toolbar [data-cmd=indent]').tap();
  await waitFor(async () => render(await apiOutline(api, doc)) === 'one\n  two\nthree', { message: 'indented from the toolbar' });
  // the caret stayed in the bullet: the next button acts on it too
  await page.locator('#touch-toolbar [data-cmd=toggleTodo]').tap();
  await waitFor(async () => (await api.snapshot(doc)).blocks.find((/** @type {any} */ b) => b.id === ids[1])?.type === 'todo', { message: 'a todo from the toolbar' });
  // The todo's 16 px box answers a finger anywhere in 32 × 32 px around it, and the bullet's
  // handle beside it is still the handle.
  const box = await page.locator(`${rowSel(ids[1])} .row-check`).boundingBox();
  const grip = await page.locator(`${rowSel(ids[1])} .row-handle`).boundingBox();
  assert.ok(box && grip);
  const cx = box.x + box.width / 2;
  const cy = box.y + box.height / 2;
  const hits = await page.evaluate(({ points }) => points.map(([x, y]) => document.elementFromPoint(x, y)?.className ?? ''), {
    points: [[cx - 10, cy], [cx + 14, cy], [cx, cy - 14], [cx, cy + 14], [cx + 14, cy + 14], [grip.x + grip.width / 2, grip.y + grip.height / 2]],
  });
  assert.deepEqual(hits, ['row-check', 'row-check', 'row-check', 'row-check', 'row-check', 'row-handle'], `what a finger meets around the box: ${hits}`);
  await page.touchscreen.tap(cx + 13, cy + 12);
  await waitFor(async () => (await api.snapshot(doc)).blocks.find((/** @type {any} */ b) => b.id === ids[1])?.checked === true, { message: 'a tap beside the box ticks it' });
  assert.equal(await page.locator(`${rowSel(ids[1])} .row-check`).isChecked(), true, 'the box shows it');
  await page.touchscreen.tap(cx + 13, cy + 12);
  await waitFor(async () => (await api.snapshot(doc)).blocks.find((/** @type {any} */ b) => b.id === ids[1])?.checked === false, { message: 'a second tap unticks it' });
  await page.locator(`${rowSel(ids[1])} .row-text`).tap();
  await page.locator('#touch-toolbar [data-cmd=outdent]').tap();
  await page.locator('#touch-toolbar [data-cmd=moveDown]').tap();
  await waitFor(async () => render(await apiOutline(api, doc)) === 'one\nthree\ntwo', { message: 'outdented and moved down' });
  // Delete and Undo from the toolbar (a phone keyboard has neither a Delete for a whole
  // bullet nor Ctrl+Z); all nine buttons fit a phone's width.
  const bar = await page.locator('#touch-toolbar').boundingBox();
  const last = await page.locator('#touch-toolbar [data-cmd=delete]').boundingBox();
  assert.ok(bar && last && last.x + last.width <= bar.x + bar.width + 0.5, 'the last button is on screen');
  assert.ok(last && last.width >= 32, `a button is ${last?.width} px wide`);
  await page.locator('#touch-toolbar [data-cmd=delete]').tap();
  await waitFor(async () => render(await apiOutline(api, doc)) === 'one\nthree', { message: 'deleted from the toolbar' });
  await page.locator(`${rowSel(ids[2])} .row-text`).tap();
  await page.locator('#touch-toolbar [data-cmd=undo]').tap();
  await waitFor(async () => render(await apiOutline(api, doc)) === 'one\nthree\ntwo', { message: 'the delete undone from the toolbar' });
  await page.locator(`${rowSel(ids[1])} .row-text`).tap();

  // drag "one" by its handle below "two" with a finger (touch events through CDP)
  const cdp = await ctx.newCDPSession(page);
  const handle = await page.locator(`${rowSel(ids[0])} .row-handle`).boundingBox();
  const target = await page.locator(`${rowSel(ids[1])} .row-text`).boundingBox();
  assert.ok(handle && target);
  const x0 = handle.x + handle.width / 2;
  const y0 = handle.y + handle.height / 2;
  const y1 = target.y + target.height * 0.9;
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: [{ x: x0, y: y0 }] });
  for (let k = 1; k <= 8; k++) {
    await cdp.send('Input.dispatchTouchEvent', { type: 'touchMove', touchPoints: [{ x: x0 + 20, y: y0 + ((y1 - y0) * k) / 8 }] });
  }
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
  await waitFor(async () => render(await apiOutline(api, doc)) === 'three\ntwo\none', { message: 'dragged below the last bullet with a finger' });
});

scenario('18 IME: composed Chinese text arrives whole, without ops in the middle of a composition', async (h) => {
  const s = await setup(h, { seed: ['说'], open: ['alice'], users: ['alice'] });
  const { api, doc, ids, pages, contexts } = s;
  const page = pages.alice;
  /** @type {string[]} */
  const sent = [];
  page.on('request', (r) => {
    if (r.url().endsWith('/sync') && r.method() === 'POST') {
      for (const op of JSON.parse(r.postData() || '{}').ops ?? []) if (op.kind === 'set_content') sent.push(op.content);
    }
  });
  await page.locator(`${rowSel(ids[0])} .row-text`).click();
  await page.keyboard.press('End');
  const cdp = await contexts.alice.newCDPSession(page);
  // pinyin "ni hao" composed, then committed as 你好; then "shi jie" → 世界
  /** @type {[string[], string][]} */
  const words = [[['n', 'ni', 'ni h', 'ni ha', 'ni hao'], '你好'], [['s', 'sh', 'shi', 'shi j', 'shi jie'], '世界']];
  for (const [steps, word] of words) {
    for (const t of steps) await cdp.send('Input.imeSetComposition', { text: t, selectionStart: t.length, selectionEnd: t.length });
    await cdp.send('Input.insertText', { text: word });
  }
  await waitFor(async () => render(await apiOutline(api, doc)) === '说你好世界', { message: async () => `the composed text on the server (has ${render(await apiOutline(api, doc))}, page ${await page.locator(`${rowSel(ids[0])} .row-text`).textContent()}, sent ${JSON.stringify(sent)})` });
  // nothing half-composed (pinyin letters) was ever sent
  assert.ok(sent.length > 0);
  for (const c of sent) assert.doesNotMatch(c, /[a-z]/, `an op sent mid-composition: ${JSON.stringify(c)}`);
});
