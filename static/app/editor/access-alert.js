// The banner over the outline when the document can no longer be saved from here: signed out
// (401: what is typed waits on this device for "Log in again") or no access any more (403/404:
// this device's copy stays readable, and its text can be taken along as a new document or
// copied). Owns its element and which banner is up; redraws only when that changes.

import { fromMarkdown, toMarkdown } from './outline-io.js';
import { handOver } from './pending-import.js';

/** @typedef {import('../../engine/types.js').EngineState} EngineState */
/** @typedef {import('../../engine/types.js').Row} Row */

/**
 * @typedef {object} AccessAlertDeps
 * @property {import('../api.js').Api} api
 * @property {() => Row[]} rows
 * @property {() => string} title
 * @property {(url: string) => void} navigate
 * @property {() => void} copyAsText
 * @property {(text: string) => void} notice
 */

export class AccessAlert {
  /** @type {AccessAlertDeps} */
  #o;
  /** Which banner is up ('' none, 'signedout', 'lost:<pending>'). */
  #key = '';

  /** @param {Document} doc @param {AccessAlertDeps} o */
  constructor(doc, o) {
    this.#o = o;
    this.el = doc.createElement('div');
    this.el.className = 'ed-alert';
    this.el.id = 'editor-alert';
    this.el.setAttribute('role', 'alert');
    this.el.hidden = true;
  }

  /** @param {EngineState} s */
  render(s) {
    const status = s.error?.status ?? 0;
    const key = status === 401 ? 'signedout' : (status === 403 || status === 404) && s.rows.length ? `lost:${s.pending}` : '';
    if (key === this.#key) return;
    this.#key = key;
    const el = this.el;
    el.textContent = '';
    el.hidden = !key;
    if (!key) return;
    const p = el.ownerDocument.createElement('p');
    const actions = el.ownerDocument.createElement('div');
    actions.className = 'ed-alert-actions';
    /** @param {string} label @param {() => void} fn @param {string} id */
    const button = (label, fn, id) => {
      const b = el.ownerDocument.createElement('button');
      b.type = 'button';
      b.className = 'btn';
      b.id = id;
      b.textContent = label;
      b.addEventListener('click', fn);
      actions.append(b);
      return b;
    };
    const changes = `${s.pending} unsent ${s.pending === 1 ? 'change is' : 'changes are'}`;
    if (status === 401) {
      p.textContent = `You were signed out. ${s.pending ? `Your ${changes} kept on this device and sent when you log in again.` : 'Nothing is lost.'}`;
      button('Log in again', () => {
        const next = location.pathname + location.search + location.hash;
        location.assign(`/login?next=${encodeURIComponent(next)}`);
      }, 'login-again').classList.add('btn-primary');
    } else {
      if (s.bulletGuest) {
        const kept = s.pending ? ` Your ${changes} kept on this device and sent if it is shared with you again.` : '';
        p.textContent = `The bullet shared with you is no longer available to you: its share ended, or it or its document was deleted.${kept} What you see here is this device\u2019s copy — you can also take your text with you:`;
      } else {
        const kept = s.pending ? ` Your ${changes} kept on this device and sent if the document comes back (its owner can restore it from the Trash).` : '';
        p.textContent = `This document is no longer available to you: it was deleted, or your access ended.${kept} What you see here is this device\u2019s copy — you can also take your text with you:`;
      }
      button('Save my text as a new document', () => void this.#rescue(), 'rescue-new-doc').classList.add('btn-primary');
      button('Copy as text', () => this.#o.copyAsText(), 'rescue-copy');
      // Opening it again asks the server afresh; the queue on this device goes out if it can.
      button('Try again', () => location.reload(), 'rescue-retry');
    }
    el.prepend(p);
    el.append(actions);
  }

  /** This device's copy as a new document of the person's own (handed over to its page). */
  async #rescue() {
    const o = this.#o;
    const items = fromMarkdown(toMarkdown(o.rows())).items;
    try {
      const doc = await o.api.post('/docs', { title: `${o.title() || 'Untitled'} (my copy)` });
      const id = doc?.docId ?? doc?.id;
      if (!id) throw new Error('the server did not name the new document');
      handOver(id, { title: null, items });
      o.navigate(`/d/${encodeURIComponent(id)}`);
    } catch (e) {
      o.notice(`The new document could not be made: ${e instanceof Error ? e.message : String(e)}. Use “Copy as text”.`);
    }
  }
}
