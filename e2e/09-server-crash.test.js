// @ts-check
// Scenario 9: the server is SIGKILLed while alice and bob type, and restarted on the same
// port and database. Both editors show "Offline – changes saved on this device" while it is
// down (they keep typing), then catch up: nothing acknowledged and nothing typed is lost.

import assert from 'node:assert/strict';

import { scenario, waitFor, waitStage, readStage, STAGE } from './harness.js';
import { setup, focusEnd, converged, rowOf, recordSyncReplies, render } from './fixtures.js';

const chunk = (who, phase, n) => {
  let s = '';
  for (let i = 0; s.length < n; i++) s += ` ${who}${phase}.${i}`;
  return s;
};

scenario('9 server SIGKILL + restart while both type: offline shown, then caught up, nothing lost', async (h) => {
  const { srv, api, doc, ids, pages } = await setup(h, { seed: ['alice:', 'bob:'] });
  const [ra, rb] = ids;
  const { alice, bob } = pages;
  const replies = { alice: recordSyncReplies(alice), bob: recordSyncReplies(bob) };
  await focusEnd(alice, ra);
  await focusEnd(bob, rb);
  const typed = { alice: 'alice:', bob: 'bob:' };
  const type = async (who, text, delay = 15) => {
    await pages[who].keyboard.type(text, { delay });
    typed[who] += text;
  };

  // Phase 1: both type; their work is acknowledged.
  await Promise.all([type('alice', chunk('a', 1, 80)), type('bob', chunk('b', 1, 80))]);
  h.log('phase 1 typed');
  await converged(api, doc, [alice, bob], { check: (o) => o[0].text === typed.alice && o[1].text === typed.bob });
  h.log('phase 1 acknowledged');

  // Phase 2: the server is killed while both are typing.
  const p2a = chunk('a', 2, 120);
  const p2b = chunk('b', 2, 120);
  const typing = Promise.all([type('alice', p2a), type('bob', p2b)]);
  await waitFor(async () => ((await rowOf(alice, ra))?.text.length ?? 0) >= typed.alice.length + 30, {
    message: 'alice is typing phase 2',
  });
  await srv.kill9();
  h.log('server killed');
  await typing;
  for (const p of [alice, bob]) await waitStage(p, STAGE.offline, 30_000);

  // Phase 3: typing while the server is down.
  await Promise.all([type('alice', chunk('a', 3, 60)), type('bob', chunk('b', 3, 60))]);
  assert.equal((await rowOf(alice, ra)).text, typed.alice);
  assert.equal((await rowOf(bob, rb)).text, typed.bob);

  await srv.restart();
  h.log('server restarted');
  // Back online: any stage but "Offline". (While the server was down the long-polls
  // failed too, so a client may now sit on the 3 s interval: PROTOCOL §4 climbs back only
  // on the browser's `online` event, which a server restart does not cause.)
  for (const p of [alice, bob]) {
    await waitFor(async () => {
      const st = await readStage(p);
      return st !== STAGE.offline && st !== '';
    }, { timeout: 30_000, message: 'the editor leaves "Offline" after the restart' });
  }
  h.log(`stages after the restart: alice "${await readStage(alice)}", bob "${await readStage(bob)}"`);

  // Phase 4: typing after the restart.
  await Promise.all([type('alice', chunk('a', 4, 40)), type('bob', chunk('b', 4, 40))]);
  const out = await converged(api, doc, [alice, bob], {
    timeout: 45_000,
    check: (o) => o[0].text === typed.alice && o[1].text === typed.bob,
  });
  assert.equal(out.length, 2, render(out));
  assert.ok(
    [...replies.alice, ...replies.bob].every((r) => r.status !== 200 || (r.body?.results || []).every((x) => x.status === 'applied')),
    'every acknowledged op was applied (no conflict, no rejection)',
  );
  h.log(`typed: alice ${typed.alice.length} chars, bob ${typed.bob.length} chars`);
});
