// Everything around the outline: the bar (breadcrumbs, presence, badges, share, the editor's
// menu), the title, the empty-document hint, "+ Add a bullet", and the footer with the notice
// and the status line. It draws an EngineState and says nothing back except through the
// callbacks it was given; the outline itself belongs to the OutlineView.
//
// Invariants: the status line says "All changes saved" only when the server acknowledged
// everything; an error notice (access lost, storage trouble, signed out) stays until its
// cause is gone; the engine's notices are shown once per `noticeSeq`.

import { make } from './row-view.js';
import { shownText } from './markdown.js';
import { menuButton } from '../ui/menu.js';
import { whenIdle } from '../ui/dom.js';

/** @typedef {import('../../engine/types.js').EngineState} EngineState */
/** @typedef {import('../../engine/types.js').Row} Row */
/** @typedef {import('../ui/menu.js').MenuItem} MenuItem */

/** @param {number} n @param {string} one @param {string} many */
export const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

/** @param {string} name */
export function initials(name) {
  const parts = name.trim().split(/\s+/).filter(Boolean);
  const s = parts.length > 1 ? parts[0][0] + parts[parts.length - 1][0] : (parts[0] ?? '?').slice(0, 1);
  return s.toUpperCase();
}

/** A stable colour per name. @param {string} s */
export function hue(s) {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) % 360;
  return h;
}

/**
 * The footer's pending-changes text, in three steps: typed but not yet committed to IndexedDB
 * ("Saving"), on this device but not acknowledged, and acknowledged ("All changes saved").
 * @param {Pick<EngineState, 'error'|'pending'|'unsaved'>} s
 */
export function pendingText(s) {
  if (s.error) return `${plural(s.pending, 'change', 'changes')} kept on this device`;
  if (s.unsaved > 0) return `Saving ${plural(s.pending + s.unsaved, 'change', 'changes')}…`;
  if (s.pending === 0) return 'All changes saved';
  return `${plural(s.pending, 'change', 'changes')} saved on this device`;
}

/** A message line that clears itself after a while unless it is sticky. */
class Notice {
  #timer = 0;
  /** @param {HTMLElement} el */
  constructor(el) {
    this.el = el;
  }
  get text() {
    return this.el.textContent ?? '';
  }
  get sticky() {
    return this.el.classList.contains('is-sticky');
  }
  /** @param {string|null} msg @param {{sticky?: boolean}} [o] */
  show(msg, o = {}) {
    clearTimeout(this.#timer);
    this.el.textContent = msg ?? '';
    this.el.classList.toggle('is-sticky', !!o.sticky);
    if (msg && !o.sticky) {
      this.#timer = setTimeout(() => {
        if (!this.sticky) this.el.textContent = '';
      }, 8000);
    }
  }
  stop() {
    clearTimeout(this.#timer);
  }
}

/**
 * @typedef {{
 *   docId: string,
 *   userId?: string,
 *   onShare: () => void,
 *   onZoom: (id: string|null) => void,
 *   onConflicts: () => void,
 *   menu: MenuItem[],
 * }} ChromeOptions
 */

/** Up to this many rows the conflict badge is counted at once, above it when idle. */
const COUNT_AT_ONCE = 5000;

export class EditorChrome {
  #lastEngineNotice = 0;
  /** @type {string|null} */
  #lastTitle = null;
  #crumbsKey = '';

