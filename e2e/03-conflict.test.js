// @ts-check
// Scenario 3: bob edits a bullet offline while alice edits the same bullet online. Back
// online, the original keeps alice's text and bob's text sits directly below as a marked
// conflict copy, in both browsers and on the server. Accept and Discard each work, and each
// is refused while alice holds the bullet.

import assert from 'node:assert/strict';

import { scenario, waitFor, waitStage, readNotice, rowSel, SEL, STAGE } from './harness.js';
import { setup, focusEnd, rowOf, converged, render } from './fixtures.js';

/**
 * One round: bob offline edits `x`, alice edits `x` (and stays in it), bob back online.
 * Returns the copy's id once both browsers and the server show it directly below `x`.
 */
async function makeConflict(h, s, x, bobText, aliceText) {
  const { api, doc, pages, contexts } = s;
  await contexts.bob.setOffline(true);
  await waitStage(pages.bob, STAGE.offline);
  await focusEnd(pages.bob, x);
  await pages.bob.keyboard.type(bobText);
  // bob may still hold the bullet from before he went offline (a left bullet stays held
  // 20 s): let that lease run out on the server and in alice's page.
  if ((await rowOf(pages.alice, x))?.locked) {
    await s.srv.advanceClock(21_000);
    await contexts.alice.clock.fastForward(21_000);
    await waitFor(async () => !(await rowOf(pages.alice, x))?.locked, {
      timeout: 30_000,
      message: "bob's old lease to end for alice",
    });
  }
  const was = (await rowOf(pages.alice, x)).text;
  await focusEnd(pages.alice, x);
  await pages.alice.keyboard.type(aliceText);
  const before = was + aliceText;
  await waitFor(async () => (await rowOf(pages.alice, x))?.text === before, {
    timeout: 5_000,
    message: async () => `alice's typing in the free bullet shown (shows "${(await rowOf(pages.alice, x))?.text}")`,
  });
  await waitFor(async () => (await api.snapshot(doc)).blocks.find((b) => b.id === x)?.content === before, {
    message: "alice's edit reaches the server",
  });
  await contexts.bob.setOffline(false);
  const out = await converged(api, doc, [pages.alice, pages.bob], {
    timeout: 30_000,
    check: (o) => o.some((r) => r.conflictOf === x),
  });
  const i = out.findIndex((r) => r.id === x);
  const copy = out[i + 1];
  assert.ok(copy && copy.conflictOf === x, `the copy sits directly below the original:\n${render(out)}`);
  h.log(`conflict copy ${copy.id}: "${copy.text}" below "${out[i].text}"`);
  return { copy, outline: out };
}

/** Waits for alice's lease on `x` to end (page clocks and server clock jump 21 s). */
async function aliceLeaves(s, x, elsewhere) {
  const { srv, pages, contexts } = s;
  await focusEnd(pages.alice, elsewhere);
  await contexts.alice.clock.fastForward(21_000);
  await srv.advanceClock(21_000);
  await contexts.bob.clock.fastForward(21_000);
  await waitFor(async () => !(await rowOf(pages.bob, x))?.locked, {
    timeout: 30_000,
    message: 'alice\'s lease on the original to end',
  });
}

scenario('3 conflict copy: offline edit vs online edit, copy below in both browsers, Accept and Discard', async (h) => {
  const s = await setup(h, { seed: ['Plan: meet at noon', 'Second line'], fakeClock: true });
  const { api, doc, ids, pages } = s;
  const [x, second] = ids;

  // Round 1 → Accept.
  let { copy } = await makeConflict(h, s, x, ' (bob: make it one)', ' (alice: or two)');
  assert.equal(copy.text, 'Plan: meet at noon (bob: make it one)');
  let snap = await api.snapshot(doc);
  let orig = snap.blocks.find((b) => b.id === x);
  assert.equal(orig.content, 'Plan: meet at noon (alice: or two)', 'the original keeps alice\'s text');
  const copyBlock = snap.blocks.find((b) => b.id === copy.id);
  assert.equal(copyBlock.conflictAuthor?.name, 'Bob');
  for (const p of [pages.alice, pages.bob]) {
    await p.locator(`${rowSel(copy.id)} ${SEL.accept}`).waitFor({ state: 'visible' });
    assert.equal((await rowOf(p, copy.id)).conflictOf, x, 'the copy is marked in each browser');
  }

  // Refused while alice holds the original (she is still in it).
  assert.ok((await rowOf(pages.bob, x)).locked, 'bob sees alice holding the original');
  await pages.bob.locator(`${rowSel(copy.id)} ${SEL.accept}`).click();
  await waitFor(async () => (await readNotice(pages.bob)) !== '', { message: 'a notice that Accept was refused' });
  h.log(`accept refused: "${await readNotice(pages.bob)}"`);
  assert.equal((await rowOf(pages.bob, x)).text, 'Plan: meet at noon (alice: or two)');
  assert.ok(await rowOf(pages.bob, copy.id), 'the copy stays after a refused Accept');

  await aliceLeaves(s, x, second);
  await pages.bob.locator(`${rowSel(copy.id)} ${SEL.accept}`).click();
  let out = await converged(api, doc, [pages.alice, pages.bob], {
    check: (o) => !o.some((r) => r.id === copy.id) && o.find((r) => r.id === x)?.text === copy.text,
  });
  assert.deepEqual(out.map((r) => r.text), ['Plan: meet at noon (bob: make it one)', 'Second line'], render(out));

  // Round 2 → Discard.
  ({ copy } = await makeConflict(h, s, x, ' again', ' (alice wins)'));
  snap = await api.snapshot(doc);
  orig = snap.blocks.find((b) => b.id === x);
  assert.equal(orig.content, 'Plan: meet at noon (bob: make it one) (alice wins)');
  assert.equal(copy.text, 'Plan: meet at noon (bob: make it one) again');
  const noticeBefore = await readNotice(pages.bob);
  await pages.bob.locator(`${rowSel(copy.id)} ${SEL.discard}`).click();
  await waitFor(async () => {
    const n = await readNotice(pages.bob);
    return n !== '' && n !== noticeBefore;
  }, { message: 'a notice that Discard was refused' }).catch(async (e) => {
    // The same notice text may be shown again; what matters is that the copy stayed.
    if ((await readNotice(pages.bob)) === '') throw e;
  });
  assert.ok(await rowOf(pages.bob, copy.id), 'the copy stays after a refused Discard');
  assert.ok((await api.snapshot(doc)).blocks.find((b) => b.id === copy.id && !b.deleted), 'and on the server');

  await aliceLeaves(s, x, second);
  await pages.bob.locator(`${rowSel(copy.id)} ${SEL.discard}`).click();
  out = await converged(api, doc, [pages.alice, pages.bob], {
    check: (o) => !o.some((r) => r.id === copy.id),
  });
  assert.deepEqual(
    out.map((r) => r.text),
    ['Plan: meet at noon (bob: make it one) (alice wins)', 'Second line'],
    render(out),
  );
});
