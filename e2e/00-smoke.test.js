// @ts-check
// Smoke: the harness itself (server, users, API, clock, compaction, kill -9 and restart,
// nginx) and the login page in a real browser.

import assert from 'node:assert/strict';

import { scenario, waitFor, SEL, logStats } from './harness.js';

scenario('harness: server, API, log, clock, compaction, kill -9 + restart, nginx', async (h) => {
  const srv = await h.server();
  const { alice, bob } = await h.users(srv, ['alice', 'bob']);
  assert.ok(alice.id && bob.id, 'user ids from /me');
  const a = srv.api(alice);
  const doc = await a.createDoc('Harness');
  await a.setShares(doc, [[bob, 'write']]);
  const ids = await a.insertBullets(doc, ['one', 'two', 'three']);
  const snap = await srv.api(bob).snapshot(doc);
  assert.deepEqual(
    snap.blocks.filter((b) => !b.deleted).map((b) => b.content),
    ['one', 'two', 'three'],
  );
  const log = await a.readLog(doc, 0);
  assert.equal(log.resync, false);
  assert.deepEqual(logStats(log.entries).byKind, { insert: 3 });

  const before = (await srv.advanceClock(0)).nowMs;
  const after = (await srv.advanceClock(8 * 86_400_000)).nowMs;
  assert.equal(after - before, 8 * 86_400_000);
  const summary = await srv.compact(alice);
  assert.ok(summary && typeof summary === 'object', JSON.stringify(summary));

  // kill -9, restart on the same port and database: everything acknowledged is there.
  const addr = srv.addr;
  await srv.restart();
  assert.equal(srv.addr, addr);
  const again = await srv.api(bob).snapshot(doc);
  assert.deepEqual(
    again.blocks.filter((b) => !b.deleted).map((b) => b.id),
    ids,
  );

  // Each nginx config proxies plain requests.
  for (const conf of ['docsync.conf', 'blocking.conf', 'no-websocket.conf', 'no-streaming.conf']) {
    const n = await h.nginx(conf, srv);
    const r = await fetch(`${n.base}/api/v1/docs/${doc}/snapshot`, {
      headers: { authorization: `Bearer ${alice.token}` },
    });
    assert.equal(r.status, 200, conf);
    await n.stop();
  }
});

scenario('login page: wrong password is refused, the right one opens the home page', async (h) => {
  const srv = await h.server();
  const { alice } = await h.users(srv, ['alice']);
  const doc = await srv.api(alice).createDoc('Shopping list');
  const ctx = await h.context('alice', srv.base);
  const page = await ctx.newPage();

  await page.goto('/login');
  await page.locator(SEL.loginForm).waitFor();
  await page.locator(`${SEL.loginForm} [name=username]`).fill('alice');
  await page.locator(`${SEL.loginForm} [name=password]`).fill('not-the-password');
  await page.locator(SEL.loginForm).evaluate((f) => /** @type {HTMLFormElement} */ (f).requestSubmit());
  await waitFor(async () => ((await page.locator('#login-error').textContent()) || '').trim() !== '', {
    message: 'a login error for a wrong password',
  });
  assert.match(new URL(page.url()).pathname, /^\/login/);

  await h.loginViaForm(page, alice);
  // The home page lists the document.
  await page.locator(`[data-doc-id="${doc}"]`).first().waitFor({ timeout: 10_000 });
  const me = await page.evaluate(async () => (await fetch('/api/v1/me')).status);
  assert.equal(me, 200, 'the session cookie authenticates the page');
});

scenario('logout offers to remove this device\'s copies; on by default when all is sent, and they are gone', async (h) => {
  const srv = await h.server();
  const { alice } = await h.users(srv, ['alice']);
  const doc = await srv.api(alice).createDoc('Private notes');
  await srv.api(alice).insertBullets(doc, ['my secret']);
  const ctx = await h.loggedIn('alice', srv.base, alice);
  const page = await h.openDoc(ctx, doc);
  await page.locator(SEL.row).first().waitFor();
  // The device keeps a copy for offline use.
  const stored = () => page.evaluate(async () => {
    const dbs = await indexedDB.databases();
    if (!dbs.some((d) => d.name === 'docsync')) return -1;
    return new Promise((resolve) => {
      const req = indexedDB.open('docsync');
      req.onsuccess = () => {
        const db = req.result;
        const tx = db.transaction('docs', 'readonly');
        const c = tx.objectStore('docs').count();
        c.onsuccess = () => { db.close(); resolve(c.result); };
      };
    });
  });
  await waitFor(async () => (await stored()) > 0, { message: 'a device copy' });

  await page.locator('#logout').click();
  const dialog = page.locator('#logout-dialog');
  await dialog.waitFor();
  assert.equal(await page.locator('#logout-remove').isChecked(), true, 'removal is on by default');
  assert.match(await page.locator('#logout-note').textContent() || '', /Everything is saved on the server/);
  if (process.env.E2E_SHOTS) await page.screenshot({ path: `${process.env.E2E_SHOTS}/logout-dialog.png` });
  await page.locator('#logout-confirm').click();
  await waitFor(async () => new URL(page.url()).pathname === '/login', { message: 'back at the login page' });
  await waitFor(async () => (await stored()) === -1, { message: 'the device copies are gone' });
  const recent = await page.evaluate(() => localStorage.getItem('docsync.recent'));
  assert.equal(recent, null, 'no list of recent documents is left behind');
  const me = await page.evaluate(async () => (await fetch('/api/v1/me')).status);
  assert.equal(me, 401, 'the session ended');
});
