// @ts-check
// Scenario 5: undo touches only one's own changes. alice types in A, then in B; bob types in
// C. alice's Ctrl+Z undoes her B change (never bob's C), Ctrl+Shift+Z redoes it. After bob
// changed A, alice's undo step for A is skipped with a notice and A keeps bob's text.

import assert from 'node:assert/strict';

import { scenario, waitFor, readNotice } from './harness.js';
import { setup, focusEnd, converged, render, rowOf } from './fixtures.js';

scenario('5 undo: only own changes; a step on a bullet someone else changed is skipped with a notice', async (h) => {
  const s = await setup(h, { seed: ['A one', 'B two', 'C three'], fakeClock: true });
  const { srv, api, doc, ids, pages, contexts } = s;
  const [a, b, c] = ids;
  const { alice, bob } = pages;
  const texts = (o) => o.map((r) => r.text);
  const expect = (want) => (o) => texts(o).join('|') === want.join('|');

  await focusEnd(alice, a);
  await alice.keyboard.type(' +a');
  await contexts.alice.clock.fastForward(1_500); // a pause: the typing step ends
  await focusEnd(alice, b);
  await alice.keyboard.type(' +b');
  await focusEnd(bob, c);
  await bob.keyboard.type(' +bob');
  await converged(api, doc, [alice, bob], { check: expect(['A one +a', 'B two +b', 'C three +bob']) });
  await contexts.alice.clock.fastForward(1_500);

  // Undo: alice's last own change (B), not bob's C.
  await alice.keyboard.press('Control+z');
  await converged(api, doc, [alice, bob], { check: expect(['A one +a', 'B two', 'C three +bob']) });
  // Redo brings it back; undo again.
  await alice.keyboard.press('Control+Shift+z');
  await converged(api, doc, [alice, bob], { check: expect(['A one +a', 'B two +b', 'C three +bob']) });
  await alice.keyboard.press('Control+z');
  await converged(api, doc, [alice, bob], { check: expect(['A one +a', 'B two', 'C three +bob']) });

  // bob changes A once alice's lease on it has ended.
  await contexts.alice.clock.fastForward(21_000);
  await srv.advanceClock(21_000);
  await contexts.bob.clock.fastForward(21_000);
  await waitFor(async () => !(await rowOf(bob, a)).locked, { timeout: 30_000, message: "alice's lease on A to end" });
  await focusEnd(bob, a);
  await bob.keyboard.type(' +bob2');
  await converged(api, doc, [alice, bob], { check: expect(['A one +a +bob2', 'B two', 'C three +bob']) });

  // alice's next undo step is her A change: skipped, with a notice; nothing overwritten.
  const before = await readNotice(alice);
  await focusEnd(alice, b);
  await alice.keyboard.press('Control+z');
  const notice = await waitFor(async () => {
    const n = await readNotice(alice);
    return n && n !== before ? n : false;
  }, { message: 'a notice that the undo step was skipped' });
  h.log(`skip notice: "${notice}"`);
  const out = await converged(api, doc, [alice, bob], { check: expect(['A one +a +bob2', 'B two', 'C three +bob']) });
  assert.equal(out.find((r) => r.id === a).text, 'A one +a +bob2', render(out));
  assert.equal(out.find((r) => r.id === c).text, 'C three +bob');
});
