// @ts-check
// Scenario 27: an admin connects a receiver from the admin pages. They make a webhook with a
// generated secret; every change arrives at the receiver signed with it. The receiver then
// refuses (410): the row says Paused and why, and its delivery log shows the attempts. With
// the receiver mended, Resume sends the waiting delivery (the same ID) and the changes made
// meanwhile. Screenshots at desktop and phone width are looked at.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import http from 'node:http';

import { scenario, waitFor } from './harness.js';

const shots = process.env.E2E_SHOTS;

/** A receiver on 127.0.0.1 answering `status.code`, keeping every request. */
async function receiver() {
  /** @type {{headers: http.IncomingHttpHeaders, raw: Buffer, body: any, answered: number}[]} */
  const got = [];
  const status = { code: 200 };
  const server = http.createServer((req, res) => {
    /** @type {Buffer[]} */
    const parts = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(parts);
      got.push({ headers: req.headers, raw, body: JSON.parse(raw.toString('utf8')), answered: status.code });
      res.writeHead(status.code).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  // Never what keeps the test process alive.
  server.unref();
  const addr = /** @type {import('node:net').AddressInfo} */ (server.address());
  return { url: `http://127.0.0.1:${addr.port}/docsync`, got, status };
}

scenario('27 webhooks: made from the admin page, signed deliveries, paused with the reason, resumed', async (h) => {
  const srv = await h.server();
  const { alice } = await h.users(srv, ['alice']);
  const api = srv.api(alice);
  const doc = await api.createDoc('Release notes');
  const recv = await receiver();

  const ctx = await h.loggedIn('alice', srv.base, alice);
  const page = await ctx.newPage();
  await page.goto('/admin/webhooks');
  await page.locator('#webhooks:not([aria-busy]) li').first().waitFor();
  assert.equal(await page.locator('#webhooks li.share-empty').count(), 1, 'none yet');
  const secret = await page.locator('#webhook-secret').inputValue();
  assert.match(secret, /^[0-9a-f]{64}$/, 'a generated secret');
  // A mistyped address is caught in the page, nothing sent.
  await page.locator('#webhook-url').fill('hooks.example.com');
  await page.locator('#webhook-make').click();
  assert.match(await page.locator('#webhooks-error').textContent() ?? '', /https:\/\//);
  await page.locator('#webhook-url').fill(recv.url);
  await page.locator('#webhook-make').click();
  const row = page.locator('#webhooks li[data-webhook]');
  await row.waitFor();
  assert.equal(await row.getAttribute('data-state'), 'active');

  // A change arrives, signed with the secret shown on the page.
  await api.insertBullets(doc, ['Ship the feed']);
  await waitFor(() => recv.got.length >= 1, { message: 'the receiver got the change' });
  const first = recv.got[0];
  const want = `sha256=${crypto.createHmac('sha256', secret).update(first.raw).digest('hex')}`;
  assert.equal(first.headers['x-docsync-signature'], want, 'signed with the secret');
  assert.equal(first.body.entries[0].docId, doc);
  assert.equal(first.body.entries[0].effects[0].block.content, 'Ship the feed');

  // The receiver refuses: paused at once, the reason on the row, the attempt in the log.
  recv.status.code = 410;
  await api.insertBullets(doc, ['Write the docs']);
  await waitFor(() => recv.got.length >= 2, { message: 'the refused delivery' });
  const refused = recv.got[1];
  await waitFor(async () => {
    await page.reload();
    await page.locator('#webhooks:not([aria-busy]) li').first().waitFor();
    return (await page.locator('#webhooks li[data-state="paused"]').count()) === 1;
  }, { message: 'the row says paused' });
  assert.match(await page.locator('#webhooks [data-standing]').textContent() ?? '', /Paused .*410 Gone/);
  await page.locator('#webhooks li button', { hasText: 'Deliveries' }).click();
  await page.locator('.webhook-deliveries tbody tr').nth(1).waitFor();
  const outcomes = await page.locator('.webhook-deliveries tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-outcome')));
  assert.deepEqual(outcomes, ['paused', 'delivered'], 'newest first');
  if (shots) await page.screenshot({ path: `${shots}/admin-webhooks-paused.png`, fullPage: true });
  await page.setViewportSize({ width: 390, height: 844 });
  const wide = await page.evaluate(() => [...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > innerWidth + 1 && !e.closest('.audit-scroll')).map((e) => e.tagName));
  assert.deepEqual(wide, [], 'nothing wider than the phone (the log table scrolls in its box)');
  if (shots) await page.screenshot({ path: `${shots}/admin-webhooks-phone.png`, fullPage: true });
  await page.setViewportSize({ width: 1280, height: 800 });

  // Mended and resumed: the waiting delivery first (same ID), then what was made meanwhile.
  await api.insertBullets(doc, ['Tell the integrators']);
  recv.status.code = 200;
  await page.locator('#webhooks li button', { hasText: 'Resume' }).click();
  await waitFor(() => recv.got.filter((r) => r.answered === 200).length >= 3, { message: 'the rest arrived' });
  const after = recv.got.slice(2);
  assert.equal(after[0].headers['x-docsync-delivery'], refused.headers['x-docsync-delivery'], 'the same delivery again');
  assert.equal(after[0].raw.toString(), refused.raw.toString(), 'with the same body');
  const texts = recv.got.filter((r) => r.answered === 200).flatMap((r) => r.body.entries.map((/** @type {any} */ e) => e.effects[0].block.content));
  assert.deepEqual(texts, ['Ship the feed', 'Write the docs', 'Tell the integrators'], 'each once, in order');
  await page.locator('#webhooks:not([aria-busy]) li[data-state="active"]').waitFor();
  if (shots) await page.screenshot({ path: `${shots}/admin-webhooks.png`, fullPage: true });
});
