// The bullet a link points at (`#blk_…`, `/b/…` routes, a conflict to review): shown once it
// exists here — its collapsed ancestors opened, scrolled to, flashed. Owns which bullet waits
// to be revealed; a bullet that does not exist is said once, after the server has answered
// (this device's copy alone may be behind).

import { ancestorIndices, indexOfId } from './outline-ops.js';

/** @typedef {import('../../engine/types.js').EngineState} EngineState */
/** @typedef {import('../../engine/types.js').FlatRow} FlatRow */

/**
 * @typedef {object} RevealDeps
 * @property {() => EngineState|null} state
 * @property {(ids: string[]) => void} unfold opens these bullets for this person
 * @property {(id: string) => {el: HTMLElement}|null} scrollTo
 * @property {(text: string) => void} notice
 */

export class BulletReveal {
  /** @type {RevealDeps} */
  #o;
  /** @type {string|null} */
  #wanted;
  /** @type {string|null} */
  #missingSaid = null;

  /** @param {string|null} wanted @param {RevealDeps} o */
  constructor(wanted, o) {
    this.#wanted = wanted;
    this.#o = o;
  }

  /** @param {string|null} id */
  want(id) {
    this.#wanted = id;
    this.run();
  }

  /** Reveals the wanted bullet if it can be shown now. */
  run() {
    const id = this.#wanted;
    const s = this.#o.state();
    if (!id || !id.startsWith('blk_') || !s?.loaded) return;
    const all = /** @type {FlatRow[]} */ (s.rows);
    const i = indexOfId(all, id);
    if (i < 0) {
      if (s.synced && this.#missingSaid !== id) {
        this.#missingSaid = id;
        this.#wanted = null;
        this.#o.notice('That bullet no longer exists (it was deleted, or the link is wrong).');
      }
      return;
    }
    this.#wanted = null;
    // Folded ancestors open for this person (a view setting: also for a viewer).
    const hiddenBy = ancestorIndices(all, i).filter((k) => all[k].collapsed);
    if (hiddenBy.length) this.#o.unfold(hiddenBy.map((k) => all[k].id));
    const v = this.#o.scrollTo(id);
    if (!v) return;
    v.el.classList.remove('is-target');
    void v.el.offsetWidth;
    v.el.classList.add('is-target');
    setTimeout(() => v.el.classList.remove('is-target'), 2600);
  }
}
