// @ts-check
// The browser engine against the real server: several DocSyncEngines (own fake IndexedDB,
// own clientId, bearer tokens) edit one shared document through a lossy network (dropped
// requests and replies, duplicates, delays, offline periods), tabs are reloaded from their
// IndexedDB mid-stream, and compaction runs with the server's clock moved 8 days. At the end
// every engine must show exactly the server's snapshot (and so must a new engine opened
// offline on each device's IndexedDB), every queued op must be applied exactly once, no
// typed text may be missing, and the tree must be valid. A counter-check proves the checks
// catch three deliberately broken engines. See docs/browser.md ("Proof").
//
//   npx vitest run tests/engine/sim.test.js
//   SIM_SEEDS=3,5 SIM_STEPS=300 SIM_VERBOSE=1 npx vitest run tests/engine/sim.test.js
//
// Needs target/debug/docsync (DOCSYNC_BIN overrides) and the sqlite3 command.

import { describe, it, expect, afterAll } from 'vitest';
import { SimRun } from './sim/harness.js';

const SEEDS = (process.env.SIM_SEEDS ?? '1,2,3,4,5,6,7,8').split(',').map(Number);
const STEPS = Number(process.env.SIM_STEPS ?? 150);
const totals = { seeds: 0, steps: 0 };
const rows = [];

function addFigures(run, ms) {
  totals.seeds++;
  totals.steps += run.steps;
  for (const [k, v] of Object.entries(run.figures)) totals[k] = (totals[k] ?? 0) + v;
  for (const [k, v] of Object.entries(run.net.stats)) totals[`net.${k}`] = (totals[`net.${k}`] ?? 0) + v;
  rows.push({ seed: run.seed, ms, ...run.figures, dropReq: run.net.stats.droppedRequests, dropRep: run.net.stats.droppedReplies, dup: run.net.stats.duplicated });
}

afterAll(() => {
  if (!rows.length) return;
  const t = totals;
  console.log(
    `engine simulation: ${t.seeds} seeds × ${STEPS} steps; ops queued ${t.ops}, retried sends ${t.retries}, ` +
      `reloads ${t.reloads} (adopted ops ${t.adopted}), resyncs ${t.resyncs}, snapshots ${t.snapshots}, ` +
      `conflict copies ${t.conflictCopies}, compactions ${t.compactions} (purged ${t.purged}), edits ${t.edits} ` +
      `(refused ${t.refused}), undos ${t.undos} (skipped ${t.undoSkipped}), redos ${t.redos}, conflict copies accepted ` +
      `${t.accepted} / discarded ${t.discarded}, tab hidden ${t.hides}, pagehide before reload ${t.pageHides}, ` +
      `offline periods ${t.offline}; ` +
      `network: requests ${t['net.requests']}, dropped requests ${t['net.droppedRequests']}, dropped replies ` +
      `${t['net.droppedReplies']}, duplicated ${t['net.duplicated']}, delayed ${t['net.delayed']}, ` +
      `refused offline ${t['net.offlineRefused']}, long-polls ${t['net.polls']}`,
  );
  console.table(rows);
});

describe('engine against the real server (lossy network, reloads, compaction)', () => {
  for (const seed of SEEDS) {
    it(`seed ${seed} × ${STEPS} steps`, async () => {
      const t0 = performance.now();
      const run = await new SimRun({ seed, steps: STEPS }).run();
      addFigures(run, Math.round(performance.now() - t0));
      expect(run.failures, `seed ${seed}: reproduce with SIM_SEEDS=${seed}`).toEqual([]);
    }, 120_000);
  }
});

