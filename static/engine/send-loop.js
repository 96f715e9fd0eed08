// When the engine talks to the server (PROTOCOL §7 "Sending"): one exchange at a time,
// leading edge then throttled, backoff after failures, one op at a time to find a bad one,
// and the background sync that renews leases and catches what no wake-up announced.
// Invariants: at most one exchange runs (a wish meanwhile runs one more right after it); no
// exchange starts before the backoff has run out, except when the owner says the world
// changed (online again, tab shown); timers live only while the owner is active.
// What an exchange sends is exchange.js's, how a reply is applied engine.js's; this class
// only decides when, and how a failure bends the schedule.

/** @typedef {import('./transport.js').Wake} Wake */

/**
 * Sending is leading edge, then throttled (PROTOCOL §7, amended): a stored change goes out at
 * once when no /sync is in flight and the last one left at least this long ago; changes made
 * meanwhile wait and go together, this long after the previous send. A continuous typist
 * costs at most ~10 /sync a second, and a colleague sees a keystroke one round trip later.
 */
export const THROTTLE_MS = 100;
export const BACKOFF_FIRST_MS = 1000;
export const BACKOFF_MAX_MS = 30_000;
/** Ops per /sync: under the server's 500 and its 2 MiB body limit for normal text. */
export const MAX_OPS_PER_SYNC = 400;
/** Browsers refuse keepalive bodies over 64 KiB in total. */
export const KEEPALIVE_BODY_LIMIT = 60_000;

/**
 * How a failed exchange bends the schedule: `backoff` (network, server trouble, a budget:
 * 1 s, 2 s, 4 s … 30 s), `split` (the batch was refused as a whole: one op at a time, now),
 * `now` (the bad op was dropped: go on at once), `stop` (no access: no more exchanges).
 * @typedef {'backoff'|'split'|'now'|'stop'} Failure
 */

/**
 * @typedef {{
 *   now: () => number,
 *   active: () => boolean,
 *   exchange: (batchLimit: number) => Promise<Failure|null>,
 *   hasWork: () => boolean,
 *   backlog?: () => number,
 *   period: () => number,
 *   settled: () => void,
 * }} SendLoopOwner
 * `active`: the owner is open and may talk to the server; `exchange`: one snapshot-or-/sync
 * with at most that many ops, answering null or, for a failure, the owner's reading of it (its
 * own effects — stop, drop an op, a notice — done there); `hasWork`: ops wait to be sent;
 * `backlog`: how many (more than one request carries: an import, a long offline spell);
 * `period`: ms until the next background sync; `settled`: after each exchange (emit state).
 */

export class SendLoop {
  /** @type {SendLoopOwner} */
  #o;
  #inFlight = false;
  /** Another exchange is wanted as soon as the one in flight returns. */
  #again = false;
  #backoffMs = 0;
  /** No exchange before this time (backoff after a failure); 0 = none. */
  #retryAt = 0;
  /** Ops per request; drops to 1 to find an op the server calls invalid. */
  #batchLimit = MAX_OPS_PER_SYNC;
  /** When the last exchange left (the throttle counts from there). */
  #lastSendAt = -Infinity;
  /** @type {ReturnType<typeof setTimeout>|null} */
  #timer = null;
  #due = Infinity;
  /** @type {ReturnType<typeof setTimeout>|null} */
  #periodic = null;
  #periodicDue = Infinity;
  /** Wake-ups during the exchange, merged (headSeq Infinity: "anything may have happened"). @type {{headSeq: number, leaseSeq: number|undefined}|null} */
  #wake = null;

  /** @param {SendLoopOwner} owner */
  constructor(owner) {
    this.#o = owner;
  }

  /** An exchange is under way. */
  get inFlight() {
    return this.#inFlight;
  }

