// @ts-check
// Scenario 13: the loss hunt. Type fast (Enter, Tab and Shift+Tab among the keys), then —
// 0, 5 or 20 ms after the last key — reload the page, close the tab, or crash its renderer
// (DevTools `Page.crash`, as when the OS kills a tab for memory), with the server reachable
// and with every /sync dropped, with the document open in one tab and in two. After each
// round the page that comes back (the reloaded one, or a new tab) must show every typed
// line exactly once; at the end, with the network back, the server must have all of it:
// 0 characters lost, 0 doubled, 0 conflict copies against oneself.
//
// The suite runs one round per combination with short lines; the benchmark runs more:
//   E2E_LOSS_ROUNDS=10 E2E_LOSS_CHARS=300 node --test e2e/13-loss-hunt.test.js
// and prints the table (E2E_VERBOSE=1 shows every round).

import assert from 'node:assert/strict';

import { scenario, waitFor, logStats } from './harness.js';
import { setup, focusEnd, pageOutline, apiOutline, render, converged, writeCutProxy } from './fixtures.js';

const ROUNDS = Number(process.env.E2E_LOSS_ROUNDS) || 1;
/** Characters typed per round (spread over lines of ~24). */
const CHARS = Number(process.env.E2E_LOSS_CHARS) || 48;
const ACTIONS = /** @type {('reload'|'close'|'crash')[]} */ ((process.env.E2E_LOSS_ACTIONS || 'reload,close,crash').split(','));
const DELAYS = [0, 5, 20];
const NETS = /** @type {const} */ (['online', 'offline']);
const TAB_COUNTS = [1, 2];
const COMBOS = TAB_COUNTS.length * NETS.length * ACTIONS.length * DELAYS.length;

scenario(`13 loss hunt: ${COMBOS * ROUNDS} rounds of typing then reload / close / renderer crash at 0–20 ms, nothing lost`, async (h) => {
  const s = await setup(h, { seed: ['Start'], open: [] });
  const { srv, api, users } = s;
  let doc = s.doc;
  const cut = await writeCutProxy(srv.addr);
  h.proxies.push(/** @type {any} */ ({ config: 'write-cut', stop: async () => cut.close(), readLog: () => `dropped ${cut.dropped} /sync requests\n` }));
  const ctx = await h.loggedIn('alice', cut.base, users.alice);
  let page = await h.openDoc(ctx, doc);
  /** @type {import('playwright-core').Page|null} */
  let second = null;

  h.dumpOnFailure('device', () => deviceState(page));
  /** Every line typed into the current document, in order. */
  let typed = ['Start'];
  /** Documents filled earlier, with their lines (checked on the server at the end). @type {{doc: string, typed: string[]}[]} */
  const earlier = [];
  /** @type {Record<string, {rounds: number, lost: number, doubled: number}>} */
  const table = {};
  /** @type {string[]} */
  const failures = [];
  let round = 0;
  for (const tabs of TAB_COUNTS) {
    if (tabs === 2) second = await h.openDoc(ctx, doc);
    for (const net of NETS) {
      cut.blocked = net === 'offline';
      for (const action of ACTIONS) {
        for (const delay of DELAYS) {
          for (let k = 0; k < ROUNDS; k++) {
            round++;
            if (typed.length > 250) {
              // Below the editor's windowing (400 rows), where the page shows every row: go
              // on in a new document.
              earlier.push({ doc, typed });
              doc = await api.createDoc(`Loss hunt ${earlier.length + 1}`);
              await api.insertBullets(doc, ['Start']);
              typed = ['Start'];
              await page.goto(`/d/${doc}`);
              await page.locator(`#editor[data-doc-id="${doc}"]`).waitFor({ timeout: 20_000 });
              if (second) {
                await second.goto(`/d/${doc}`);
                await second.locator(`#editor[data-doc-id="${doc}"]`).waitFor({ timeout: 20_000 });
              }
            }
            const row = `${tabs} tab${tabs > 1 ? 's' : ''}, ${net}, ${action} at ${delay} ms`;
            const t = (table[row] ??= { rounds: 0, lost: 0, doubled: 0 });
            t.rounds++;
            try {
              await waitFor(async () => shows(await pageOutline(page), typed).ok, { timeout: 15_000, message: `round ${round}: the page shows everything before typing` });
            } catch (e) {
              // A loss recorded in an earlier round (a line that changed, not one gone) keeps
              // this from ever holding: say what was lost, not only that this timed out.
              assert.fail(`${e instanceof Error ? e.message : e}\ntyped text lost or doubled before:\n${failures.join('\n')}`);
            }
            // The tab typed in is the one in front (a background tab paints no frames).
            await page.bringToFront();
            const outline = await pageOutline(page);
            await focusEnd(page, outline[outline.length - 1].id);
            await page.keyboard.press('Control+End'); // the end of the text, not of its first visual line
            const lines = linesFor(round);
            for (const [i, line] of lines.entries()) {
              await page.keyboard.press('Enter');
              // Odd lines indented under the one before, even ones back out: the outline
              // stays shallow, so lines never wrap.
              if (i % 2 === 1) await page.keyboard.press('Tab');
              else if (outline[outline.length - 1].depth > 0 || i > 0) await page.keyboard.press('Shift+Tab');
              await page.keyboard.type(line, { delay: 0 });
            }
            typed.push(...lines);
            if (delay > 0) await page.waitForTimeout(delay);
            page = await act(h, ctx, page, action, doc);
            let after = await pageOutline(page);
            try {
              await waitFor(async () => shows((after = await pageOutline(page)), typed).ok, { timeout: 10_000, interval: 100 });
            } catch {
              const v = shows(after, typed);
              t.lost += v.lost.reduce((n, x) => n + x.length, 0);
              t.doubled += v.doubled.length;
              failures.push(`round ${round} (${row}): lost ${JSON.stringify(v.lost)}, doubled ${JSON.stringify(v.doubled)}`);
              h.log(`round ${round} LOST:\n${render(after)}`);
              h.log(`device then: ${JSON.stringify(await deviceState(page).catch((e) => String(e)))}`);
              h.log(`server then:\n${render(await apiOutline(api, doc))}`);
              // Count the rest against what the page has now.
              typed = typed.filter((x) => !v.lost.includes(x));
            }
            h.log(`round ${round} (${row}): ${typed.length} lines shown`);
          }
        }
      }
    }
  }
  const lines = Object.entries(table).map(([k, v]) => `  ${k.padEnd(34)} rounds ${v.rounds}  chars lost ${v.lost}  lines doubled ${v.doubled}`);
  console.log(`loss hunt (${CHARS} chars per round):\n${lines.join('\n')}`);
  assert.deepEqual(failures, [], `typed text lost or doubled:\n${failures.join('\n')}`);

  // Network back: everything reaches the server exactly once, no conflict copy.
  cut.blocked = false;
  const final = await converged(api, doc, second ? [page, second] : [page], {
    timeout: 60_000,
    check: (o) => shows(o, typed).ok,
  });
  assert.equal(final.filter((r) => r.conflictOf).length, 0, `conflict copies against oneself:\n${render(final)}`);
  // The documents filled earlier: what waited on this device goes out when one opens them.
  for (const e of earlier) {
    await page.goto(`/d/${e.doc}`);
    const o = await converged(api, e.doc, [page], { timeout: 60_000, check: (x) => shows(x, e.typed).ok });
    assert.equal(o.filter((r) => r.conflictOf).length, 0, `conflict copies against oneself:\n${render(o)}`);
  }
  const stats = logStats((await api.readLog(doc, 0)).entries);
  h.log(`log: ${JSON.stringify(stats)}`);
  assert.equal(stats.dupOpIds, 0, 'no op applied twice');
}, { timeout: 120_000 + COMBOS * ROUNDS * (4_000 + CHARS * 30) });