  /** @param {Document} doc @param {ChromeOptions} opts */
  constructor(doc, opts) {
    this.doc = doc;
    this.opts = opts;
    /**
     * @template {keyof HTMLElementTagNameMap} K
     * @param {K} tag @param {string} [cls] @param {string} [text]
     */
    const m = (tag, cls, text) => make(doc, tag, cls, text);
    this.editor = m('div', 'ed');
    this.editor.id = 'editor';
    this.editor.dataset.docId = opts.docId;
    const bar = m('div', 'ed-bar');
    this.presence = m('div', 'ed-presence');
    this.presence.id = 'presence';
    this.presence.setAttribute('aria-label', 'Who else is here');
    this.viewOnly = m('span', 'ed-badge', 'View only');
    this.viewOnly.hidden = true;
    this.share = m('button', 'ed-share', 'Share');
    this.share.id = 'share-button';
    this.share.type = 'button';
    this.share.hidden = true;
    this.share.addEventListener('click', () => opts.onShare());
    // Open conflict copies of this document: a count that opens the review.
    this.conflicts = m('button', 'ed-badge ed-conflicts');
    this.conflicts.id = 'conflicts-badge';
    this.conflicts.type = 'button';
    this.conflicts.hidden = true;
    this.conflicts.addEventListener('click', () => opts.onConflicts());
    const menu = menuButton({ label: 'Document menu', items: opts.menu, className: 'ed-menu' });
    menu.id = 'editor-menu';
    bar.append(this.presence, this.conflicts, this.viewOnly, this.share, menu);
    this.crumbs = m('nav', 'ed-crumbs');
    this.crumbs.id = 'breadcrumbs';
    this.crumbs.setAttribute('aria-label', 'Zoomed into');
    this.crumbs.hidden = true;
    this.title = m('h1', 'ed-title');
    this.title.id = 'doc-title';
    this.title.setAttribute('aria-label', 'Document title');
    this.title.dataset.placeholder = 'Untitled';
    this.title.spellcheck = true;
    this.zoomTitle = m('h1', 'ed-title ed-zoom-title');
    this.zoomTitle.id = 'zoom-title';
    this.zoomTitle.hidden = true;
    this.outline = m('div', 'ed-outline');
    this.outline.id = 'outline';
    this.outline.setAttribute('role', 'tree');
    this.outline.setAttribute('aria-label', 'Outline');
    this.outline.setAttribute('aria-multiselectable', 'true');
    this.empty = m('p', 'ed-empty', 'Loading…');
    this.add = m('button', 'ed-add', '+ Add a bullet');
    this.add.type = 'button';
    this.add.hidden = true;
    this.dropLine = m('div', 'ed-drop');
    this.dropLine.hidden = true;
    this.foot = m('footer', 'ed-foot');
    const noticeEl = m('div', 'ed-notice');
    noticeEl.id = 'notice';
    noticeEl.setAttribute('role', 'status');
    noticeEl.setAttribute('aria-live', 'polite');
    this.notice = new Notice(noticeEl);
    this.status = m('div', 'ed-status');
    this.status.id = 'status';
    this.stage = m('span', 'ed-stage');
    this.stage.id = 'status-stage';
    this.pending = m('span', 'ed-pending');
    this.pending.id = 'status-pending';
    this.sep = m('span', 'ed-sep', '·');
    this.status.append(this.stage, this.sep, this.pending);
    this.foot.append(noticeEl, this.status);
    this.main = m('div', 'ed-main');
    this.main.append(bar, this.crumbs, this.title, this.zoomTitle, this.outline, this.empty, this.add, this.dropLine);
    this.editor.append(this.main, this.foot);
    this.crumbs.addEventListener('click', (e) => {
      const a = /** @type {Element} */ (e.target).closest('a[data-zoom]');
      const me = /** @type {MouseEvent} */ (e);
      if (!a || me.ctrlKey || me.metaKey || me.shiftKey) return;
      e.preventDefault();
      opts.onZoom(/** @type {HTMLElement} */ (a).dataset.zoom || null);
    });
  }

  /** @param {string|null} msg @param {{sticky?: boolean}} [o] */
  showNotice(msg, o) {
    this.notice.show(msg, o);
  }

  /** @type {import('../../engine/types.js').Row[]|null} the rows the badge was counted from, or is to be */
  #conflictRows = null;
  #conflictCountDue = false;

