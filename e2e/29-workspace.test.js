// @ts-check
// Scenario 29: whole workspaces in and out, as a person does it. A Logseq graph folder picked
// in the import dialog becomes a folder of documents linked as in Logseq (a journal's link
// shows the page's title, a block reference opens its bullet), with a report of what was not
// carried over; a Workflowy backup's top-level bullets become documents; "Export everything"
// in the settings downloads one zip with a manifest. On a phone the dialog fits the screen.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { scenario, waitFor, ROOT } from './harness.js';
import { apiOutline, render } from './fixtures.js';

const shots = process.env.E2E_SHOTS;

scenario('29 import: a Logseq graph folder comes in linked, with a report; a Workflowy backup as documents', async (h) => {
  const srv = await h.server();
  const { alice } = await h.users(srv, ['alice']);
  const api = srv.api(alice);
  const ctx = await h.loggedIn('alice', srv.base, alice);
  const page = await ctx.newPage();
  await page.goto('/');
  await page.locator('#import-doc').click();
  await page.locator('#import-dialog').waitFor();
  if (shots) await page.screenshot({ path: `${shots}/import-dialog.png` });

  const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.locator('#import-logseq').click()]);
  await chooser.setFiles(path.join(ROOT, 'tests/app/fixtures/logseq-graph'));
  await page.locator('#import-report').waitFor();
  const summary = (await page.locator('.import-summary').textContent()) ?? '';
  assert.match(summary, /5 documents with 14 bullets imported into the folder “logseq-graph”/);
  const report = (await page.locator('#import-report').textContent()) ?? '';
  assert.match(report, /1 link to pages not imported, kept as text: Nobody Knows This Page/);
  assert.match(report, /page properties kept as the first bullet: tags/);
  assert.match(report, /2 files not carried over/);
  if (shots) await page.screenshot({ path: `${shots}/import-report.png` });
  await page.locator('#import-done').click();

  // the folder is selected on the home page, its journals inside it
  const docs = (await api.json('GET', '/api/v1/docs')).documents;
  const byTitle = new Map(docs.map((/** @type {any} */ d) => [d.title, d.docId]));
  const alpha = byTitle.get('Project Alpha');
  const journal = byTitle.get('Mar 5th, 2024');
  assert.ok(alpha && journal, `documents made: ${[...byTitle.keys()].join(', ')}`);
  await page.locator('a.doc-link', { hasText: 'Project Alpha' }).waitFor();

  // the journal's link shows the page's title, and its block reference opens that bullet
  assert.match(render(await apiOutline(api, journal)), new RegExp(`Met the \\[\\[${alpha}\\]\\] team, see \\[Send the agenda\\]\\(/d/${alpha}/b/blk_`));
  await page.goto(`/d/${journal}`);
  const link = page.locator('#outline a', { hasText: 'Project Alpha' }).first();
  await link.waitFor();
  if (shots) await page.screenshot({ path: `${shots}/import-journal.png` });
  await page.locator('#outline a', { hasText: 'Send the agenda' }).first().click();
  await waitFor(async () => new URL(page.url()).pathname.startsWith(`/d/${alpha}/b/`), { message: 'the block reference opens its bullet' });
  await page.locator('#zoom-title', { hasText: 'Send the agenda' }).waitFor();
  // the breadcrumbs and "Linked from" show links as a reader sees them, not their markup
  await waitFor(async () => ((await page.locator('#breadcrumbs').textContent()) ?? '').includes('Kickoff meeting with Meeting Notes'), { message: 'the crumb shows the linked title' });
  await page.locator('.ed-backlink-text', { hasText: 'Met the Project Alpha team, see Send the agenda' }).waitFor();
  if (shots) await page.screenshot({ path: `${shots}/import-zoom.png` });

  // a Workflowy backup: each top-level bullet a document
  await page.goto('/');
  await page.locator('#import-doc').click();
  const [opml] = await Promise.all([page.waitForEvent('filechooser'), page.locator('#import-backup-file').click()]);
  await opml.setFiles(path.join(ROOT, 'tests/app/fixtures/workflowy-backup.opml'));
  await page.locator('#import-report').waitFor();
  assert.match((await page.locator('.import-summary').textContent()) ?? '', /3 documents with 5 bullets imported into the folder “workflowy-backup”/);
  const home = (await api.json('GET', '/api/v1/docs')).documents.find((/** @type {any} */ d) => d.title === 'Home');
  assert.equal(render(await apiOutline(api, home.docId)), ['Everything about the flat', 'Fix the **tap**', 'Paint the hall', '  Pick a colour\nask Lin first'].join('\n'));
});

scenario('29 export: "Export everything" downloads one zip with a manifest; the dialog fits a phone', async (h) => {
  const srv = await h.server();
  const { alice } = await h.users(srv, ['alice']);
  const api = srv.api(alice);
  const doc = await api.createDoc('Groceries');
  await api.insertBullets(doc, ['oat milk', 'bread']);
  const ctx = await h.loggedIn('alice', srv.base, alice);
  const page = await ctx.newPage();
  await page.goto('/settings');
  await page.locator('#export-everything').waitFor();
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#export-everything').click()]);
  const file = /** @type {string} */ (await download.path());
  const zip = fs.readFileSync(file);
  assert.equal(zip.subarray(0, 4).toString('latin1'), 'PK\u0003\u0004', 'a zip file');
  // a zip names its files in the clear
  assert.ok(zip.includes(Buffer.from('docsync-export/manifest.json')), 'the manifest is in it');
  assert.ok(zip.includes(Buffer.from('docsync-export/documents/Groceries.md')), 'the document is in it');
  await page.locator('#export-status', { hasText: 'Your export is downloaded' }).waitFor();
  if (shots) await page.locator('#settings-export').screenshot({ path: `${shots}/export-settings.png` });

  const phone = await h.loggedIn('alice-phone', srv.base, alice, { phone: true });
  const small = await phone.newPage();
  await small.goto('/');
  await small.locator('#import-doc').click();
  await small.locator('#import-dialog').waitFor();
  const overflow = await small.evaluate(() => {
    const d = /** @type {HTMLElement} */ (document.querySelector('#import-dialog'));
    return d.scrollWidth - d.clientWidth;
  });
  assert.ok(overflow <= 0, `the dialog scrolls sideways by ${overflow}px`);
  if (shots) await small.screenshot({ path: `${shots}/import-dialog-phone.png` });
});
