// Wake-up latency per ladder stage, measured in real browsers through nginx, and PRINTED
// as a table (targets are reported, not asserted). For each edit alice types one character
// and waits until bob's editor shows it; bob's page records, with a MutationObserver, when
// the row's text changed and the next animation frame after it (≈ painted). Both pages and
// this process read the same system clock (performance.timeOrigin + performance.now()).
//
// Columns: key→paint = alice's keystroke to bob's paint (includes the engine's 300 ms send
// batching, PROTOCOL §7); send→paint = alice's /sync request leaving to bob's paint (the
// wake-up path itself: server commit, channel, bob's pull and render).
//
// Edits per stage: E2E_LATENCY_EDITS (default 200) for WebSocket, SSE and long-polling;
// E2E_LATENCY_INTERVAL_EDITS (default 30, to keep CI short) for the 3 s interval.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { scenario, waitFor, waitStage, STAGE, percentile, ARTIFACTS } from './harness.js';
import { setup, focusEnd } from './fixtures.js';

const N = Number(process.env.E2E_LATENCY_EDITS) || 200;
const N_INTERVAL = Number(process.env.E2E_LATENCY_INTERVAL_EDITS) || 30;

const STAGES = [
  { name: 'WebSocket', config: 'docsync.conf', label: STAGE.live, n: N, target: [100, 250] },
  { name: 'SSE', config: 'no-websocket.conf', label: STAGE.live, n: N, target: [100, 250] },
  { name: 'long-polling', config: 'blocking.conf', label: STAGE.longpoll, n: N, target: [100, 250] },
  { name: 'interval (3 s)', config: 'no-streaming.conf', label: STAGE.interval, n: N_INTERVAL, target: [3500, 3500] },
];

const now = () => performance.timeOrigin + performance.now();

/** Installs the recorder in bob's page: every change of the row's text length, timed. */
async function installRecorder(page, blockId) {
  await page.evaluate((id) => {
    const w = /** @type {any} */ (window);
    w.__lat = [];
    const clock = () => performance.timeOrigin + performance.now();
    const textOf = () => {
      const row = document.querySelector(`#outline [role=treeitem][data-block-id="${id}"]`);
      const t = row && Array.from(row.querySelectorAll('.row-text')).find((x) => x.closest('[role=treeitem]') === row);
      return t ? t.textContent || '' : '';
    };
    let last = textOf().length;
    const outline = document.querySelector('#outline');
    new MutationObserver(() => {
      const len = textOf().length;
      if (len === last) return;
      last = len;
      const rec = { len, t: clock(), paint: 0 };
      w.__lat.push(rec);
      requestAnimationFrame(() => {
        rec.paint = clock();
      });
    }).observe(/** @type {Node} */ (outline), { subtree: true, childList: true, characterData: true });
  }, blockId);
}

scenario('latency: keystroke → paint in the other browser, per wake-up stage (printed)', async (h) => {
  const srv = await h.server();
  const rows = [];
  for (const [i, st] of STAGES.entries()) {
    await h.step(st.name, async () => {
      const s = await setup(h, { server: srv, users: [`alice${i}`, `bob${i}`], seed: ['L:'], proxy: st.config });
      const alice = s.pages[`alice${i}`];
      const bob = s.pages[`bob${i}`];
      for (const p of [alice, bob]) await waitStage(p, st.label, 20_000);
      const [row] = s.ids;
      /** @type {number[]} */ const sendStarts = [];
      alice.on('request', (req) => {
        if (req.method() === 'POST' && /\/sync$/.test(new URL(req.url()).pathname)) {
          try {
            if (req.postDataJSON()?.ops?.length) sendStarts.push(now());
          } catch {
            /* not JSON */
          }
        }
      });
      await focusEnd(alice, row);
      // Warm-up: the first edit also takes the lease and fills caches.
      await alice.keyboard.type('.');
      await waitFor(async () => (await bob.evaluate((id) => document.querySelector(`[data-block-id="${id}"] .row-text`)?.textContent, row)) === 'L:.', {
        timeout: 15_000,
        message: 'bob sees the warm-up edit',
      });
      await installRecorder(bob, row);
      const keyToPaint = [];
      const sendToPaint = [];
      let len = 3;
      for (let k = 0; k < st.n; k++) {
        const t0 = now();
        const sentBefore = sendStarts.length;
        await alice.keyboard.type(String.fromCharCode(97 + (k % 26)));
        len++;
        const rec = await bob.waitForFunction(
          (n) => {
            const r = /** @type {any} */ (window).__lat.find((x) => x.len >= n && x.paint > 0);
            return r ? { t: r.t, paint: r.paint } : false;
          },
          len,
          { timeout: st.n === N_INTERVAL ? 15_000 : 10_000, polling: 10 },
        ).then((x) => x.jsonValue());
        keyToPaint.push(rec.paint - t0);
        const sent = sendStarts.slice(sentBefore).find((t) => t >= t0);
        if (sent !== undefined) sendToPaint.push(rec.paint - sent);
      }
      const r = {
        stage: st.name,
        edits: st.n,
        p50: percentile(keyToPaint, 50),
        p95: percentile(keyToPaint, 95),
        sendP50: percentile(sendToPaint, 50),
        sendP95: percentile(sendToPaint, 95),
        max: Math.max(...keyToPaint),
        target: st.target,
      };
      rows.push(r);
      h.log(JSON.stringify(r));
      await s.contexts[`alice${i}`].close();
      await s.contexts[`bob${i}`].close();
    });
  }

  const f = (x) => (Number.isFinite(x) ? x.toFixed(0).padStart(6) : '     –');
  const lines = [
    'wake-up latency, alice keystroke → painted in bob\'s editor (ms), real Chromium through nginx',
    'stage            edits  key→paint p50   p95   max   send→paint p50   p95   target p50/p95  met',
  ];
  for (const r of rows) {
    const met = r.p50 < r.target[0] && r.p95 < r.target[1] ? 'yes' : 'no';
    lines.push(
      `${r.stage.padEnd(16)} ${String(r.edits).padStart(5)}      ${f(r.p50)} ${f(r.p95)} ${f(r.max)}        ${f(r.sendP50)} ${f(r.sendP95)}   ${String(r.target[0]).padStart(5)}/${r.target[1]}   ${met}`,
    );
  }
  lines.push(`(interval stage: ${N_INTERVAL} edits to keep CI short; E2E_LATENCY_EDITS / E2E_LATENCY_INTERVAL_EDITS change the counts)`);
  const table = lines.join('\n');
  console.log(`\n${table}\n`);
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  fs.writeFileSync(path.join(ARTIFACTS, 'latency.txt'), table + '\n');
  assert.equal(rows.length, STAGES.length);
}, { timeout: 480_000 });
