// @ts-check
// Scenario 10: type fast, reload at once. Every round types a few new bullets (or appends
// to an existing one) as fast as the keyboard goes and calls page.reload() — or closes the
// tab and opens a new one — right after the last keypress: no waiting for "saved", for
// IndexedDB or for a frame. The server never hears of it: a proxy in the test drops every
// /sync (as if the network were down), so what comes back can only come from this device.
// After each round every typed character must be shown; at the end, with the network back,
// the server must have all of it, each bullet exactly once.

import assert from 'node:assert/strict';
import { scenario, waitFor, logStats, rowSel } from './harness.js';
import { setup, focusEnd, pageOutline, apiOutline, render, converged, assertNoCopies, writeCutProxy } from './fixtures.js';

const ROUNDS = Number(process.env.E2E_RELOAD_ROUNDS) || 10;
const BULLETS_PER_ROUND = 4;
const KINDS = ['bullets', 'bullets', 'append', 'pagehide', 'close'];

scenario(`10 reload at once: ${ROUNDS} rounds of fast typing, each followed at once by a reload, nothing lost`, async (h) => {
  const s = await setup(h, { seed: ['Start'], open: [] });
  const { srv, api, doc, ids, users } = s;
  // The network is down for writes: the text can survive a reload only on this device. A
  // proxy in front of the server drops every /sync (including the keepalive one an
  // unloading page sends, which the browser's own request interception does not see).
  const cut = await writeCutProxy(srv.addr);
  h.proxies.push(/** @type {any} */ ({ config: 'write-cut', stop: async () => cut.close(), readLog: () => `dropped ${cut.dropped} /sync requests\n` }));
  const ctx = await h.loggedIn('alice', cut.base, users.alice);
  let page = await h.openDoc(ctx, doc);
  await waitFor(async () => (await pageOutline(page)).length === 1, { message: 'the seed bullet shown' });
  cut.blocked = true;

  /** Every text the rounds typed, as it must end up. */
  const expected = [];
  let appended = 'Start';
  const lost = [];
  for (let r = 1; r <= ROUNDS; r++) {
    const outline = await pageOutline(page);
    const texts = [];
    const kind = KINDS[(r - 1) % KINDS.length];
    if (kind === 'append') {
      // Appending to an existing bullet: pure typing, one merged set_content.
      await focusEnd(page, ids[0]);
      const more = ` +r${r} quick brown fox`;
      await page.keyboard.type(more, { delay: 0 });
      appended += more;
      // At once: no wait for anything.
      await page.reload();
    } else if (kind === 'pagehide') {
      // The frame after the keystroke never comes (requestAnimationFrame does nothing), so
      // the editor hands the text to the engine only while the page unloads (its
      // visibilitychange/pagehide handlers): the write they start must still complete.
      await focusEnd(page, ids[0]);
      // This round writes into the field itself, as only an editable field lets the keyboard
      // (keys typed into the read-only first screen are held: the other rounds cover them).
      await waitFor(async () => (await page.locator(`${rowSel(ids[0])} .row-text`).getAttribute('contenteditable')) !== null,
        { message: 'the first bullet editable' });
      const more = ` +r${r} saved in pagehide`;
      const navigated = page.waitForEvent('framenavigated');
      await page.evaluate((text) => {
        window.requestAnimationFrame = () => 0;
        const el = /** @type {HTMLElement} */ (document.activeElement);
        el.textContent = (el.textContent ?? '') + text;
        el.dispatchEvent(new InputEvent('input', { bubbles: true, inputType: 'insertText', data: text }));
        location.reload();
      }, more).catch(() => {});
      await navigated;
      appended += more;
    } else if (kind === 'close') {
      // The tab is closed right after the last key; a new tab (a new clientId) adopts the
      // closed tab's queue from IndexedDB.
      await focusEnd(page, outline[outline.length - 1].id);
      for (let k = 1; k <= BULLETS_PER_ROUND; k++) {
        const t = `round ${r} bullet ${k} then the tab closed`;
        texts.push(t);
        await page.keyboard.press('Enter');
        await page.keyboard.type(t, { delay: 0 });
      }
      await page.close();
      page = await ctx.newPage();
      await page.goto(`/d/${doc}`);
    } else {
      await focusEnd(page, outline[outline.length - 1].id);
      for (let k = 1; k <= BULLETS_PER_ROUND; k++) {
        const t = `round ${r} bullet ${k} typed fast`;
        texts.push(t);
        await page.keyboard.press('Enter');
        await page.keyboard.type(t, { delay: 0 });
      }
      // At once: no wait for anything.
      await page.reload();
    }
    expected.push(...texts);
    await page.locator(`#editor[data-doc-id="${doc}"]`).waitFor({ timeout: 20_000 });
    const want = (o) => {
      const shown = o.map((x) => x.text);
      return shown[0] === appended && expected.every((t) => shown.filter((x) => x === t).length === 1);
    };
    let after = [];
    try {
      await waitFor(async () => want((after = await pageOutline(page))), { timeout: 10_000, interval: 100 });
    } catch {
      const shown = after.map((x) => x.text);
      const missing = expected.filter((t) => !shown.includes(t));
      lost.push(`round ${r}: first bullet ${JSON.stringify(shown[0])} (want ${JSON.stringify(appended)}); missing ${JSON.stringify(missing)}`);
      h.log(`round ${r} LOST:\n${render(after)}`);
      // Go on with what the page has, to count losses over every round.
      appended = shown[0] ?? appended;
      expected.splice(0, expected.length, ...expected.filter((t) => shown.includes(t)));
    }
    h.log(`round ${r}: ${expected.length} bullets + first bullet ${appended.length} chars shown after an immediate reload`);
  }
  assert.deepEqual(lost, [], `typed text lost by an immediate reload:\n${lost.join('\n')}`);
  assert.ok(cut.dropped > 0, 'the test really kept the server out (some /sync was dropped)');
  const server = await apiOutline(api, doc);
  assert.ok(server.every((b) => !expected.includes(b.text)), 'nothing reached the server before the network came back');

  // Network back: everything reaches the server exactly once.
  cut.blocked = false;
  const final = await converged(api, doc, [page], {
    timeout: 45_000,
    check: (o) => o[0].text === appended && expected.every((t) => o.filter((x) => x.text === t).length === 1),
  });
  assertNoCopies(final, 'after the network came back');
  assert.equal(final.length, 1 + expected.length, render(final));
  const stats = logStats((await api.readLog(doc, 0)).entries);
  h.log(`log: ${JSON.stringify(stats)}`);
  assert.equal(stats.dupOpIds, 0, 'no op applied twice');
}, { timeout: 240_000 });
