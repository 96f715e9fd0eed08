// What the engine has to tell the person: the latest notice (a refused edit, a change the
// server did not take), counted so the same text twice is still news, and whether this
// device can keep what is typed. Invariant: a notice never replaces the text it is about —
// the caller keeps the text; this only says so.

/** @typedef {import('./types.js').EditResult} EditResult */
/** @typedef {import('./types.js').Lock} Lock */

export class Notices {
  constructor() {
    /** @type {string|null} */
    this.notice = null;
    /** Counts notices, so the same text twice in a row is still a new notice. */
    this.seq = 0;
    /** @type {string|null} */
    this.storageError = null;
  }

  /** A new notice (shown with the next state). @param {string} message */
  note(message) {
    this.notice = message;
    this.seq++;
  }

  /** IndexedDB failed: said until the page is reloaded. @param {unknown} e */
  storage(e) {
    const err = /** @type {any} */ (e);
    const name = err?.name ? `${err.name}: ` : '';
    this.storageError = `Could not save on this device (${name}${err?.message ?? String(e)})`;
  }

  /** A viewer tried to edit. @returns {EditResult} */
  viewer() {
    const message = 'You can only read this document.';
    this.note(message);
    return { ok: false, reason: 'viewer', message };
  }

  /** @param {string} message @returns {EditResult} */
  invalid(message) {
    this.note(message);
    return { ok: false, reason: 'invalid', message };
  }

  /** Someone else holds the bullet. @param {Lock} lock @returns {EditResult} */
  locked(lock) {
    const message = `${lock.name} is editing this bullet right now.`;
    this.note(message);
    return { ok: false, reason: 'locked', blockId: lock.blockId, heldBy: lock.name, message };
  }
}