describe('counter-check: broken engines are caught', () => {
  // A broken variant is caught on a seed when its run fails the given check while the
  // unbroken engine, on the same seed and settings, passes that check. Seeds are tried in
  // order until one catches it; at least one must.
  const CC_SEEDS = [101, 102, 103, 104];

  async function catches(variant, opts, pattern, seeds = CC_SEEDS) {
    const tried = [];
    for (const seed of seeds) {
      const broken = await new SimRun({ seed, variant, ...opts }).run();
      const bad = broken.failures.filter((f) => pattern.test(f));
      tried.push(`seed ${seed}: ${bad.length} ${pattern.source} failures`);
      if (!bad.length) continue;
      const base = await new SimRun({ seed, ...opts }).run();
      const baseBad = base.failures.filter((f) => pattern.test(f));
      tried.push(`  unbroken: ${baseBad.length}`);
      if (baseBad.length === 0) {
        console.log(`${variant}: caught on seed ${seed}: ${bad[0]}`);
        return true;
      }
    }
    console.log(`${variant}: not caught (${tried.join('; ')})`);
    return false;
  }

  it('a store that forgets the queue on reload fails the exactly-once check', async () => {
    expect(await catches('forgetQueue', { steps: 80, reloadRate: 0.08 }, /never applied/)).toBe(true);
  }, 120_000);

  it('a store that loses synced block changes fails the offline-reopen check', async () => {
    expect(await catches('staleStore', { steps: 60 }, /IndexedDB \(opened offline\)/)).toBe(true);
  }, 120_000);

  it('taking the latest baseVersion for set_content (last writer wins) fails the text check', async () => {
    // Long offline periods: edits made on a stale view arrive after the others' leases ran out.
    // Whether a random run produces that race depends on real request timing, so one seed
    // may miss it (3 of 12 four-seed runs did): try up to 16 seeds, stopping at the first
    // catch. The scripted test below catches the same variant deterministically.
    const opts = { steps: 100, offlineRate: 0.08, offlineSteps: [25, 70] };
    const seeds = Array.from({ length: 16 }, (_, i) => 101 + i);
    expect(await catches('latestBase', opts, /text lost/, seeds)).toBe(true);
  }, 180_000);

  it('taking the latest baseVersion loses text in a scripted stale edit (deterministic)', async () => {
    // A edits X offline on version 1; R (plain HTTP) makes X version 2 and lets go of it;
    // A comes back. The real engine's stale edit becomes a conflict copy (both texts stay);
    // with the broken rewrite one text overwrites the other.
    const outcome = async (variant) => {
      const run = new SimRun({ seed: 9003, steps: 0, tabs: 1, variant });
      await run.setup();
      run.net.lossy = false;
      try {
        const s = run.server;
        const [alice] = run.users;
        const a = run.tabs[0];
        const sync = (ops) =>
          s.ok(alice.token, 'POST', `/api/v1/docs/${run.docId}/sync`, { clientId: 'cl_raw', lastSeq: 0, ops, leases: { hold: [] } });
        await sync([{ opId: 'op_s1', kind: 'insert', blockId: 'blk_x', parentId: null, orderKey: 'a0', content: 'x0' }]);
        await sync([]);
        await run.settle(31_000);
        expect(a.engine.state.rows.map((r) => r.content)).toEqual(['x0']);
        a.link.setDown(true);
        a.engine.commitRows([{ ...a.engine.state.rows[0], content: 'x0 mine' }], { step: 'typing' });
        await run.settle(2000);
        await sync([{ opId: 'op_s2', kind: 'set_content', blockId: 'blk_x', content: 'x0 theirs', baseVersion: 1 }]);
        await sync([]);
        a.link.setDown(false);
        await run.settle(40_000);
        const snap = await s.snapshot(alice.token, run.docId);
        return snap.blocks.filter((b) => !b.deleted).map((b) => b.content);
      } finally {
        await run.teardown();
      }
    };
    const real = await outcome('none');
    expect(real).toContain('x0 theirs');
    expect(real).toContain('x0 mine');
    // Broken: one of the two texts is gone (which one depends on whether the rewritten op
    // or a later resend of it lands last) — either way, typed text lost.
    const broken = await outcome('latestBase');
    expect(broken.includes('x0 mine') && broken.includes('x0 theirs'), broken.join(' | ')).toBe(false);
  }, 120_000);
});

