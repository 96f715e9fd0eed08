// @ts-check
// Scenario 4: bob works offline "for days". He edits 5 bullets and adds 45 new ones with
// no network at all (his own nginx is stopped, and the browser is offline), reloads the
// page twice while offline — the service worker serves the app and IndexedDB keeps every
// change — while alice keeps editing. The server's clock moves 8 days and compaction runs.
// Back online, every bullet is there exactly once (counted in the server's op log),
// nothing is lost, and bob's view equals alice's.

import assert from 'node:assert/strict';

import { scenario, waitFor, waitStage, STAGE, logStats } from './harness.js';
import { setup, focusEnd, typeScript, converged, render, pageOutline, apiOutline, waitRowsShown, assertNoCopies } from './fixtures.js';

const DAY = 86_400_000;

scenario('4 days offline: 50 bullets edited or added offline, two offline reloads, +8 days and compaction, all exactly once', async (h) => {
  const seed = ['Shared start', 'Edit me 1', 'Edit me 2', 'Edit me 3', 'Edit me 4', 'Edit me 5'];
  const s = await setup(h, { seed, open: ['alice'] });
  const { srv, api, doc, ids, users, owner } = s;
  const alice = s.pages.alice;

  // bob goes through his own proxy, so "offline" can really mean no network at all (the
  // browser's offline emulation may not cover the service worker's own fetches). Any
  // working proxy does; this one keeps the test independent of the WebSocket stage.
  const proxy = await h.nginx('no-websocket.conf', srv);
  const bobCtx = await h.loggedIn('bob', proxy.base, users.bob);
  let bob = await h.openDoc(bobCtx, doc);
  await waitRowsShown(bob, ids);

  // The service worker must control the page before the network goes away.
  await waitFor(async () => {
    const controlled = await bob.evaluate(async () => {
      if (!('serviceWorker' in navigator)) return 'unsupported';
      await navigator.serviceWorker.ready;
      return navigator.serviceWorker.controller ? 'yes' : 'no';
    });
    if (controlled === 'no') {
      await bob.reload();
      await bob.locator(`#editor[data-doc-id="${doc}"]`).waitFor();
    }
    return controlled === 'yes';
  }, { timeout: 20_000, interval: 500, message: 'a service worker controlling bob\'s page' });
  await waitRowsShown(bob, ids);
  // ...and holding every file of the app shell (its list: /app/shell-files.json).
  let missing = [];
  await waitFor(async () => {
    missing = await bob.evaluate(async () => {
      const list = await (await fetch('/app/shell-files.json', { cache: 'no-cache' })).json();
      const out = [];
      for (const f of list.files) if (!(await caches.match(f))) out.push(f);
      return out;
    });
    return missing.length === 0;
  }, { timeout: 20_000, interval: 250, message: () => `the service worker caches the whole shell; missing: ${missing.join(', ')}` });

  h.log('bob goes offline');
  await bobCtx.setOffline(true);
  await proxy.stop();
  await waitStage(bob, STAGE.offline);

  // 5 edits of existing bullets, then 45 new bullets at the end.
  for (let k = 1; k <= 5; k++) {
    await focusEnd(bob, ids[k]);
    await bob.keyboard.type(` (bob, offline day ${k})`);
  }
  const added = [];
  await focusEnd(bob, ids[ids.length - 1]);
  for (let i = 1; i <= 45; i++) {
    const text = `offline bullet ${String(i).padStart(2, '0')} from bob`;
    added.push(text);
    await typeScript(bob, [{ press: 'Enter' }, text], 2);
  }
  const expectBob = (outline) => {
    const texts = outline.map((r) => r.text);
    for (let k = 1; k <= 5; k++) if (!texts.includes(`Edit me ${k} (bob, offline day ${k})`)) return false;
    return added.every((t) => texts.filter((x) => x === t).length === 1);
  };
  await waitFor(async () => expectBob(await pageOutline(bob)), {
    message: async () => `bob sees all his offline work:\n${render(await pageOutline(bob))}`,
  });

  h.log('bob\'s 50 offline changes shown');
  // Reload at once, without waiting for "saved on this device": every queue write was begun
  // with its keystroke and asks for its commit at once, so it completes although the page
  // unloads (e2e/10 presses reload right after the last key, round after round).
  // Two reloads with no network: the app comes from the service worker, the outline and the
  // queue from IndexedDB.
  for (let r = 1; r <= 2; r++) {
    await bob.reload();
    await bob.locator(`#editor[data-doc-id="${doc}"]`).waitFor({ timeout: 20_000 });
    await waitFor(async () => expectBob(await pageOutline(bob)), {
      timeout: 15_000,
      message: async () => `after offline reload ${r}, every offline change is still shown:\n${render(await pageOutline(bob))}`,
    });
    await waitStage(bob, STAGE.offline);
    assert.ok((await apiOutline(api, doc)).every((b) => !added.includes(b.text)), 'nothing of bob\'s reached the server yet');
  }

  h.log('two offline reloads done');
  // alice works meanwhile.
  await focusEnd(alice, ids[0]);
  await alice.keyboard.type(' (alice was here)');
  await alice.keyboard.press('Enter');
  await alice.keyboard.type('alice online 1');
  await waitFor(async () => (await apiOutline(api, doc)).some((b) => b.text === 'alice online 1'), {
    message: "alice's work on the server",
  });

  // Days pass on the server; compaction runs.
  await srv.advanceClock(8 * DAY);
  const summary = await srv.compact(owner);
  h.log(`compaction after +8 days: ${JSON.stringify(summary)}`);

  // bob is back.
  h.log('bob comes back');
  await proxy.restart();
  await bobCtx.setOffline(false);
  const final = await converged(api, doc, [alice, bob], { timeout: 60_000, check: expectBob });
  assertNoCopies(final, 'after coming back');
  assert.ok(final.some((r) => r.text === 'Shared start (alice was here)'));
  assert.ok(final.some((r) => r.text === 'alice online 1'));
  assert.equal(final.length, seed.length + 1 + 45, render(final));
  await waitStage(bob, STAGE.live, 30_000);

  // The server's log: each of bob's new bullets inserted exactly once, no op twice.
  const log = await api.readLog(doc, 0);
  assert.equal(log.resync, false, 'a shared document keeps its log for 30 days');
  const stats = logStats(log.entries);
  h.log(`log: ${JSON.stringify(stats)}`);
  assert.equal(stats.dupOpIds, 0, 'no op applied twice');
  for (const t of added) {
    const block = final.find((r) => r.text === t);
    const inserts = log.entries.filter(
      (e) => e.kind === 'insert' && e.effects.some((f) => f.e === 'block' && f.block.id === block.id),
    );
    assert.equal(inserts.length, 1, `"${t}" inserted exactly once`);
  }
});
