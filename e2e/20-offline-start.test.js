// @ts-check
// Scenario 20: a browser killed in the first seconds after logging in. A person logs in,
// opens a document, types, and the whole browser dies at once (SIGKILL). Offline, the browser
// starts again on the same profile: the app opens the document from this device with the text
// typed — what the app needs to start offline (the signed-in user, the app's files) was on
// disk before that, not in a write that the browser had not flushed yet.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { chromium } from 'playwright-core';

import { scenario, waitFor, SEL, CHROMIUM, CHROMIUM_ARGS, HEADED } from './harness.js';
import { pageOutline } from './fixtures.js';

scenario('20 offline start after a crash right after login: the document opens with the typed text', async (h) => {
  const srv = await h.server();
  const { alice } = await h.users(srv, ['alice']);
  const api = srv.api(alice);
  const doc = await api.createDoc('Crash notes');
  await api.insertBullets(doc, ['first']);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'docsync-e2e-profile-'));
  const launch = () => chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: !HEADED, baseURL: srv.base, viewport: { width: 1000, height: 800 },
    args: HEADED ? CHROMIUM_ARGS.filter((a) => a !== '--headless') : CHROMIUM_ARGS,
  });
  let ctx = await launch();
  try {
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    await page.goto('/login');
    await page.locator(`${SEL.loginForm} [name=username]`).fill(alice.name);
    await page.locator(`${SEL.loginForm} [name=password]`).fill(alice.password);
    await page.locator(SEL.loginForm).evaluate((f) => /** @type {HTMLFormElement} */ (f).requestSubmit());
    await page.locator(`a.doc-link[data-doc-id="${doc}"]`).click();
    await page.locator(`#editor[data-doc-id="${doc}"]`).waitFor();
    await waitFor(async () => (await pageOutline(page)).length === 1, { message: 'the bullet shown' });
    // the app's files are cached by the service worker (the app works offline from here on)
    await page.evaluate(async () => {
      const reg = await navigator.serviceWorker.ready;
      void reg;
    });
    const row = (await pageOutline(page))[0];
    await page.locator(`#outline [data-block-id="${row.id}"] .row-text`).click();
    await page.keyboard.press('End');
    await page.keyboard.type(' and more', { delay: 5 });
    await page.waitForTimeout(300); // typed, saved to IndexedDB, maybe sent
    const pid = execFileSync('pgrep', ['-o', '-f', `user-data-dir=${profile}`]).toString().trim();
    const closed = new Promise((r) => ctx.once('close', r));
    process.kill(Number(pid), 'SIGKILL');
    await closed;

    ctx = await launch();
    await ctx.setOffline(true);
    const again = ctx.pages()[0] ?? (await ctx.newPage());
    await again.goto(`/d/${doc}`);
    await again.locator(`#editor[data-doc-id="${doc}"]`).waitFor({ timeout: 20_000 }).catch(async (e) => {
      throw new Error(`the editor did not open offline; the page shows: ${(await again.locator('body').textContent().catch(() => '?'))?.replace(/\s+/g, ' ').slice(0, 300)} (${e})`);
    });
    await waitFor(async () => (await pageOutline(again)).some((r) => r.text === 'first and more'), {
      message: async () => `the typed text shown offline (page says: ${(await again.locator('main').textContent())?.slice(0, 200)})`,
    });
    assert.equal(await again.locator('#editor-placeholder').count(), 0);
  } finally {
    await ctx.close().catch(() => {});
    fs.rmSync(profile, { recursive: true, force: true });
  }
});