describe('regression: a set_content typed while an earlier one of the same bullet is unanswered', () => {
  // Found by the simulation (seeds 2 and 3 as of commit 73719b1; 19, 21, 28 and 38 of a
  // 9–40 sweep), reduced by hand; the engine waits for the earlier op since 7a513ee.
  // Engine A's first edit of bullet X
  // (baseVersion 1) is on the wire when someone else (R, plain HTTP, no lease) has already
  // made X version 2; A's edit conflicts, but A has not heard so yet and types on. Its view
  // counts its own unanswered edit as version 2, so the next edit goes out with
  // baseVersion 2, equal to the server's version of R's text: applied, R's text gone.
  it('must not overwrite text the engine never saw', async () => {
    const run = new SimRun({ seed: 9001, steps: 0, tabs: 1 });
    await run.setup();
    run.net.lossy = false; // only the scripted faults below
    try {
      const s = run.server;
      const [alice] = run.users;
      const a = run.tabs[0];
      const sync = (ops) =>
        s.ok(alice.token, 'POST', `/api/v1/docs/${run.docId}/sync`, { clientId: 'cl_rawclient', lastSeq: 0, ops, leases: { hold: [] } });
      await sync([{ opId: 'op_r1', kind: 'insert', blockId: 'blk_x', parentId: null, orderKey: 'a0', content: 'x0x1' }]);
      await sync([]); // R lets go of the new bullet's lease
      await run.settle(31_000); // A's periodic sync picks X up
      expect(a.engine.state.rows.map((r) => r.content)).toEqual(['x0x1']);
      a.link.setDown(true);
      const row = (content) => [{ ...a.engine.state.rows[0], content }];
      a.engine.commitRows(row('x0x1 a0x2'), { step: 'typing' }); // op1, baseVersion 1
      await run.settle(2000); // op1 fails to go out (offline): it is now "sent"
      await sync([{ opId: 'op_r2', kind: 'set_content', blockId: 'blk_x', content: 'x0x1 r0x3', baseVersion: 1 }]); // X v2
      await sync([]);
      a.link.setDown(false);
      a.link.forced = 'dropReply'; // op1 reaches the server (conflict), A never hears
      await run.settle(1500);
      a.engine.commitRows(row(`${a.engine.state.rows[0].content} a0x4`), { step: 'typing' }); // op2
      await run.settle(1500);
      a.link.forced = null;
      await run.settle(40_000);
      const snap = await s.snapshot(alice.token, run.docId);
      const texts = snap.blocks.map((b) => b.content);
      if (process.env.SIM_VERBOSE) console.log(JSON.stringify({ state: { ...a.engine.state, rows: a.engine.state.rows.map((r) => [r.id, r.content, r.version]), locks: [...a.engine.state.locks.keys()] }, stats: run.net.stats, queue: a.engine.queue.map((q) => q.rec.op), texts, trace: run.trace }, null, 1));
      // R's r0x3 must still be somewhere (X itself); A's text in X or in conflict copies.
      expect(texts.join(' | ')).toContain('r0x3');
      expect(texts.join(' | ')).toContain('a0x4');
    } finally {
      await run.teardown();
    }
  }, 60_000);
});

describe('regression: accepting a conflict copy whose original was deleted', () => {
  // Found by seed 8 (after accept/discard joined the action mix): the original X held text
  // someone typed, then someone deleted X; X's tombstone still holds that text (undoing the
  // delete brings it back, until compaction purges it). Accepting X's conflict copy sends
  // set_content on the tombstone: the server restores X with the copy's text, and the text
  // in the tombstone is gone for good. Fixed in dc137c8 (the copy stays, marked resolved).
  it('must not overwrite the text of a deleted original', async () => {
    const run = new SimRun({ seed: 9002, steps: 0, tabs: 1 });
    await run.setup();
    run.net.lossy = false;
    try {
      const s = run.server;
      const [alice] = run.users;
      const a = run.tabs[0];
      const sync = (clientId, ops) =>
        s.ok(alice.token, 'POST', `/api/v1/docs/${run.docId}/sync`, { clientId, lastSeq: 0, ops, leases: { hold: [] } });
      await sync('cl_r1', [{ opId: 'op_r1', kind: 'insert', blockId: 'blk_x', parentId: null, orderKey: 'a0', content: 'x0x1' }]);
      await sync('cl_r1', [{ opId: 'op_r2', kind: 'set_content', blockId: 'blk_x', content: 'x0x1 r0x2', baseVersion: 1 }]);
      const r3 = await sync('cl_r2', [{ opId: 'op_r3', kind: 'set_content', blockId: 'blk_x', content: 'x0x1 q0x3', baseVersion: 1 }]);
      expect(r3.results[0].status).toBe('conflict');
      await sync('cl_r2', []);
      await sync('cl_r1', [{ opId: 'op_r4', kind: 'delete', blockId: 'blk_x' }]);
      await run.settle(31_000);
      const copy = a.engine.state.rows.find((r) => r.conflictOf === 'blk_x');
      expect(copy?.content).toBe('x0x1 q0x3');
      const res = a.engine.acceptConflict(copy.id);
      await run.settle(5_000);
      const snap = await s.snapshot(alice.token, run.docId);
      const texts = snap.blocks.map((b) => `${b.id}${b.deleted ? ' (deleted)' : ''}: ${b.content}`).join(' | ');
      expect(res.ok, texts).toBe(true);
      expect(texts).toContain('r0x2');
      expect(texts).toContain('q0x3');
    } finally {
      await run.teardown();
    }
  }, 60_000);
});