/** The lines of one round: ~CHARS characters in lines of ~24, each unique. @param {number} round */
function linesFor(round) {
  const words = ['quick', 'brown', 'fox', 'jumps', 'over', 'lazy', 'dog', 'again'];
  /** @type {string[]} */
  const out = [];
  let left = CHARS;
  for (let i = 0; left > 0; i++) {
    let line = `r${round}l${i}`;
    for (let w = i; line.length < Math.min(24, left); w++) line += ` ${words[w % words.length]}`;
    line = line.slice(0, Math.max(6, Math.min(24, left)));
    out.push(line.trimEnd());
    left -= line.length;
  }
  return out;
}

/**
 * Whether the outline has every typed line exactly once (and nothing else but them).
 * @param {{text: string, conflictOf: string|null}[]} outline @param {string[]} typed
 */
function shows(outline, typed) {
  const texts = outline.map((r) => r.text);
  const lost = typed.filter((t) => !texts.includes(t));
  const doubled = typed.filter((t) => texts.filter((x) => x === t).length > 1);
  const copies = outline.filter((r) => r.conflictOf).map((r) => r.text);
  return { ok: lost.length === 0 && doubled.length === 0 && copies.length === 0 && texts.length === typed.length, lost, doubled };
}

/**
 * The action right after the keys: the page that shows the document afterwards.
 * @param {import('./harness.js').Harness} h
 * @param {import('playwright-core').BrowserContext} ctx
 * @param {import('playwright-core').Page} page
 * @param {'reload'|'close'|'crash'} action
 * @param {string} doc
 */
async function act(h, ctx, page, action, doc) {
  if (action === 'reload') {
    await page.reload();
  } else if (action === 'close') {
    await page.close();
    page = await ctx.newPage();
    await page.goto(`/d/${doc}`);
  } else {
    // The renderer dies: no pagehide, no unload, no pending IndexedDB transaction completes.
    const cdp = await ctx.newCDPSession(page);
    const crashed = page.waitForEvent('crash');
    cdp.send('Page.crash').catch(() => {});
    await crashed;
    await page.close().catch(() => {});
    page = await ctx.newPage();
    await page.goto(`/d/${doc}`);
  }
  await page.locator(`#editor[data-doc-id="${doc}"]`).waitFor({ timeout: 20_000 });
  h.log(`${action}: the document is open again`);
  return page;
}

/**
 * What this device holds (journals and queues), for the artifacts of a failed round.
 * @param {import('playwright-core').Page} page
 */
function deviceState(page) {
  return page.evaluate(async () => {
    /** @type {Record<string, unknown>} */
    const journals = {};
    for (let i = 0; i < localStorage.length; i++) {
      const k = /** @type {string} */ (localStorage.key(i));
      if (k.startsWith('docsync:journal:')) journals[k] = JSON.parse(localStorage.getItem(k) ?? 'null');
    }
    const db = await new Promise((resolve, reject) => {
      const r = indexedDB.open('docsync');
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    const queue = await new Promise((resolve) => {
      const r = /** @type {IDBDatabase} */ (db).transaction('queue').objectStore('queue').getAll();
      r.onsuccess = () => resolve(r.result);
    });
    return { session: { ...sessionStorage }, journals, queue };
  });
}
