// @ts-check
// Scenario 28: a program, not a browser, uses @docsync/client (the engine as a package, in
// Node with fake-indexeddb) against the real server: it opens a document with an API token,
// adds bullets, follows a colleague's edits as they come (long-polling: Node 20 has neither
// WebSocket nor EventSource), goes offline and adds more — queued, not sent — and back
// online sends them. A second program with the same client ID and database finds what the
// first queued and did not send.

import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';

import { openDocument } from '@docsync/client';
import { scenario, waitFor } from './harness.js';

scenario('28 node client: a bot adds bullets, follows edits, goes offline and back', async (h) => {
  const srv = await h.server();
  const { alice, bob } = await h.users(srv, ['alice', 'bob']);
  const api = srv.api(alice);
  const doc = await api.createDoc('Standup');
  await api.setShares(doc, [[bob, 'write']]);
  const bobApi = srv.api(bob);
  /** Texts of the live bullets on the server, in order. */
  const onServer = async () => (await bobApi.snapshot(doc)).blocks.filter((/** @type {any} */ b) => !b.deleted).map((/** @type {any} */ b) => b.content);

  const bot = await openDocument({ baseUrl: srv.base, token: alice.token, docId: doc, clientId: 'cl_bot_1', storeName: 'bot-1' });
  assert.equal(bot.state.role, 'owner');
  assert.deepEqual(bot.rows, [], 'an empty document');
  const first = bot.addBullet('Yesterday: shipped webhooks');
  bot.addBullet('Tests green', { parentId: first });
  await bot.saved();
  assert.deepEqual(await onServer(), ['Yesterday: shipped webhooks', 'Tests green']);

  // A colleague's edit arrives by itself.
  await bobApi.insertBullets(doc, ['Today: the client package']);
  const seen = await bot.until((s) => s.rows.some((r) => r.content === 'Today: the client package'));
  assert.ok(['longpoll', 'interval'].includes(seen.stage), `woken by ${seen.stage}`);
  bot.setText(first, 'Yesterday: shipped webhooks and the feed');
  await bot.saved();
  assert.ok((await onServer()).includes('Yesterday: shipped webhooks and the feed'));

  // Offline: edits are queued on this device, not sent.
  bot.setOnline(false);
  bot.addBullet('Written offline');
  await bot.until((s) => s.pending === 1);
  assert.ok(!(await onServer()).includes('Written offline'), 'not sent while offline');
  bot.setOnline(true);
  await bot.saved();
  assert.ok((await onServer()).includes('Written offline'), 'sent once back');

  // Queued and never sent: the next run (same client ID, same database) sends it.
  bot.setOnline(false);
  bot.addBullet('Queued before a restart');
  await bot.until((s) => s.pending === 1);
  await bot.close();
  const again = await openDocument({ baseUrl: srv.base, token: alice.token, docId: doc, clientId: 'cl_bot_1', storeName: 'bot-1' });
  await again.saved();
  await waitFor(async () => (await onServer()).includes('Queued before a restart'), { message: 'the queued bullet arrived' });
  const order = ['Yesterday: shipped webhooks and the feed', 'Tests green', 'Today: the client package', 'Written offline', 'Queued before a restart'];
  assert.deepEqual(await onServer(), order, 'each new bullet last, in the order added');
  assert.deepEqual(again.rows.map((r) => r.content), order, 'the program sees what the server has');
  await again.close();
});