  /**
   * The count of open conflict copies (live, unresolved), hidden when there are none: a
   * walk over every row, so in a big document it waits for an idle moment instead of
   * slowing the keystroke or the Enter that changed the rows.
   * @param {EngineState} s
   */
  #renderConflicts(s) {
    if (s.rows === this.#conflictRows) return;
    this.#conflictRows = s.rows;
    if (s.rows.length < COUNT_AT_ONCE) {
      this.#showConflicts(s.rows);
      return;
    }
    if (this.#conflictCountDue) return;
    this.#conflictCountDue = true;
    whenIdle(this.conflicts.ownerDocument.defaultView, () => {
      this.#conflictCountDue = false;
      if (this.#conflictRows) this.#showConflicts(this.#conflictRows);
    }, 300);
  }

  /** @param {import('../../engine/types.js').Row[]} rows */
  #showConflicts(rows) {
    let n = 0;
    for (const r of rows) if (r.conflictOf && !r.conflictResolved) n++;
    const text = n ? plural(n, 'conflict', 'conflicts') : '';
    if (this.conflicts.textContent !== text) {
      this.conflicts.textContent = text;
      this.conflicts.setAttribute('aria-label', n ? `${text} to review` : '');
      this.conflicts.title = 'Review conflicts';
    }
    this.conflicts.hidden = n === 0;
  }

  /**
   * @param {EngineState} s
   * @param {{readOnly: boolean, zoomPath: Row[]|null, zoomFound: boolean, signedOut: boolean, early?: boolean}} how
   *   `zoomPath`: the zoomed bullet and its ancestors, outermost first (null: not zoomed);
   *   `early`: the first screen kept on this device, drawn before the document is in — nothing
   *   is known yet of who is here or what is saved
   * @returns {boolean} the title changed (for the recent-documents list)
   */
  render(s, how) {
    const ro = how.readOnly;
    const e = this.editor;
    if (e.classList.contains('is-readonly') !== ro) e.classList.toggle('is-readonly', ro);
    this.viewOnly.hidden = s.role !== 'viewer';
    // Everyone who can open it may see who has access; only the owner changes it.
    // A bullet guest sees nothing of the document's sharing.
    this.share.hidden = s.role == null || s.bulletGuest;
    const shareLabel = s.role === 'owner' ? 'Share' : 'Who has access';
    if (this.share.textContent !== shareLabel) this.share.textContent = shareLabel;
    this.#renderConflicts(s);
    let titleChanged = false;
    const title = this.title;
    if (s.loaded && s.title !== this.#lastTitle) {
      this.#lastTitle = s.title;
      titleChanged = true;
      if (this.doc.activeElement !== title || (title.textContent ?? '') === '') {
        if ((title.textContent ?? '') !== s.title) title.textContent = s.title;
      }
      this.doc.title = `${s.title || 'Untitled'} · docsync`;
    }
    // A bullet guest's title is their shared bullet's text: not theirs to rename.
    const titleRo = ro || s.bulletGuest;
    if (!titleRo && !title.hasAttribute('contenteditable')) title.setAttribute('contenteditable', 'plaintext-only');
    else if (titleRo && title.hasAttribute('contenteditable')) title.removeAttribute('contenteditable');
    this.#renderZoom(s, how.zoomPath);
    this.#renderStatus(s, how.signedOut, !!how.early);
    this.#renderNotices(s, how.signedOut);
    this.#renderPresence(s, !!how.early);
    const zoomed = how.zoomPath != null;
    const shownEmpty = zoomed ? !how.zoomPath?.[how.zoomPath.length - 1]?.hasChildren : s.rows.length === 0;
    this.empty.hidden = s.loaded && !shownEmpty && how.zoomFound;
    const emptyText = !s.loaded
      ? s.stage === 'offline'
        ? 'This document has not been opened on this device yet — it will appear when you are back online.'
        : 'Loading…'
      : !how.zoomFound
        ? 'That bullet no longer exists (it was deleted, or the link is wrong).'
        : !ro
          ? zoomed
            ? 'No bullets inside this one yet. Click here to add one.'
            : 'Empty document. Click here or press Enter in the title to start.'
          : zoomed
            ? 'No bullets inside this one.'
            : 'This document is empty.';
    if (this.empty.textContent !== emptyText) this.empty.textContent = emptyText;
    this.add.hidden = !s.loaded || ro || shownEmpty || !how.zoomFound;
    return titleChanged;
  }

  /** The labels drawn from bullets' text (breadcrumbs, the zoomed bullet's heading) are drawn again at the next render: the titles their links show changed. */
  relabel() {
    this.#crumbsKey = '';
  }

  /** @param {EngineState} s @param {Row[]|null} path */
  #renderZoom(s, path) {
    const zoomed = path != null && path.length > 0;
    this.crumbs.hidden = path == null;
    this.title.hidden = path != null;
    this.zoomTitle.hidden = !zoomed;
    const key = path == null ? '' : `${s.title}\u0000${path.map((r) => `${r.id}\u0001${r.content}`).join('\u0000')}`;
    if (key === this.#crumbsKey) return;
    this.#crumbsKey = key;
    this.crumbs.textContent = '';
    if (path == null) return;
    /** @param {string|null} id @param {string} label */
    const crumb = (id, label) => {
      const a = make(this.doc, 'a', 'ed-crumb', label);
      a.href = id ? `/d/${encodeURIComponent(this.opts.docId)}/b/${encodeURIComponent(id)}` : `/d/${encodeURIComponent(this.opts.docId)}`;
      a.dataset.zoom = id ?? '';
      return a;
    };
    this.crumbs.append(crumb(null, s.title || 'Untitled'));
    for (const r of path.slice(0, -1)) {
      this.crumbs.append(make(this.doc, 'span', 'ed-crumb-sep', '›'), crumb(r.id, shortText(r.content)));
    }
    const last = path[path.length - 1];
    if (last) this.zoomTitle.textContent = shownText(last.content).trim() || 'Untitled bullet';
  }

  /** @param {EngineState} s @param {boolean} signedOut @param {boolean} early */
  #renderStatus(s, signedOut, early) {
    // sending stopped: never "Live" beside text that no longer reaches anyone
    const noAccess = !!s.error && (s.error.status === 403 || s.error.status === 404);
    const label = signedOut ? 'Signed out' : noAccess ? 'No access' : s.stageLabel;
    const stage = signedOut || noAccess ? 'offline' : s.stage;
    if (this.stage.textContent !== label) this.stage.textContent = label;
    if (this.status.dataset.stage !== stage) this.status.dataset.stage = stage;
    const p = early ? '' : pendingText(s);
    if (this.pending.textContent !== p) this.pending.textContent = p;
    if (this.sep.hidden !== early) this.sep.hidden = early;
  }

