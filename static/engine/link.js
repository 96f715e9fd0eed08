// How this tab is connected to the server: the wake-up ladder (transport.js: WebSocket →
// SSE → long-poll → interval) while the document is shared, whether the browser is online,
// whether the last request reached the server, and the stage the status line shows.
// Invariants: at most one ladder runs; it always knows the newest cursor (lastSeq,
// leaseSeq); an offline browser or a failed request shows as offline whatever the ladder says.

/** @typedef {import('./types.js').Stage} Stage */
/** @typedef {import('./types.js').Mode} Mode */
/** @typedef {import('./transport.js').LadderOptions} LadderOptions */

/**
 * What the engine needs of a wake-up ladder (WakeLadder, or a test/simulation stand-in).
 * @typedef {{start(): void, stop(): void, setOnline(b: boolean): void,
 *   noteCursor(headSeq: number, leaseSeq: number): void, stage: Stage, trying: Stage}} LadderLike
 */

export class Link {
  /** @param {(() => LadderLike | null) | null} makeLadder null: no wake-ups (3 s polling) */
  constructor(makeLadder) {
    this.makeLadder = makeLadder;
    /** @type {LadderLike|null} */
    this.ladder = null;
    this.browserOffline = false;
    /** The last request failed with a network error. */
    this.netDown = false;
    /** An exchange with the server has succeeded since opening. */
    this.synced = false;
  }

  /** Wake-ups are possible at all (a transport was given). */
  get hasTransport() {
    return this.makeLadder !== null;
  }

  /** Starts the ladder (if none runs) at the cursor. @param {number} lastSeq @param {number} leaseSeq */
  start(lastSeq, leaseSeq) {
    if (this.ladder || !this.makeLadder) return;
    this.ladder = this.makeLadder();
    if (!this.ladder) return;
    this.ladder.noteCursor(lastSeq, Math.max(0, leaseSeq));
    if (this.browserOffline) this.ladder.setOnline(false);
    this.ladder.start();
  }

  stop() {
    this.ladder?.stop();
    this.ladder = null;
  }

  /** @param {number} lastSeq @param {number} leaseSeq */
  noteCursor(lastSeq, leaseSeq) {
    this.ladder?.noteCursor(lastSeq, Math.max(0, leaseSeq));
  }

  /** @param {boolean} online */
  setOnline(online) {
    this.browserOffline = !online;
    this.ladder?.setOnline(online);
  }

  /** A request reached the server (its answer may still be a refusal). */
  reached() {
    this.netDown = false;
  }

  /** An exchange succeeded. */
  exchanged() {
    this.netDown = false;
    this.synced = true;
  }

  /** A request found no server. */
  lost() {
    this.netDown = true;
  }

  /** Only the interval is left (no transport, or the ladder fell to its last rung). */
  get polling() {
    return !this.hasTransport || this.ladder?.trying === 'interval';
  }

  /** @param {Mode} mode @returns {Stage} */
  stage(mode) {
    if (this.browserOffline || this.netDown) return 'offline';
    // Private mode runs no wake-up channel; its health is that of its syncs.
    if (mode === 'private') return this.synced ? 'live' : 'connecting';
    if (!this.hasTransport) return 'interval';
    return this.ladder ? this.ladder.stage : 'connecting';
  }
}
