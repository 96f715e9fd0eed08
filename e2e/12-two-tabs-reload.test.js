// Scenario 12: one document open in two tabs of one browser (one IndexedDB, two queues);
// tab A types and is reloaded at once, round after round, while tab B keeps the document
// open and hears every change. Nothing may be lost — on A's screen, on B's and on the
// server — and no conflict copy may appear against oneself. (Found by hand: in 4 of ~230
// such reloads the last characters were lost, once with a conflict copy against herself.)

import assert from 'node:assert/strict';

import { scenario, waitFor, logStats } from './harness.js';
import { setup, focusEnd, pageOutline, apiOutline, render, converged, assertNoCopies } from './fixtures.js';

const ROUNDS = Number(process.env.E2E_TWO_TAB_ROUNDS) || 12;

scenario(`12 two tabs: ${ROUNDS} rounds of typing in one tab and reloading it at once, nothing lost`, async (h) => {
  const s = await setup(h, { seed: ['Start'], open: [] });
  const { api, doc, ids, users, base } = s;
  const ctx = await h.loggedIn('alice', base, users.alice);
  const tabB = await h.openDoc(ctx, doc);
  let tabA = await h.openDoc(ctx, doc);
  let text = 'Start';
  const lost = [];
  for (let r = 1; r <= ROUNDS; r++) {
    await waitFor(async () => (await pageOutline(tabA))[0]?.text === text, { message: `tab A shows round ${r - 1}` });
    await focusEnd(tabA, ids[0]);
    const more = ` r${r}xyz`;
    await tabA.keyboard.type(more, { delay: 0 });
    text += more;
    // Half the rounds reload at once, half after the change left (the other tab is woken).
    if (r % 2 === 0) await tabA.waitForTimeout(0);
    await tabA.reload();
    await tabA.locator(`#editor[data-doc-id="${doc}"]`).waitFor({ timeout: 20_000 });
    try {
      await waitFor(async () => (await pageOutline(tabA))[0]?.text === text, { timeout: 10_000, interval: 100 });
    } catch {
      const shown = (await pageOutline(tabA))[0]?.text;
      lost.push(`round ${r}: tab A shows ${JSON.stringify(shown)}, typed ${JSON.stringify(text)}`);
      h.log(`round ${r} LOST: ${lost[lost.length - 1]}`);
      text = shown ?? text;
    }
  }
  assert.deepEqual(lost, [], `text lost by reloading one of two tabs:\n${lost.join('\n')}`);
  const final = await converged(api, doc, [tabA, tabB], {
    timeout: 30_000,
    check: (o) => o[0]?.text === text,
  });
  assertNoCopies(final, 'after reloading one of two tabs');
  assert.equal(final.length, 1, render(final));
  const server = await apiOutline(api, doc);
  assert.equal(server[0].text, text);
  const stats = logStats((await api.readLog(doc, 0)).entries);
  h.log(`log: ${JSON.stringify(stats)}`);
  assert.equal(stats.dupOpIds, 0, 'no op applied twice');
}, { timeout: 60_000 + ROUNDS * 6_000 });