  /** @param {EngineState} s @param {boolean} signedOut */
  #renderNotices(s, signedOut) {
    const n = this.notice;
    // access lost beats everything, then storage trouble, then the engine's notice
    if (signedOut) {
      // the page shows its own sign-in prompt; the notice line stays quiet
    } else if (s.error && (s.error.status === 403 || s.error.status === 404)) {
      const msg = `You no longer have access — your ${plural(s.pending, 'unsent change is', 'unsent changes are')} kept on this device`;
      if (n.text !== msg) n.show(msg, { sticky: true });
    } else if (s.error) {
      if (n.text !== s.error.message) n.show(s.error.message, { sticky: true });
    } else if (s.storageError) {
      if (n.text !== s.storageError) n.show(s.storageError, { sticky: true });
    } else if (n.sticky) n.show(null);
    // noticeSeq, not the text: the same refusal twice in a row is shown twice.
    if (s.noticeSeq !== this.#lastEngineNotice) {
      this.#lastEngineNotice = s.noticeSeq;
      if (s.notice && !s.error) n.show(s.notice);
    }
  }

  /**
   * Who else is here, by person (a colleague with three tabs is one avatar): the server's
   * list of people, plus anyone whose lock names them; our own other tabs are said as such
   * and never count as someone else. Without a list (an older server): the session count.
   * @param {EngineState} s @param {boolean} early (drawn empty)
   */
  #renderPresence(s, early) {
    if (early) {
      this.presence.dataset.key = '';
      this.presence.textContent = '';
      return;
    }
    const me = this.opts.userId ?? '';
    const people = s.people ?? [];
    /** @type {Map<string, string>} userId → name */
    const others = new Map();
    for (const p of people) if (p.userId !== me) others.set(p.userId, p.name);
    for (const l of s.locks.values()) if (l.userId !== me && !others.get(l.userId)) others.set(l.userId, l.name);
    const myTabs = people.find((p) => p.userId === me)?.sessions ?? 0;
    const unnamed = people.length ? 0 : Math.max(0, (s.sessions || 0) - 1 - others.size);
    const names = [...others.values()].map((n) => n || 'Someone');
    const key = `${names.join('\u0000')}|${unnamed}|${myTabs > 1}`;
    const p = this.presence;
    if (p.dataset.key === key) return;
    p.dataset.key = key;
    p.textContent = '';
    const ownTabs = myTabs > 1 ? ` · also open in ${plural(myTabs - 1, 'other tab', 'other tabs')} of yours` : '';
    if (names.length === 0 && unnamed === 0) {
      p.append(make(this.doc, 'span', 'ed-presence-text', `Only you${ownTabs}`));
      return;
    }
    for (const n of names.slice(0, 4)) {
      const a = make(this.doc, 'span', 'ed-avatar', initials(n));
      a.title = n;
      a.style.setProperty('--hue', String(hue(n)));
      p.append(a);
    }
    const count = names.length + unnamed;
    const shown = names.slice(0, 2);
    const label = shown.length
      ? `${shown.join(', ')}${count > shown.length ? ` +${count - shown.length}` : ''}`
      : plural(count, 'other person', 'others');
    p.append(make(this.doc, 'span', 'ed-presence-text', `${label} here${ownTabs}`));
  }

  destroy() {
    this.notice.stop();
    this.editor.remove();
  }
}

/** A bullet's text as shown, shortened for a breadcrumb. @param {string} s */
function shortText(s) {
  const one = shownText(s).replace(/\s+/g, ' ').trim() || 'Untitled bullet';
  return one.length > 40 ? `${one.slice(0, 39)}…` : one;
}
