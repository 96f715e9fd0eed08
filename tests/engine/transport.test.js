// @ts-check
// The wake-up ladder under fake timers with fake sockets: each failure detection of
// PROTOCOL §4 (blocked and silent WebSocket, buffered SSE, failing long-poll) and recovery.
import { describe, it, expect, beforeEach, afterEach, vi } from 'vitest';
import {
  WakeLadder, STAGE_LABELS, resetTabFlags, isSseSkipped,
} from '../../static/engine/transport.js';

class FakeWebSocket {
  /** @type {FakeWebSocket[]} */
  static all = [];
  /** @param {string} url */
  constructor(url) {
    this.url = url;
    this.readyState = 0;
    /** @type {any[]} */
    this.sent = [];
    this.closed = false;
    /** @type {any} */ this.onopen = null;
    /** @type {any} */ this.onmessage = null;
    /** @type {any} */ this.onerror = null;
    /** @type {any} */ this.onclose = null;
    FakeWebSocket.all.push(this);
  }
  /** @param {string} s */
  send(s) {
    this.sent.push(JSON.parse(s));
  }
  close() {
    this.closed = true;
    this.readyState = 3;
  }
  // server side
  open() {
    this.readyState = 1;
    this.onopen?.({});
  }
  /** @param {any} msg */
  receive(msg) {
    this.onmessage?.({ data: JSON.stringify(msg) });
  }
  fail() {
    this.readyState = 3;
    this.onerror?.({});
    this.onclose?.({});
  }
  /** The server's side of the protocol: JOINED for a JOIN. */
  joinOk() {
    this.open();
    const join = this.sent.find((m) => m.type === 'JOIN');
    this.receive({ type: 'JOINED', room: join.room });
  }
}

class FakeEventSource {
  /** @type {FakeEventSource[]} */
  static all = [];
  /** @param {string} url */
  constructor(url) {
    this.url = url;
    this.readyState = 0;
    this.closed = false;
    /** @type {Map<string, ((ev: {data: string}) => void)[]>} */
    this.listeners = new Map();
    /** @type {any} */ this.onerror = null;
    FakeEventSource.all.push(this);
  }
  /** @param {string} name @param {(ev: {data: string}) => void} fn */
  addEventListener(name, fn) {
    this.listeners.set(name, [...(this.listeners.get(name) ?? []), fn]);
  }
  close() {
    this.closed = true;
    this.readyState = 2;
  }
  /** @param {string} name @param {any} data */
  emit(name, data) {
    this.readyState = 1;
    for (const fn of this.listeners.get(name) ?? []) fn({ data: JSON.stringify(data) });
  }
}

/** A fetch whose answers the test gives one at a time. */
function controlledFetch() {
  /** @type {{url: string, init: any, resolve: (v: any) => void, reject: (e: any) => void}[]} */
  const calls = [];
  const fn = vi.fn((/** @type {string} */ url, /** @type {any} */ init) =>
    new Promise((resolve, reject) => {
      calls.push({ url, init, resolve, reject });
      init?.signal?.addEventListener('abort', () => reject(new Error('aborted')));
    }));
  /** @param {any} body */
  const ok = (body) => ({ ok: true, status: 200, json: async () => body, text: async () => JSON.stringify(body) });
  return { fn, calls, ok };
}

/** @param {Partial<import('../../static/engine/transport.js').LadderOptions>} over */
function ladder(over = {}) {
  /** @type {any[]} */
  const wakes = [];
  /** @type {string[]} */
  const stages = [];
  const l = new WakeLadder({
    docId: 'doc_1', clientId: 'cl_1', baseUrl: 'http://test',
    WebSocket: FakeWebSocket, EventSource: FakeEventSource, fetch: controlledFetch().fn,
    onWake: (w) => wakes.push(w), onStage: (s) => stages.push(s),
    ...over,
  });
  return { l, wakes, stages };
}

