// The wake-up ladder of PROTOCOL §4: WebSocket → SSE → long-polling → interval. It only
// says "the document moved" (headSeq/leaseSeq, optional entries); data flows through the
// engine's /sync. One channel runs at a time; callbacks of a replaced channel are ignored.

import { requestJson } from './http.js';

/** @typedef {import('./types.js').Stage} Stage */
/** @typedef {import('./types.js').LogEntry} LogEntry */

/** @typedef {{headSeq?: number, leaseSeq?: number, entries?: LogEntry[], since?: number}} Wake */

/** The status line's words for each stage (exact; the e2e tests compare them). */
export const STAGE_LABELS = /** @type {const} */ ({
  connecting: 'Connecting…',
  live: 'Live',
  sse: 'Live',
  longpoll: 'Live (long-polling)',
  interval: 'Syncing every 3 s',
  offline: 'Offline – changes saved on this device',
});

export const PING_EVERY_MS = 15_000;
export const SILENCE_LIMIT_MS = 35_000;
/** Decision (spec silent): a socket not JOINED within this long counts as blocked. */
export const WS_CONNECT_LIMIT_MS = 10_000;
/** Decision: a socket that was live and closed is retried this often before SSE. */
export const WS_RECONNECTS = 3;
export const SSE_FIRST_EVENT_MS = 5_000;
export const LONGPOLL_WAIT_S = 25;
/** A long-poll not answered within wait + this margin counts as failed. */
export const LONGPOLL_MARGIN_MS = 10_000;
export const LONGPOLL_FAILURES = 3;

// A buffering proxy in front of SSE stays for the whole tab: once seen, SSE is skipped by
// every ladder of this tab (PROTOCOL §4, stage 2).
let sseSkipped = false;

/** Tests only: forget the tab-wide SSE verdict. */
export function resetTabFlags() {
  sseSkipped = false;
}

/** @returns {boolean} */
export function isSseSkipped() {
  return sseSkipped;
}

/**
 * @typedef {{
 *   docId: string, clientId: string, baseUrl?: string, headers?: Record<string, string>,
 *   fetch?: typeof fetch, WebSocket?: any, EventSource?: any,
 *   onWake: (w: Wake) => void, onStage?: (s: Stage) => void,
 * }} LadderOptions
 */

export class WakeLadder {
  /** @param {LadderOptions} o */
  constructor(o) {
    this.docId = o.docId;
    this.clientId = o.clientId;
    this.baseUrl = o.baseUrl ?? '';
    this.headers = o.headers ?? {};
    this.fetchFn = o.fetch ?? globalThis.fetch?.bind(globalThis);
    this.WebSocketCtor = o.WebSocket === undefined ? globalThis.WebSocket : o.WebSocket;
    this.EventSourceCtor = o.EventSource === undefined ? globalThis.EventSource : o.EventSource;
    this.onWake = o.onWake;
    this.onStage = o.onStage ?? (() => {});
    /**
     * @type {Stage} the last stage confirmed to work (reported); never 'offline'. Until a
     * channel has delivered something, 'connecting': "Live" is said only once it is true.
     */
    this.stage = 'connecting';
    /** @type {Stage} the stage running or being tried */
    this.trying = 'live';
    /** Bumped whenever the running channel is replaced; stale callbacks compare it. */
    this.gen = 0;
    this.running = false;
    this.online = true;
    /** Latest known position, from wake-ups and from the engine's sync replies. */
    this.cursor = { headSeq: 0, leaseSeq: 0 };
    this.lpFailures = 0;
    this.wsReconnects = 0;
    /** @type {Set<() => void>} cleanup of the running channel */
    this.cleanup = new Set();
  }

  /** Starts at the top of the ladder. */
  start() {
    this.running = true;
    if (this.online) this.startWs();
  }

  stop() {
    this.running = false;
    this.teardown();
  }

  /**
   * The engine's latest headSeq/leaseSeq (after each /sync), so a long-poll asks only for
   * what it has not seen.
   * @param {number} headSeq @param {number} leaseSeq
   */
  noteCursor(headSeq, leaseSeq) {
    this.cursor = { headSeq, leaseSeq };
  }

