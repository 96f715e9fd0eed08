// Text typed into a bullet is painted by the browser at once and handed to the engine after
// the frame (one commit per frame however fast the keys come). This owns that one pending
// field; everything that reads the engine's rows flushes it first.
//
// Invariant: at most one field is pending; `flush()` hands it over exactly once.

/** @typedef {import('./row-view.js').RowView} RowView */

export class TypingBuffer {
  /** @type {RowView|null} */
  #view = null;
  #raf = 0;
  #timer = 0;

  /**
   * @param {(v: RowView) => void} handOver gives the field's text to the engine
   * @param {{raf?: (cb: () => void) => number, cancelRaf?: (id: number) => void}} [clock]
   */
  constructor(handOver, clock = {}) {
    this.handOver = handOver;
    this.raf = clock.raf ?? ((cb) => requestAnimationFrame(cb));
    this.cancelRaf = clock.cancelRaf ?? ((id) => cancelAnimationFrame(id));
  }

  /** The field holds text the engine has not been given. @param {string} id */
  holds(id) {
    return this.#view?.row?.id === id;
  }

  /** A field was typed in: hand it over after the next frame. @param {RowView} v */
  note(v) {
    if (this.#view && this.#view !== v) this.flush();
    this.#view = v;
    if (!this.#raf) {
      this.#raf = this.raf(() => {
        this.#timer = setTimeout(() => this.flush(), 0);
      });
    }
  }

  /** Hands the pending field over now (if any). */
  flush() {
    if (this.#raf) this.cancelRaf(this.#raf);
    clearTimeout(this.#timer);
    this.#raf = 0;
    this.#timer = 0;
    const v = this.#view;
    this.#view = null;
    if (v && v.text.isConnected && v.row) this.handOver(v);
  }
}
