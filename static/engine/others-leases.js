// Others' leases as this tab knows them (PROTOCOL §2.1 rule 6, §7 "Leases"): which bullets
// someone else holds, by whom, and until when. Invariants: the server's list replaces ours
// whenever a reply or snapshot brings one; between replies — offline above all — a lease ends
// here when its `expiresInMs` has passed (the holder would have had to renew it with the
// server we cannot reach), so a colleague's lease does not block a bullet for as long as we
// stay offline. Own leases (our clientId, and those of our own other tabs and devices) are
// never listed.

/** @typedef {import('./types.js').Lock} Lock */
/** @typedef {import('./types.js').LeaseOfOther} LeaseOfOther */

export class OthersLeases {
  /** @type {Map<string, Lock>} blockId → who holds it */
  #locks = new Map();
  /** @type {Map<string, number>} blockId → when it ends here (ms, the engine's clock) */
  #until = new Map();
  /** @type {ReturnType<typeof setTimeout>|null} */
  #timer = null;
  /** @type {() => number} */
  #now;
  /** @type {() => void} */
  #onExpired;

  /**
   * @param {() => number} now the engine's clock
   * @param {() => void} onExpired some leases ended here (the view must be rebuilt)
   */
  constructor(now, onExpired) {
    this.#now = now;
    this.#onExpired = onExpired;
  }

  /** Who holds what now (read it; it changes only through this class). */
  get map() {
    return this.#locks;
  }

  /**
   * The server's list; true when who holds what changed (the view must be rebuilt: a lock
   * can turn a queued edit into a conflict copy).
   * Our own other tabs and devices are not others: the server lets the tab in use take a
   * bullet over from them, so they never lock us out.
   * @param {LeaseOfOther[]} others @param {string} ownClientId @param {string} [ownUserId]
   */
  set(others, ownClientId, ownUserId) {
    /** @type {Map<string, Lock>} */
    const next = new Map();
    this.#until = new Map();
    const now = this.#now();
    for (const o of others) {
      if (o.clientId === ownClientId || (ownUserId && o.userId === ownUserId)) continue;
      next.set(o.blockId, { blockId: o.blockId, userId: o.userId, name: o.name });
      this.#until.set(o.blockId, now + Math.max(0, o.expiresInMs ?? 0));
    }
    const changed = !same(this.#locks, next);
    if (changed) this.#locks = next;
    this.#arm();
    return changed;
  }

  /** None any more (private mode, stopped). */
  clear() {
    this.#locks = new Map();
    this.#until = new Map();
    this.#arm();
  }

  #arm() {
    if (this.#timer) globalThis.clearTimeout(this.#timer);
    this.#timer = null;
    if (this.#until.size === 0) return;
    const next = Math.min(...this.#until.values());
    this.#timer = globalThis.setTimeout(() => this.#expire(), Math.max(0, next - this.#now()));
  }

  #expire() {
    this.#timer = null;
    const now = this.#now();
    // A new map, never the old one changed in place: the UI compares states by reference,
    // and a map it already holds that changed under it would never be drawn again.
    const next = new Map(this.#locks);
    for (const [id, until] of this.#until) {
      if (until > now) continue;
      this.#until.delete(id);
      next.delete(id);
    }
    this.#arm();
    if (next.size === this.#locks.size) return;
    this.#locks = next;
    this.#onExpired();
  }
}

/** @param {Map<string, Lock>} a @param {Map<string, Lock>} b */
function same(a, b) {
  if (a.size !== b.size) return false;
  for (const [k, v] of a) {
    const w = b.get(k);
    if (!w || w.userId !== v.userId || w.name !== v.name) return false;
  }
  return true;
}
