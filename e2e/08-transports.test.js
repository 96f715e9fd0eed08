// @ts-check
// Scenario 8: every stage of the wake-up ladder (PROTOCOL §4) through a real nginx. For each
// proxy config both browsers go through it; the status line names the stage, edits still
// arrive both ways, and after going offline and back online the client climbs the ladder
// back to the same stage.
//   docsync.conf       → WebSocket            "Live"
//   no-websocket.conf  → SSE                  "Live"
//   blocking.conf      → long-polling         "Live (long-polling)"
//   no-streaming.conf  → /sync every 3 s      "Syncing every 3 s"

import assert from 'node:assert/strict';

import { scenario, waitFor, waitStage, STAGE } from './harness.js';
import { setup, focusEnd, converged, rowOf } from './fixtures.js';

const STAGES = [
  { config: 'docsync.conf', label: STAGE.live, channel: 'websocket' },
  { config: 'no-websocket.conf', label: STAGE.live, channel: 'sse' },
  { config: 'blocking.conf', label: STAGE.longpoll, channel: 'longpoll' },
  { config: 'no-streaming.conf', label: STAGE.interval, channel: 'interval' },
];

/** Watches which wake-up channels a page uses: WebSocket frames, SSE and long-poll answers. */
function watchChannels(page) {
  const seen = { wsJoined: 0, wsFailed: 0, sseOk: 0, longpollStarted: 0, longpollOk: 0, longpollFailed: 0 };
  if (!page) return seen;
  page.on('request', (req) => {
    if (/\/changes$/.test(new URL(req.url()).pathname)) seen.longpollStarted++;
  });
  page.on('websocket', (ws) => {
    ws.on('framereceived', (f) => {
      if (typeof f.payload === 'string' && f.payload.includes('"JOINED"')) seen.wsJoined++;
    });
    ws.on('socketerror', () => seen.wsFailed++);
  });
  page.on('response', (res) => {
    const p = new URL(res.url()).pathname;
    if (/\/events$/.test(p) && res.status() === 200) seen.sseOk++;
    if (/\/changes$/.test(p)) {
      if (res.status() === 200) seen.longpollOk++;
      else seen.longpollFailed++;
    }
  });
  page.on('requestfailed', (req) => {
    if (/\/changes$/.test(new URL(req.url()).pathname)) seen.longpollFailed++;
  });
  return seen;
}

scenario('8 transports: every ladder stage through nginx names itself, carries edits, and climbs back after offline', async (h) => {
  const srv = await h.server();
  for (const [i, st] of STAGES.entries()) {
    await h.step(`${st.config} → ${st.label} (${st.channel})`, async () => {
      const s = await setup(h, {
        server: srv,
        users: [`alice${i}`, `bob${i}`],
        seed: ['from alice:', 'from bob:'],
        proxy: st.config,
        open: [],
      });
      const [ua, ub] = [s.users[`alice${i}`], s.users[`bob${i}`]];
      const ca = await h.loggedIn(`alice-${st.channel}`, s.base, ua);
      const cb = await h.loggedIn(`bob-${st.channel}`, s.base, ub);
      /** @type {ReturnType<typeof watchChannels>} */ let seen = watchChannels(null);
      let seenBob = seen;
      const alice = await h.openDoc(ca, s.doc, { before: (p) => { seen = watchChannels(p); } });
      const bob = await h.openDoc(cb, s.doc, { before: (p) => { seenBob = watchChannels(p); } });
      if (st.channel === 'longpoll') {
        // The stage shows once a long-poll answers, which an idle document makes wait 25 s:
        // once both poll, alice's focus (a lease change) answers them.
        await waitFor(() => seen.longpollStarted > 0 && seenBob.longpollStarted > 0, {
          timeout: 20_000,
          message: () => `both browsers long-polling: ${JSON.stringify({ alice: seen, bob: seenBob })}`,
        });
        await focusEnd(alice, s.ids[0]);
      }
      for (const p of [alice, bob]) await waitStage(p, st.label, 20_000);
      const channelOk = () => {
        if (st.channel === 'websocket') return seen.wsJoined > 0;
        if (st.channel === 'sse') return seen.sseOk > 0 && seen.wsJoined === 0;
        if (st.channel === 'longpoll') return seen.longpollOk > 0 && seen.wsJoined === 0;
        return seen.longpollFailed >= 3 && seen.wsJoined === 0;
      };
      await waitFor(channelOk, { timeout: 20_000, message: () => `channel ${st.channel} in use: ${JSON.stringify(seen)}` });
      h.log(`${st.config}: ${JSON.stringify(seen)}`);

      const [ra, rb] = s.ids;
      const timeout = st.channel === 'interval' ? 15_000 : 10_000;
      await focusEnd(alice, ra);
      await alice.keyboard.type(` ${st.channel} 1`);
      await focusEnd(bob, rb);
      await bob.keyboard.type(` ${st.channel} 2`);
      await converged(s.api, s.doc, [alice, bob], {
        timeout,
        check: (o) => o[0].text === `from alice: ${st.channel} 1` && o[1].text === `from bob: ${st.channel} 2`,
      });

      // Offline and back: the ladder is climbed again to the same stage; edits made
      // offline arrive.
      await cb.setOffline(true);
      await waitStage(bob, STAGE.offline);
      await bob.keyboard.type(' offline');
      await cb.setOffline(false);
      await waitStage(bob, st.label, 30_000);
      await converged(s.api, s.doc, [alice, bob], {
        timeout,
        check: (o) => o[1].text === `from bob: ${st.channel} 2 offline`,
      });
      await alice.keyboard.type(' after');
      await waitFor(async () => (await rowOf(bob, ra))?.text === `from alice: ${st.channel} 1 after`, {
        timeout,
        message: 'alice\'s edit reaches bob after he came back',
      });
      assert.equal(await (await bob.locator('#status-stage').textContent())?.trim(), st.label);
      await h.closeContext(ca);
      await h.closeContext(cb);
    });
  }
}, { timeout: 300_000 });