  /**
   * Browser `online`/`offline`. Offline closes the channel; online resumes the same stage,
   * except that the interval stage tries long-polling again (PROTOCOL §4, stage 4).
   * @param {boolean} online
   */
  setOnline(online) {
    if (online === this.online) {
      if (online && this.running && this.trying === 'interval') this.startLongPoll();
      return;
    }
    this.online = online;
    if (!this.running) return;
    if (!online) {
      this.teardown();
      return;
    }
    if (this.trying === 'live') this.startWs();
    else if (this.trying === 'sse') this.startSse();
    else this.startLongPoll();
  }

  teardown() {
    this.gen++;
    const fns = this.cleanup;
    this.cleanup = new Set();
    for (const f of fns) {
      try {
        f();
      } catch {
        // closing an already broken socket may throw; it is gone either way
      }
    }
  }

  /** @param {Stage} stage */
  setStage(stage) {
    if (this.stage === stage) return;
    this.stage = stage;
    this.onStage(stage);
  }

  /** @param {string} path */
  url(path) {
    const base = this.baseUrl || globalThis.location?.href;
    // No base at all (a worker without location): relative, as fetch resolves it.
    return base ? new URL(path, base).toString() : path;
  }

  /**
   * A timer that dies with the running channel; returns its cancel function.
   * @param {() => void} fn @param {number} ms
   */
  timeout(fn, ms) {
    const gen = this.gen;
    const cancel = () => {
      globalThis.clearTimeout(t);
      this.cleanup.delete(cancel);
    };
    const t = globalThis.setTimeout(() => {
      this.cleanup.delete(cancel);
      if (gen === this.gen) fn();
    }, ms);
    this.cleanup.add(cancel);
    return cancel;
  }

  // ---- stage 1: WebSocket ----

  startWs() {
    this.teardown();
    this.trying = 'live';
    const Ctor = this.WebSocketCtor;
    if (!Ctor) return this.startSse();
    const gen = this.gen;
    /** @type {any} */
    let ws;
    try {
      // The document in the URL too (the JOIN names it again): a proxy in front of several
      // nodes can send every channel of a document to the same node by hashing it.
      ws = new Ctor(this.url(`/api/v1/ws?doc=${encodeURIComponent(this.docId)}`).replace(/^http/, 'ws'));
    } catch {
      return this.startSse();
    }
    let joined = false;
    const room = `doc:${this.docId}`;
    /** @param {boolean} [silent] a socket that stopped answering is not retried */
    const down = (silent = false) => {
      if (gen !== this.gen) return;
      if (joined && !silent && this.wsReconnects < WS_RECONNECTS) {
        // A live socket that dropped (server restart, network blip): retry before giving
        // up on WebSockets, 1 s, 2 s, 4 s apart.
        const delay = 1000 * 2 ** this.wsReconnects++;
        this.teardown();
        this.timeout(() => this.startWs(), delay);
        return;
      }
      this.startSse();
    };
    let silence = () => {};
    const heard = () => {
      silence();
      silence = this.timeout(() => down(true), SILENCE_LIMIT_MS);
    };
    this.cleanup.add(() => {
      ws.onopen = ws.onmessage = ws.onerror = ws.onclose = null;
      ws.close();
    });
    const connectLimit = this.timeout(() => down(true), WS_CONNECT_LIMIT_MS);
    ws.onopen = () => {
      if (gen !== this.gen) return;
      ws.send(JSON.stringify({ type: 'JOIN', room, clientId: this.clientId }));
      heard();
      const ping = globalThis.setInterval(() => {
        if (gen === this.gen && ws.readyState === 1) ws.send(JSON.stringify({ type: 'PING' }));
      }, PING_EVERY_MS);
      this.cleanup.add(() => globalThis.clearInterval(ping));
    };
    ws.onmessage = (/** @type {{data: any}} */ ev) => {
      if (gen !== this.gen) return;
      /** @type {any} */
      let msg;
      try {
        msg = JSON.parse(String(ev.data));
      } catch {
        return;
      }
      // Any frame proves the path is alive, PONG or not.
      heard();
      if (msg.type === 'JOINED' && msg.room === room) {
        joined = true;
        this.wsReconnects = 0;
        connectLimit();
        this.setStage('live');
        // Anything may have happened while we were not joined.
        this.onWake({});
      } else if (msg.type === 'DOC_SEQ' && msg.docId === this.docId) {
        this.wake(msg);
      } else if (msg.type === 'ERROR' && msg.room === room) {
        // Not joined (no access, server busy): the sync will say why; wake-ups go elsewhere.
        this.onWake({});
        joined = false;
        down();
      }
    };
    ws.onerror = () => down();
    ws.onclose = () => down();
  }