beforeEach(() => {
  vi.useFakeTimers();
  FakeWebSocket.all = [];
  FakeEventSource.all = [];
  resetTabFlags();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('stage 1: WebSocket', () => {
  it('joins the room with its clientId, goes live, and passes DOC_SEQ on with entries', () => {
    const { l, wakes, stages } = ladder();
    l.start();
    const ws = FakeWebSocket.all[0];
    expect(ws.url).toBe('ws://test/api/v1/ws?doc=doc_1');
    expect(l.stage).toBe('connecting'); // "Live" only once a channel delivered
    ws.joinOk();
    expect(ws.sent[0]).toEqual({ type: 'JOIN', room: 'doc:doc_1', clientId: 'cl_1' });
    expect(stages).toEqual(['live']);
    expect(l.stage).toBe('live');
    expect(wakes).toEqual([{}]);
    const entries = [{ seq: 5, opId: 'op_x', kind: 'insert', clientId: 'cl_2', userId: 'u', at: 1, effects: [] }];
    ws.receive({ type: 'DOC_SEQ', docId: 'doc_1', headSeq: 5, leaseSeq: 2, entries });
    ws.receive({ type: 'DOC_SEQ', docId: 'doc_other', headSeq: 9, leaseSeq: 9 });
    expect(wakes[1]).toEqual({ headSeq: 5, leaseSeq: 2, entries });
    expect(wakes).toHaveLength(2);
  });

  it('pings every 15 s and stays up while PONGs come back', () => {
    const { l } = ladder();
    l.start();
    const ws = FakeWebSocket.all[0];
    ws.joinOk();
    for (let i = 0; i < 6; i++) {
      vi.advanceTimersByTime(15_000);
      expect(ws.sent.at(-1)).toEqual({ type: 'PING' });
      ws.receive({ type: 'PONG' });
    }
    expect(ws.sent.filter((m) => m.type === 'PING')).toHaveLength(6);
    expect(ws.closed).toBe(false);
    expect(FakeEventSource.all).toHaveLength(0);
  });

  it('a silent WebSocket (no PONG for 35 s) is dropped for SSE', () => {
    const { l } = ladder();
    l.start();
    const ws = FakeWebSocket.all[0];
    ws.joinOk();
    vi.advanceTimersByTime(34_999);
    expect(FakeEventSource.all).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(ws.closed).toBe(true);
    expect(FakeEventSource.all).toHaveLength(1);
    expect(FakeEventSource.all[0].url).toBe('http://test/api/v1/docs/doc_1/events?clientId=cl_1');
  });

  it('a blocked WebSocket (error before open) goes to SSE at once', () => {
    const { l } = ladder();
    l.start();
    FakeWebSocket.all[0].fail();
    expect(FakeEventSource.all).toHaveLength(1);
    expect(FakeWebSocket.all).toHaveLength(1);
  });

  it('a WebSocket that never answers JOIN goes to SSE after 10 s', () => {
    const { l } = ladder();
    l.start();
    FakeWebSocket.all[0].open();
    vi.advanceTimersByTime(9_999);
    expect(FakeEventSource.all).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(FakeEventSource.all).toHaveLength(1);
  });

  it('a live WebSocket that closes reconnects after 1 s, and wakes the engine on rejoin', () => {
    const { l, wakes } = ladder();
    l.start();
    FakeWebSocket.all[0].joinOk();
    FakeWebSocket.all[0].fail();
    expect(FakeWebSocket.all).toHaveLength(1);
    vi.advanceTimersByTime(1000);
    expect(FakeWebSocket.all).toHaveLength(2);
    FakeWebSocket.all[1].joinOk();
    expect(wakes).toEqual([{}, {}]);
    expect(FakeEventSource.all).toHaveLength(0);
  });

  it('a room ERROR (no access) wakes the engine and leaves WebSockets', () => {
    const { l, wakes } = ladder();
    l.start();
    const ws = FakeWebSocket.all[0];
    ws.open();
    ws.receive({ type: 'ERROR', room: 'doc:doc_1', code: 'not_found' });
    expect(wakes).toEqual([{}]);
    expect(FakeEventSource.all).toHaveLength(1);
  });
});

describe('stage 2: SSE', () => {
  it('goes live on `ready` and passes doc_seq on', () => {
    const { l, wakes, stages } = ladder({ WebSocket: null });
    l.start();
    const es = FakeEventSource.all[0];
    es.emit('ready', { docId: 'doc_1', headSeq: 3, leaseSeq: 1 });
    es.emit('doc_seq', { docId: 'doc_1', headSeq: 4, leaseSeq: 1 });
    expect(stages).toEqual(['sse']);
    expect(STAGE_LABELS[l.stage]).toBe('Live');
    expect(wakes).toEqual([{ headSeq: 3, leaseSeq: 1 }, { headSeq: 4, leaseSeq: 1 }]);
    vi.advanceTimersByTime(60_000);
    expect(es.closed).toBe(false);
  });

  it('passes doc_seq entries on; an event naming another document is ignored', () => {
    const { l, wakes } = ladder({ WebSocket: null });
    l.start();
    const es = FakeEventSource.all[0];
    es.emit('ready', { docId: 'doc_1', headSeq: 3, leaseSeq: 1 });
    const entries = [{ seq: 4, opId: 'op_x', kind: 'insert', clientId: 'cl_2', userId: 'u', at: 1, effects: [] }];
    es.emit('doc_seq', { docId: 'doc_1', headSeq: 4, leaseSeq: 1, entries });
    es.emit('doc_seq', { docId: 'doc_2', headSeq: 4, leaseSeq: 1, entries });
    expect(wakes).toEqual([{ headSeq: 3, leaseSeq: 1 }, { headSeq: 4, leaseSeq: 1, entries }]);
  });

  it('a buffered SSE (no first event within 5 s) is skipped for the whole tab', () => {
    const f = controlledFetch();
    const { l } = ladder({ WebSocket: null, fetch: f.fn });
    l.start();
    vi.advanceTimersByTime(4_999);
    expect(f.calls).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(FakeEventSource.all[0].closed).toBe(true);
    expect(isSseSkipped()).toBe(true);
    expect(f.calls).toHaveLength(1);
    expect(f.calls[0].url).toContain('/api/v1/docs/doc_1/changes?');
    // Another document opened in this tab later: straight to long-polling.
    const f2 = controlledFetch();
    const other = ladder({ WebSocket: null, fetch: f2.fn, docId: 'doc_2' });
    other.l.start();
    expect(FakeEventSource.all).toHaveLength(1);
    expect(f2.calls).toHaveLength(1);
  });

  it('an SSE the browser gave up on (CLOSED) goes to long-polling without the tab flag', () => {
    const f = controlledFetch();
    const { l } = ladder({ WebSocket: null, fetch: f.fn });
    l.start();
    const es = FakeEventSource.all[0];
    es.readyState = 2;
    es.onerror({});
    expect(f.calls).toHaveLength(1);
    expect(isSseSkipped()).toBe(false);
  });
});

describe('stage 3 and 4: long-polling and interval', () => {
  it('polls with since/leaseSeq/wait/clientId and advances its cursor from answers', async () => {
    const f = controlledFetch();
    const { l, wakes, stages } = ladder({ WebSocket: null, EventSource: null, fetch: f.fn });
    l.noteCursor(7, 2);
    l.start();
    const u = new URL(f.calls[0].url);
    expect(Object.fromEntries(u.searchParams)).toEqual({ since: '7', leaseSeq: '2', wait: '25', clientId: 'cl_1' });
    f.calls[0].resolve(f.ok({ headSeq: 9, leaseSeq: 3 }));
    await vi.advanceTimersByTimeAsync(0);
    expect(stages).toEqual(['longpoll']);
    expect(STAGE_LABELS.longpoll).toBe('Live (long-polling)');
    expect(wakes).toEqual([{ headSeq: 9, leaseSeq: 3 }]);
    expect(new URL(f.calls[1].url).searchParams.get('since')).toBe('9');
  });

  it('3 failures in a row → interval; `online` tries long-polling again', async () => {
    const f = controlledFetch();
    const { l, stages } = ladder({ WebSocket: null, EventSource: null, fetch: f.fn });
    l.start();
    f.calls[0].reject(new TypeError('network'));
    await vi.advanceTimersByTimeAsync(1000);
    expect(f.calls).toHaveLength(2);
    f.calls[1].resolve({ ok: false, status: 502, json: async () => ({}), text: async () => '{}' });
    await vi.advanceTimersByTimeAsync(2000);
    expect(f.calls).toHaveLength(3);
    f.calls[2].reject(new TypeError('network'));
    await vi.advanceTimersByTimeAsync(0);
    expect(stages).toEqual(['interval']);
    expect(STAGE_LABELS[l.stage]).toBe('Syncing every 3 s');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(f.calls).toHaveLength(3);
    l.setOnline(true);
    expect(f.calls).toHaveLength(4);
    f.calls[3].resolve(f.ok({ headSeq: 1, leaseSeq: 0 }));
    await vi.advanceTimersByTimeAsync(0);
    expect(stages).toEqual(['interval', 'longpoll']);
  });

  it('a success resets the failure count', async () => {
    const f = controlledFetch();
    const { l, stages } = ladder({ WebSocket: null, EventSource: null, fetch: f.fn });
    l.start();
    f.calls[0].reject(new TypeError('network'));
    await vi.advanceTimersByTimeAsync(1000);
    f.calls[1].reject(new TypeError('network'));
    await vi.advanceTimersByTimeAsync(2000);
    f.calls[2].resolve(f.ok({ headSeq: 0, leaseSeq: 0 }));
    await vi.advanceTimersByTimeAsync(0);
    f.calls[3].reject(new TypeError('network'));
    await vi.advanceTimersByTimeAsync(1000);
    f.calls[4].reject(new TypeError('network'));
    await vi.advanceTimersByTimeAsync(2000);
    expect(stages).toEqual(['longpoll']);
    expect(f.calls).toHaveLength(6);
  });

  it('a long-poll hanging past wait + 10 s is aborted and counts as a failure', async () => {
    const f = controlledFetch();
    ladder({ WebSocket: null, EventSource: null, fetch: f.fn }).l.start();
    await vi.advanceTimersByTimeAsync(35_000);
    expect(f.calls[0].init.signal.aborted).toBe(true);
    await vi.advanceTimersByTimeAsync(1000);
    expect(f.calls).toHaveLength(2);
  });
});

describe('online/offline and stop', () => {
  it('offline closes the socket; online reopens the same stage', () => {
    const { l } = ladder();
    l.start();
    FakeWebSocket.all[0].joinOk();
    l.setOnline(false);
    expect(FakeWebSocket.all[0].closed).toBe(true);
    vi.advanceTimersByTime(60_000);
    expect(FakeWebSocket.all).toHaveLength(1);
    expect(FakeEventSource.all).toHaveLength(0);
    l.setOnline(true);
    expect(FakeWebSocket.all).toHaveLength(2);
  });

  it('stop silences every timer and socket', () => {
    const { l, wakes } = ladder();
    l.start();
    const ws = FakeWebSocket.all[0];
    ws.joinOk();
    l.stop();
    ws.receive({ type: 'DOC_SEQ', docId: 'doc_1', headSeq: 1, leaseSeq: 1 });
    vi.advanceTimersByTime(120_000);
    expect(wakes).toEqual([{}]);
    expect(ws.closed).toBe(true);
    expect(FakeEventSource.all).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(0);
  });
});
