// @ts-check
// Scenario 2: leases as people see them. alice focuses a bullet; bob sees the lock with her
// name and cannot type into it; Enter in it gives bob a new bullet below; when alice leaves
// the bullet she lets go of it as soon as her text is on the server (no 20 s wait) and bob can
// edit; closing alice's tab releases her bullet at once (leave with keepalive).

import assert from 'node:assert/strict';

import { scenario, waitFor, readNotice, rowText } from './harness.js';
import { setup, focusEnd, rowOf, apiOutline, converged, render, recordSyncs } from './fixtures.js';

scenario('2 locks: lock shown with the name, read-only, Enter below, released after the lease and on tab close', async (h) => {
  const { srv, api, doc, ids, pages, contexts } = await setup(h, {
    seed: ['Locked line', 'Other line'],
    fakeClock: true,
  });
  const [x, other] = ids;
  const { alice, bob } = pages;

  await focusEnd(alice, x);
  await waitFor(async () => {
    const r = await rowOf(bob, x);
    return r && r.locked && /Alice/.test(r.lockName || '');
  }, { timeout: 10_000, message: async () => `bob sees the lock of Alice on the row: ${JSON.stringify(await rowOf(bob, x))}` });

  // bob cannot type into it: his view stays, nothing reaches the server.
  const bobSyncs = recordSyncs(bob);
  await rowText(bob, x).click({ force: true });
  await bob.keyboard.type('zzz');
  assert.equal((await rowOf(bob, x)).text, 'Locked line', 'a locked row is read-only');

  // Enter in the locked row: a new bullet below it, bob's own.
  await bob.keyboard.press('End');
  await bob.keyboard.press('Enter');
  await bob.keyboard.type('below, by bob');
  const afterEnter = await converged(api, doc, [alice, bob], {
    check: (o) => o.length === 3,
  });
  assert.deepEqual(
    afterEnter.map((r) => r.text),
    ['Locked line', 'below, by bob', 'Other line'],
    render(afterEnter),
  );
  assert.ok(
    !bobSyncs.some((s) => (s.body?.ops || []).some((op) => op.blockId === x && op.kind === 'set_content')),
    'bob never sent a text change for the locked bullet',
  );
  const notice = await readNotice(bob);
  h.log(`bob's notice after typing into the lock: "${notice}"`);

  // alice leaves the bullet: her text is on the server, so she lets go of it at once (the
  // clocks do not move: no 20 s lease runs out) and bob can edit it.
  const leftAt = Date.now();
  await focusEnd(alice, other);
  await waitFor(async () => !(await rowOf(bob, x)).locked, {
    timeout: 5_000,
    message: async () => `the lock to end for bob as soon as alice left: ${JSON.stringify(await rowOf(bob, x))}`,
  });
  h.log(`lock released ${Date.now() - leftAt} ms after alice left the bullet`);
  await focusEnd(bob, x);
  await bob.keyboard.type(' edited by bob');
  await converged(api, doc, [alice, bob], {
    check: (o) => o.some((r) => r.id === x && r.text === 'Locked line edited by bob'),
  });

  // alice holds the other bullet (she is in it); closing her tab releases it at once, long
  // before a lease could expire (the clocks do not move now).
  await waitFor(async () => {
    const r = await rowOf(bob, other);
    return r && r.locked && /Alice/.test(r.lockName || '');
  }, { message: async () => `bob sees Alice's lock on the other row: ${JSON.stringify(await rowOf(bob, other))}` });
  const closedAt = Date.now();
  await alice.close({ runBeforeUnload: true });
  await waitFor(async () => !(await rowOf(bob, other)).locked, {
    timeout: 5_000,
    message: 'closing the tab releases the bullet at once (leave with keepalive)',
  });
  h.log(`lock released ${Date.now() - closedAt} ms after alice's tab closed`);
  await focusEnd(bob, other);
  await bob.keyboard.type(' and bob');
  await waitFor(async () => (await apiOutline(api, doc)).find((r) => r.id === other)?.text === 'Other line and bob', {
    message: 'bob edits the released bullet',
  });
});