  /** @param {any} msg */
  wake(msg) {
    /** @type {Wake} */
    const w = {};
    if (typeof msg.headSeq === 'number') w.headSeq = msg.headSeq;
    if (typeof msg.leaseSeq === 'number') w.leaseSeq = msg.leaseSeq;
    if (Array.isArray(msg.entries)) w.entries = msg.entries;
    if (typeof msg.since === 'number') w.since = msg.since;
    this.onWake(w);
  }

  // ---- stage 2: Server-Sent Events ----

  startSse() {
    this.teardown();
    this.trying = 'sse';
    const Ctor = this.EventSourceCtor;
    if (sseSkipped || !Ctor) return this.startLongPoll();
    const gen = this.gen;
    /** @type {any} */
    let es;
    try {
      const q = `?clientId=${encodeURIComponent(this.clientId)}`;
      es = new Ctor(this.url(`/api/v1/docs/${encodeURIComponent(this.docId)}/events${q}`));
    } catch {
      return this.startLongPoll();
    }
    this.cleanup.add(() => {
      es.onerror = null;
      es.close();
    });
    let first = false;
    const firstLimit = this.timeout(() => {
      // Nothing within 5 s: a proxy is holding the stream back. Never try SSE again here.
      sseSkipped = true;
      this.startLongPoll();
    }, SSE_FIRST_EVENT_MS);
    const onEvent = (/** @type {{data: string}} */ ev) => {
      if (gen !== this.gen) return;
      if (!first) {
        first = true;
        firstLimit();
        this.setStage('sse');
      }
      /** @type {any} */
      let msg = {};
      try {
        msg = JSON.parse(ev.data);
      } catch {
        // a ready event without data still proves the stream flows
      }
      // The stream is per document; an event naming another one is not ours (nor its entries).
      if (typeof msg?.docId === 'string' && msg.docId !== this.docId) return;
      this.wake(msg ?? {});
    };
    es.addEventListener('ready', onEvent);
    es.addEventListener('doc_seq', onEvent);
    es.onerror = () => {
      if (gen !== this.gen) return;
      // CONNECTING: the browser reconnects by itself and the next `ready` wakes us.
      // CLOSED: it gave up (HTTP error, wrong content type): go down the ladder.
      if (es.readyState === 2) this.startLongPoll();
    };
  }

  // ---- stage 3: long-polling ----

  startLongPoll() {
    this.teardown();
    this.trying = 'longpoll';
    this.lpFailures = 0;
    this.poll();
  }

  poll() {
    const gen = this.gen;
    const fetchFn = this.fetchFn;
    if (!fetchFn) return this.startInterval();
    const { headSeq, leaseSeq } = this.cursor;
    const q = new URLSearchParams({
      since: String(headSeq),
      leaseSeq: String(leaseSeq),
      wait: String(LONGPOLL_WAIT_S),
      clientId: this.clientId,
    });
    const ctl = new AbortController();
    const abort = () => ctl.abort();
    this.cleanup.add(abort);
    const cancelLimit = this.timeout(abort, LONGPOLL_WAIT_S * 1000 + LONGPOLL_MARGIN_MS);
    const finished = () => {
      cancelLimit();
      this.cleanup.delete(abort);
    };
    const url = this.url(`/api/v1/docs/${encodeURIComponent(this.docId)}/changes?${q}`);
    requestJson(fetchFn, url, { headers: this.headers, signal: ctl.signal })
      .then(
        (body) => {
          if (gen !== this.gen) return;
          finished();
          this.lpFailures = 0;
          this.setStage('longpoll');
          if (typeof body?.headSeq === 'number' && typeof body?.leaseSeq === 'number') {
            this.cursor = { headSeq: body.headSeq, leaseSeq: body.leaseSeq };
          }
          this.wake(body ?? {});
          this.poll();
        },
        () => {
          if (gen !== this.gen) return;
          finished();
          this.lpFailures++;
          if (this.lpFailures >= LONGPOLL_FAILURES) return this.startInterval();
          // Decision (spec silent): 1 s, then 2 s before the next try.
          this.timeout(() => this.poll(), 1000 * this.lpFailures);
        },
      );
  }

  // ---- stage 4: interval ----

  startInterval() {
    this.teardown();
    this.trying = 'interval';
    // The engine syncs every 3 s in this stage; nothing runs here until `online`.
    this.setStage('interval');
  }
}
