// @ts-check
// Scenario 26: the app's module fails to load. Chromium aborts a request now and then while
// it restarts a service worker under a new tab (the loss hunt met it after a renderer
// crash); a connection can drop mid-start. Without its module the page would stay blank:
// the boot guard reloads it once, and when loading fails again it says so with a Reload
// button — no reload loop — and the button opens the document once the files load.
// E2E_SHOTS=<dir> saves the message.

import assert from 'node:assert/strict';

import { scenario } from './harness.js';
import { setup } from './fixtures.js';

const shots = process.env.E2E_SHOTS;

scenario('26 the app module fails to load: reloaded once; failing again, said with a Reload button', async (h) => {
  const { srv, users, doc } = await setup(h, { users: ['alice'], seed: ['Start'], open: [] });
  // No service worker, so that the route below sees the page's own requests.
  const ctx = await h.loggedIn('alice', srv.base, users.alice, { noServiceWorker: true });
  // Every request for the module fails while the page is on a load that is to fail (the
  // browser asks for the module more than once per load: counting loads, not requests).
  let loads = 0;
  let failLoads = 1;
  await ctx.route('**/d/*', async (route) => {
    if (route.request().resourceType() === 'document') loads++;
    await route.continue();
  });
  await ctx.route('**/app/main.js', async (route) => {
    if (loads <= failLoads) await route.abort('aborted');
    else await route.continue();
  });
  const editor = (/** @type {string} */ id) => `#editor[data-doc-id="${id}"]`;

  // One failed load: the page reloads by itself and opens the document.
  const page = await ctx.newPage();
  await page.goto(`/d/${doc}`);
  await page.locator(editor(doc)).waitFor({ timeout: 20_000 });
  assert.equal(loads, 2, 'loaded twice: the failed load, then the reload');

  // Failing on every load, in a new tab: one reload, then the message — and it stays.
  loads = 0;
  failLoads = Infinity;
  const second = await ctx.newPage();
  await second.goto(`/d/${doc}`);
  const alert = second.getByRole('alert').filter({ hasText: 'docsync could not start' });
  await alert.waitFor({ timeout: 20_000 });
  assert.equal(loads, 2, 'one reload before the message');
  if (shots) await second.screenshot({ path: `${shots}/boot-failed.png` });
  // No loop: still one reload later (a counted wait for one more network round trip).
  await second.evaluate(() => fetch('/api/v1/me').then((r) => r.status));
  assert.equal(loads, 2, 'no further reload');
  assert.equal(await second.locator('.boot-failed button').evaluate((b) => b === document.activeElement), true, 'Reload has the focus');

  // The files load again: Reload opens the document.
  failLoads = 0;
  await second.getByRole('button', { name: 'Reload' }).click();
  await second.locator(editor(doc)).waitFor({ timeout: 20_000 });
  assert.equal(loads, 3, 'one load more');
});
