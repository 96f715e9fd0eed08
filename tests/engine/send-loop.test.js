// @ts-check
// send-loop.js on its own: when exchanges happen (leading edge, throttle, one at a time,
// backoff, one op at a time after a refused batch), with a stand-in owner and fake timers.
import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import { SendLoop, THROTTLE_MS, BACKOFF_FIRST_MS, BACKOFF_MAX_MS, MAX_OPS_PER_SYNC } from '../../static/engine/send-loop.js';

/** @typedef {import('../../static/engine/send-loop.js').Failure} Failure */

beforeEach(() => {
  vi.useFakeTimers({ now: 0 });
});
afterEach(() => {
  vi.useRealTimers();
});

/**
 * An owner whose exchanges are recorded (time, batch limit) and answered by `answers`
 * (null: success); each takes `took` ms.
 * @param {{answers?: (Failure|null)[], took?: number, work?: () => boolean}} [o]
 */
function owner(o = {}) {
  const calls = /** @type {{at: number, limit: number}[]} */ ([]);
  const answers = [...(o.answers ?? [])];
  const loop = new SendLoop({
    now: () => Date.now(),
    active: () => true,
    exchange: async (limit) => {
      calls.push({ at: Date.now(), limit });
      if (o.took === 0) await Promise.resolve();
      else await new Promise((r) => setTimeout(r, o.took ?? 20));
      return answers.length ? /** @type {Failure|null} */ (answers.shift()) : null;
    },
    hasWork: o.work ?? (() => false),
    period: () => 30_000,
    settled: () => {},
  });
  return { loop, calls };
}

describe('SendLoop', () => {
  it('a backlog bigger than one request (an import) goes request after request without the throttle', async () => {
    let left = 3 * MAX_OPS_PER_SYNC + 10;
    /** @type {number[]} */
    const at = [];
    const loop = new SendLoop({
      now: () => Date.now(),
      active: () => true,
      exchange: async (limit) => {
        at.push(Date.now());
        await new Promise((r) => setTimeout(r, 20));
        left = Math.max(0, left - limit);
        return null;
      },
      hasWork: () => left > 0,
      backlog: () => left,
      period: () => 30_000,
      settled: () => {},
    });
    loop.changed();
    await vi.advanceTimersByTimeAsync(1_000);
    const gaps = at.slice(1).map((t, k) => t - at[k]);
    // One right after the other (each takes 20 ms) while more than a request waits; the last
    // part waits for the throttle as typing does.
    expect(gaps.length).toBe(3);
    expect(gaps.slice(0, 2).every((g) => g >= 20 && g < 25)).toBe(true);
    expect(gaps[2]).toBe(THROTTLE_MS);
  });

  it('a change on an idle line goes at once; changes right after wait for the throttle and go together', async () => {
    const { loop, calls } = owner();
    loop.changed();
    await vi.advanceTimersByTimeAsync(0);
    expect(calls.map((c) => c.at)).toEqual([0]);
    // Three more changes while the first is in flight and just after: one exchange, THROTTLE_MS after the first.
    await vi.advanceTimersByTimeAsync(5);
    loop.changed();
    await vi.advanceTimersByTimeAsync(30);
    loop.changed();
    loop.changed();
    await vi.advanceTimersByTimeAsync(200);
    expect(calls.map((c) => c.at)).toEqual([0, THROTTLE_MS]);
    // Idle again for longer than the throttle: the next change goes at once.
    await vi.advanceTimersByTimeAsync(500);
    const t = Date.now();
    loop.changed();
    await vi.advanceTimersByTimeAsync(0);
    expect(calls.at(-1)?.at).toBe(t);
  });

  it('runs one exchange at a time; a wish during one runs one more right after', async () => {
    const { loop, calls } = owner({ took: 50 });
    const first = loop.run();
    expect(loop.inFlight).toBe(true);
    loop.run();
    loop.run();
    await vi.advanceTimersByTimeAsync(50);
    await first;
    await vi.advanceTimersByTimeAsync(100);
    expect(calls).toHaveLength(2);
    expect(calls[1].at - 50).toBeLessThanOrEqual(1); // right after (a 0 ms timer)
  });

  it('backs off 1 s, 2 s, 4 s … at most 30 s; typing does not shorten it; resetBackoff does', async () => {
    const { loop, calls } = owner({ answers: Array(8).fill('backoff'), took: 0 });
    loop.run();
    await vi.advanceTimersByTimeAsync(BACKOFF_FIRST_MS * 100);
    const gaps = calls.slice(1).map((c, i) => c.at - calls[i].at);
    expect(gaps.slice(0, 6)).toEqual([1000, 2000, 4000, 8000, 16000, BACKOFF_MAX_MS]);
    // During a backoff a change waits for its end.
    const { loop: l2, calls: c2 } = owner({ answers: ['backoff', 'backoff'], took: 0 });
    l2.run();
    await vi.advanceTimersByTimeAsync(0);
    l2.changed();
    await vi.advanceTimersByTimeAsync(500);
    expect(c2).toHaveLength(1);
    l2.resetBackoff();
    l2.changed();
    await vi.advanceTimersByTimeAsync(0);
    expect(c2).toHaveLength(2);
  });

  it('a refused batch is sent again one op at a time, then whole batches once that worked', async () => {
    /** @type {{calls: {limit: number}[]}} */
    const seen = { calls: [] };
    const { loop, calls } = owner({ answers: ['split', null, null], took: 0, work: () => seen.calls.length < 3 });
    seen.calls = calls;
    loop.run();
    await vi.advanceTimersByTimeAsync(THROTTLE_MS * 3);
    expect(calls.map((c) => c.limit)).toEqual([MAX_OPS_PER_SYNC, 1, MAX_OPS_PER_SYNC]);
  });

  it('stop: no more exchanges from timers', async () => {
    let active = true;
    const calls = /** @type {number[]} */ ([]);
    const loop = new SendLoop({
      now: () => Date.now(), active: () => active,
      exchange: async () => {
        calls.push(Date.now());
        active = false;
        return 'stop';
      },
      hasWork: () => true, period: () => 1000, settled: () => {},
    });
    await loop.run();
    loop.changed();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls).toEqual([0]);
  });

  it('a wake-up during the exchange is handed back after it, merged', () => {
    const { loop } = owner();
    loop.noteWake({ headSeq: 5, leaseSeq: 1 });
    loop.noteWake({ headSeq: 7 });
    expect(loop.takeWake()).toEqual({ headSeq: 7, leaseSeq: 1 });
    expect(loop.takeWake()).toBeNull();
    loop.noteWake({});
    expect(loop.takeWake()?.headSeq).toBe(Infinity);
  });
});
