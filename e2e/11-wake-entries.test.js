// @ts-check
// Scenario 11: entries in wake-ups (PROTOCOL §4). alice types one key at a time, slowly
// enough that each key is its own /sync and its own change; bob only watches. The server
// puts the new log entries into the WebSocket DOC_SEQ / SSE doc_seq wake-up, and bob's
// engine, whose lastSeq is exactly the first entry's seq − 1, applies them without a /sync
// of its own; alice, whose own wake-up comes while her /sync is still out, makes one /sync
// per change, not two. Then the same through a gap: bob's wake-ups are withheld for a while (his
// page drops them), and the first one he sees again must make him pull.

import assert from 'node:assert/strict';

import { scenario, waitFor, waitStage, STAGE } from './harness.js';
import { setup, focusEnd, converged, recordSyncs } from './fixtures.js';

const KEYS = 16;

/** In bob's page before any script: counts wake-ups with entries; `__dropWakes` withholds them. */
function instrument() {
  const w = /** @type {any} */ (window);
  w.__wakes = { total: 0, withEntries: 0, dropped: 0 };
  w.__dropWakes = false;
  /** @param {any} data @returns {boolean} keep it */
  const seen = (data) => {
    let msg;
    try {
      msg = JSON.parse(String(data));
    } catch {
      return true;
    }
    if (!msg || (msg.type !== undefined && msg.type !== 'DOC_SEQ') || typeof msg.headSeq !== 'number') return true;
    if (w.__dropWakes) {
      w.__wakes.dropped++;
      return false;
    }
    w.__wakes.total++;
    if (Array.isArray(msg.entries) && msg.entries.length) w.__wakes.withEntries++;
    return true;
  };
  const WS = window.WebSocket;
  // @ts-ignore
  window.WebSocket = class extends WS {
    set onmessage(fn) {
      // @ts-ignore -- the base class's accessor, set from the subclass's own
      super.onmessage = (ev) => (seen(ev.data) ? fn(ev) : undefined);
    }
    get onmessage() {
      return super.onmessage;
    }
  };
  const ES = window.EventSource;
  if (ES) {
    // @ts-ignore
    window.EventSource = class extends ES {
      addEventListener(type, fn, opts) {
        if (type !== 'doc_seq') return super.addEventListener(type, fn, opts);
        return super.addEventListener(type, (ev) => (seen(ev.data) ? fn(ev) : undefined), opts);
      }
    };
  }
}

for (const stage of [
  { name: 'WebSocket', proxy: null },
  { name: 'SSE', proxy: 'no-websocket.conf' },
]) {
  scenario(`11 entries in wake-ups over ${stage.name}: applied without a pull when contiguous, a gap pulls`, async (h) => {
    const s = await setup(h, {
      seed: ['Typed by alice:'],
      open: ['alice'],
      ...(stage.proxy ? { proxy: stage.proxy } : {}),
    });
    const { api, doc, ids, users, base } = s;
    const alice = s.pages.alice;
    const bobCtx = await h.loggedIn('bob', base, users.bob);
    await bobCtx.addInitScript(instrument);
    const bob = await h.openDoc(bobCtx, doc);
    await waitStage(alice, STAGE.live);
    await waitStage(bob, STAGE.live);
    await focusEnd(alice, ids[0]);
    // Let the focus's lease news settle first: lease news is pulled, as it should be.
    await converged(api, doc, [alice, bob]);
    const wakes = () => bob.evaluate(() => ({ ...(/** @type {any} */ (window).__wakes) }));
    await waitFor(async () => (await wakes()).total > 0, { timeout: 15_000, message: 'bob hears wake-ups' });

    const bobSyncs = recordSyncs(bob);
    const aliceSyncs = recordSyncs(alice);
    const before = await wakes();
    let text = 'Typed by alice:';
    for (let k = 0; k < KEYS; k++) {
      const c = String.fromCharCode(97 + k);
      text += c;
      await alice.keyboard.type(c);
      // Each key its own change: wait until the server has it.
      await waitFor(async () => (await api.snapshot(doc)).blocks.some((b) => b.content === text), {
        timeout: 10_000,
        interval: 50,
        message: `alice's "${c}" on the server`,
      });
    }
    await waitFor(async () => (await bob.locator('#outline .row-text').first().textContent()) === text, {
      timeout: 15_000,
      message: 'bob sees all of alice\'s text',
    });
    const after = await wakes();
    const withEntries = after.withEntries - before.withEntries;
    const pulls = bobSyncs.length;
    const aliceN = aliceSyncs.length;
    h.log(`${stage.name}: ${KEYS} changes, bob got ${after.total - before.total} wake-ups (${withEntries} with entries) and made ${pulls} /syncs; alice made ${aliceN} /syncs`);
    assert.ok(withEntries >= KEYS / 2, `the server put entries into most wake-ups (${withEntries} of ${KEYS} changes)`);
    assert.ok(pulls <= KEYS / 4, `bob applied the entries without pulling (${pulls} /syncs for ${KEYS} changes)`);
    // The writer's own wake-up comes while its /sync is still out: it must not pull again.
    assert.ok(aliceN <= KEYS + KEYS / 4, `alice did not pull her own changes a second time (${aliceN} /syncs for ${KEYS} changes)`);

    // A gap: bob misses the wake-ups of two changes; the next one does not continue his log.
    await bob.evaluate(() => { /** @type {any} */ (window).__dropWakes = true; });
    for (const c of ['X', 'Y']) {
      text += c;
      await alice.keyboard.type(c);
      await waitFor(async () => (await api.snapshot(doc)).blocks.some((b) => b.content === text), { timeout: 10_000, interval: 50 });
    }
    await waitFor(async () => (await wakes()).dropped >= 2, { timeout: 10_000, message: 'bob missed two wake-ups' });
    await bob.evaluate(() => { /** @type {any} */ (window).__dropWakes = false; });
    const pullsBefore = bobSyncs.length;
    text += 'Z';
    await alice.keyboard.type('Z');
    await waitFor(async () => (await bob.locator('#outline .row-text').first().textContent()) === text, {
      timeout: 15_000,
      message: 'bob catches up after the gap',
    });
    assert.ok(bobSyncs.length > pullsBefore, 'the wake-up after the gap made bob pull');
    await converged(api, doc, [alice, bob]);
  });
}
