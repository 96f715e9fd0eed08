// Which bullets this person has folded in this document, on this device: a view setting, not
// part of the document (PROTOCOL deviation, ARCHITECTURE.md). A bullet's own `collapsed` in
// the document is only the default for someone who never folded it here. Owns the overrides
// and their copy in `localStorage` (one key per user and document).
// Invariants: once this person folds or unfolds a bullet, that choice stays (also when it
// equals the document's default, which may change later); a change that changes nothing is
// not written; unusable storage only means the folds last as long as the page.

/** @typedef {import('./journal.js').StorageLike} StorageLike */

const PREFIX = 'docsync:folds:';
/** Past this many overrides the oldest are dropped (a document of 100,000 bullets folded one by one). */
const MAX_FOLDS = 50_000;

export class Folds {
  /** @type {Map<string, boolean>} */
  #map = new Map();
  /** @type {StorageLike|null} */
  #storage;
  #key;

  /** @param {StorageLike|null} storage @param {string} docId @param {string} userId */
  constructor(storage, docId, userId) {
    this.#storage = storage;
    this.#key = `${PREFIX}${userId}:${docId}`;
    try {
      const text = storage?.getItem(this.#key);
      const saved = text ? JSON.parse(text) : null;
      if (saved && typeof saved === 'object') {
        for (const [id, v] of Object.entries(saved)) if (typeof v === 'boolean') this.#map.set(id, v);
      }
    } catch {
      // unreadable: no folds of this person yet
    }
  }

  get size() {
    return this.#map.size;
  }

  /** This person's fold of a bullet; undefined: the document's default. @param {string} id */
  get(id) {
    return this.#map.get(id);
  }

  /**
   * Folds or unfolds bullets; returns the IDs whose fold changed.
   * @param {Iterable<[string, boolean]>} changes @param {(id: string) => boolean} current what is shown now
   * @returns {string[]}
   */
  set(changes, current) {
    /** @type {string[]} */
    const changed = [];
    let dirty = false;
    for (const [id, collapsed] of changes) {
      const before = current(id);
      if (before === collapsed && this.#map.get(id) === collapsed) continue;
      this.#map.delete(id); // re-inserted last: the newest survive the cap
      this.#map.set(id, collapsed);
      dirty = true;
      if (before !== collapsed) changed.push(id);
    }
    while (this.#map.size > MAX_FOLDS) this.#map.delete(/** @type {string} */ (this.#map.keys().next().value));
    if (dirty) this.#write();
    return changed;
  }

  #write() {
    try {
      this.#storage?.setItem(this.#key, JSON.stringify(Object.fromEntries(this.#map)));
    } catch {
      // full or unusable: the folds last while the page does
    }
  }
}