  /**
   * An exchange in `delay` ms unless one is already due sooner; never before the backoff has
   * run out (a server that is down is not hammered by typing).
   * @param {number} delay
   */
  soon(delay) {
    if (!this.#o.active()) return;
    this.#arm(Math.max(delay, this.#retryAt - this.#o.now()));
  }

  /** A stored change: at once on the leading edge, else THROTTLE_MS after the last send. */
  changed() {
    this.soon(this.throttleDelay());
  }

  /** How long a change waits now: 0 on the leading edge, else until THROTTLE_MS after the last send. */
  throttleDelay() {
    return Math.max(0, this.#lastSendAt + THROTTLE_MS - this.#o.now());
  }

  /** One more exchange right after the one in flight (a reply said hasMore, a lease was asked for). */
  again() {
    this.#again = true;
  }

  /** The world changed (online again, the tab shown): the backoff of old failures is over. */
  resetBackoff() {
    this.#backoffMs = 0;
    this.#retryAt = 0;
  }

  /**
   * A wake-up during the exchange: kept, and handed back when it is over (takeWake) so the
   * owner decides whether the reply already brought what it announced.
   * @param {Wake} w
   */
  noteWake(w) {
    const prev = this.#wake;
    this.#wake = {
      headSeq: Math.max(prev?.headSeq ?? -Infinity, w.headSeq ?? Infinity),
      leaseSeq: w.leaseSeq ?? prev?.leaseSeq,
    };
  }

  takeWake() {
    const w = this.#wake;
    this.#wake = null;
    return w;
  }

  /**
   * One exchange now. Only one runs at a time; a call meanwhile asks for another run right
   * after. Resolves when this exchange (not a later one) is over.
   */
  async run() {
    if (!this.#o.active()) return;
    if (this.#inFlight) {
      this.#again = true;
      return;
    }
    this.#clearSend();
    this.#again = false;
    this.#inFlight = true;
    /** @type {number|null} ms until the retry; -1: none needed; null: stopped */
    let retryIn = -1;
    try {
      this.#lastSendAt = this.#o.now();
      const failure = await this.#o.exchange(this.#batchLimit);
      if (failure === null) {
        this.#backoffMs = 0;
        this.#retryAt = 0;
        this.#batchLimit = MAX_OPS_PER_SYNC;
      } else {
        // The retry pulls anyway.
        this.#wake = null;
        retryIn = this.#after(failure);
      }
    } finally {
      this.#inFlight = false;
    }
    if (!this.#o.active()) {
      if (retryIn === null) this.#o.settled();
      return;
    }
    if (retryIn !== null && retryIn >= 0) {
      this.#retryAt = this.#o.now() + retryIn;
      this.#arm(retryIn);
    } else if (this.#again || this.#o.hasWork()) {
      // Ops typed during the request, hasMore, or a lease asked for meanwhile: go again. The
      // throttle gathers keystrokes; a backlog bigger than one request has nothing to gather.
      const backlog = (this.#o.backlog?.() ?? 0) > this.#batchLimit;
      this.soon((this.#again && !this.#o.hasWork()) || backlog ? 0 : this.throttleDelay());
    }
    this.#armPeriodic(true);
    this.#o.settled();
  }

  /** The background period got shorter (leases taken, interval stage): bring the next sync forward. */
  tighten() {
    this.#armPeriodic(false);
  }

  /** Stops every timer (the owner closed or stopped). */
  clear() {
    this.#clearSend();
    if (this.#periodic) globalThis.clearTimeout(this.#periodic);
    this.#periodic = null;
    this.#periodicDue = Infinity;
  }

  /** @param {Failure} f @returns {number|null} */
  #after(f) {
    if (f === 'stop') return null;
    if (f === 'now') return 0;
    if (f === 'split') {
      this.#batchLimit = 1;
      return 0;
    }
    // 1 s, 2 s, 4 s … at most 30 s (PROTOCOL §7).
    this.#backoffMs = this.#backoffMs === 0 ? BACKOFF_FIRST_MS : Math.min(BACKOFF_MAX_MS, this.#backoffMs * 2);
    return this.#backoffMs;
  }

  /** @param {number} delay */
  #arm(delay) {
    const due = this.#o.now() + delay;
    if (this.#timer && this.#due <= due) return;
    if (this.#timer) globalThis.clearTimeout(this.#timer);
    this.#due = due;
    this.#timer = globalThis.setTimeout(() => {
      this.#timer = null;
      this.#due = Infinity;
      this.run();
    }, delay);
  }

  #clearSend() {
    if (this.#timer) globalThis.clearTimeout(this.#timer);
    this.#timer = null;
    this.#due = Infinity;
  }

  /** @param {boolean} restart after an exchange: one period from now; else only if sooner */
  #armPeriodic(restart) {
    if (!this.#o.active()) return;
    const delay = this.#o.period();
    const due = this.#o.now() + delay;
    if (!restart && this.#periodic && this.#periodicDue <= due) return;
    if (this.#periodic) globalThis.clearTimeout(this.#periodic);
    this.#periodicDue = due;
    this.#periodic = globalThis.setTimeout(() => {
      this.#periodic = null;
      this.#periodicDue = Infinity;
      // Through soon(), so a running backoff is respected.
      this.soon(0);
    }, delay);
  }
}
