// Our own lease claims (PROTOCOL §5, §7): which bullets this tab holds and until when, and
// the one timer that lets claims run out. Invariants: the focused bullet is held (Infinity)
// until 60 s without input; any other claim (a bullet left, a new or pasted one) ends as soon
// as nothing of ours on it waits for the server — its text is safe, so others may edit it at
// once — and at the latest 20 s after it was made or last typed in; the hold list sent is
// exactly the claims not yet ended. (PROTOCOL §7 keeps a left bullet 20 s; the server's own
// 20 s expiry is now only for a tab that vanished — a deviation, in ARCHITECTURE.md.)

import { TITLE_LEASE } from './model.js';

/** @typedef {import('./types.js').Op} Op */

export const LEASE_KEEP_MS = 20_000;
export const FOCUS_IDLE_MS = 60_000;
/** The server refuses a hold list longer than this (limits.max_hold): never send one. */
export const MAX_HOLD = 1_000;
/**
 * An edit that makes more bullets than this (a paste, an import) claims none of them beyond
 * these: they are new, nobody else is in them, and thousands of leases would only slow every
 * request (and break the server's hold limit).
 */
export const MAX_CLAIMS_PER_EDIT = 20;

export class LeaseHolds {
  /**
   * @param {() => number} now the engine's clock
   * @param {() => void} onRunOut called by the timer when claims ran out (the engine tells the server)
   * @param {() => boolean} running false once the engine is closed or stopped: no timer then
   * @param {() => Set<string>} [waiting] the bullets an op of ours on which still waits for the server
   */
  constructor(now, onRunOut, running, waiting = () => new Set(this.holds.keys())) {
    this.now = now;
    this.onRunOut = onRunOut;
    this.running = running;
    this.waiting = waiting;
    /** blockId (or 'title') → when our claim ends (Infinity: focused and in use). @type {Map<string, number>} */
    this.holds = new Map();
    /** @type {string|null} */
    this.focused = null;
    this.lastInput = 0;
    /** @type {ReturnType<typeof setTimeout>|null} */
    this.timer = null;
  }

  get size() {
    return this.holds.size;
  }

  /**
   * The focus moved: the bullet left keeps its claim until the server has what was typed in
   * it (at most 20 s), the new one is held.
   * @param {string|null} blockId @returns {boolean} a new claim to request at once
   */
  focus(blockId) {
    const now = this.now();
    if (this.focused && this.focused !== blockId && this.holds.has(this.focused)) {
      this.holds.set(this.focused, now + LEASE_KEEP_MS);
    }
    this.focused = blockId;
    this.lastInput = now;
    if (!blockId || this.holds.get(blockId) === Infinity) return false;
    this.holds.set(blockId, Infinity);
    return true;
  }

  /**
   * Typing and new bullets claim their blocks: the focused one for as long as it is used,
   * others (new bullets, a bullet typed in without focus) for 20 s.
   * @param {Op[]} ops @param {() => boolean} focusedIsEditable
   * @returns {boolean} a claim was added
   */
  noteInput(ops, focusedIsEditable) {
    const now = this.now();
    this.lastInput = now;
    let added = false;
    let claims = 0;
    for (const op of ops) {
      const id = op.kind === 'set_title' ? TITLE_LEASE : op.blockId;
      if (!id || op.kind === 'delete') continue;
      if (op.kind !== 'insert' && op.kind !== 'set_content' && op.kind !== 'set_title') continue;
      if (id === this.focused) {
        if (this.holds.get(id) !== Infinity) added = true;
        this.holds.set(id, Infinity);
      } else if (claims++ < MAX_CLAIMS_PER_EDIT) {
        if (!this.holds.has(id)) added = true;
        this.holds.set(id, Math.max(this.holds.get(id) ?? 0, now + LEASE_KEEP_MS));
      }
    }
    if (this.focused && this.holds.get(this.focused) !== Infinity && focusedIsEditable()) {
      // Input after the idle release: the focused bullet is wanted again.
      this.holds.set(this.focused, Infinity);
      added = true;
    }
    return added;
  }

  /** The claims not yet run out (after dropping those that did), at most MAX_HOLD: the focused one and the newest. @returns {string[]} */
  list() {
    this.prune();
    const ids = [...this.holds.keys()];
    if (ids.length <= MAX_HOLD) return ids;
    const newest = ids.filter((id) => id !== this.focused).slice(-(MAX_HOLD - 1));
    return this.focused && this.holds.has(this.focused) ? [this.focused, ...newest] : newest.slice(-MAX_HOLD);
  }

  /**
   * Drops claims that ran out or whose ops the server has, and the focused bullet after 60 s
   * without input. @returns {boolean} changed
   */
  prune() {
    const now = this.now();
    let changed = false;
    /** @type {Set<string>|null} asked once, only when a claim other than the focus exists */
    let waiting = null;
    for (const [id, until] of this.holds) {
      const idle = until === Infinity && now - this.lastInput >= FOCUS_IDLE_MS;
      const done = until !== Infinity && !(waiting ??= this.waiting()).has(id);
      if (until <= now || idle || done) {
        this.holds.delete(id);
        changed = true;
      }
    }
    return changed;
  }

  /** One timer for the next lease event (a 20 s claim ending, the 60 s idle release). */
  arm() {
    this.clear();
    if (!this.running()) return;
    let next = Infinity;
    for (const until of this.holds.values()) {
      next = Math.min(next, until === Infinity ? this.lastInput + FOCUS_IDLE_MS : until);
    }
    if (next === Infinity) return;
    this.timer = globalThis.setTimeout(() => {
      this.timer = null;
      if (this.prune()) this.onRunOut();
      this.arm();
    }, Math.max(0, next - this.now()));
  }

  clear() {
    if (this.timer) globalThis.clearTimeout(this.timer);
    this.timer = null;
  }
}
