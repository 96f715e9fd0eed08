// The outline editor page: mountEditor(root, {docId, me, clientId, api, openShareDialog}).
//
// One direction of data: the engine owns the document; `render(state)` draws an EngineState;
// input handlers never touch rows themselves — they build the next flat list with the pure
// helpers of outline-ops.js and hand it to `engine.commitRows`, whose new state comes back
// through `render`. The DOM is keyed by block id and only rows whose Row object (or lock,
// or editability) changed are touched; the row being typed in is left alone unless its text
// really differs from the engine's (an undo, say), so the caret never jumps.
//
// Every bullet is a `contenteditable="plaintext-only"` line rather than a textarea: it wraps
// and grows with its text with no measuring, shows rendered markdown and raw text in the same
// box (no swap of elements, so focus and layout stay put), and the browser never inserts
// markup on paste or typing. The caret is handled through the Selection API (caret.js).

import { DocSyncEngine } from '../../engine/engine.js';
import { openStore } from '../../engine/store.js';
import { commandFor } from './keys.js';
import { fillInline, parseInline, renderedToRaw } from './markdown.js';
import {
  ancestorIndices,
  detectShortcut,
  dropRow,
  indent,
  indexOfId,
  mergeBackward,
  mergeForward,
  moveDown,
  moveUp,
  outdent,
  pasteText,
  setCollapsed,
  setContent,
  setProps,
  splitRow,
  toggleTodo,
  visibleRows,
  withProps,
} from './outline-ops.js';
import { caretLine, getSelectionOffsets, offsetAtPoint, placeCaretAtX, setSelectionOffsets } from './caret.js';

/** @typedef {import('../../engine/types.js').EngineState} EngineState */
/** @typedef {import('../../engine/types.js').Row} Row */
/** @typedef {import('../../engine/types.js').FlatRow} FlatRow */
/** @typedef {import('../../engine/types.js').EditResult} EditResult */
/** @typedef {import('./outline-ops.js').OpResult} OpResult */
/** @typedef {import('./outline-ops.js').Caret} Caret */

/**
 * @typedef {{
 *   el: HTMLElement, text: HTMLElement, row: Row|null, lock: string|null, editable: boolean,
 *   raw: boolean, tokens: import('./markdown.js').Token[]|null,
 *   toggle: HTMLButtonElement|null, check: HTMLInputElement|null, lockEl: HTMLElement|null,
 *   conflict: HTMLElement|null, lang: HTMLInputElement|null
 * }} RowView
 */

/**
 * @typedef {{userId?: string, id?: string, name?: string, displayName?: string}} Me
 * @typedef {{docId: string, me: Me, clientId: string, api?: unknown,
 *   openShareDialog?: (docId: string) => void,
 *   snapshot?: import('../../engine/engine.js').EarlySnapshot|null,
 *   stored?: Promise<any>|null}} MountOptions
 */

const CSS_HREF = '/app/editor/editor.css';

/** The IndexedDB store: one per tab, shared by the engines of every document opened in it. */
/** @type {ReturnType<typeof openStore>|null} */
let storeOpening = null;

/** Adds the editor's stylesheet once; resolves when it has loaded (or after 1 s). */
function ensureCss() {
  // (the `preload` link of index.html does not count: only a stylesheet link applies it)
  if (document.querySelector(`link[rel="stylesheet"][href="${CSS_HREF}"]`)) return Promise.resolve();
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = CSS_HREF;
  const loaded = new Promise((resolve) => {
    link.addEventListener('load', resolve, { once: true });
    link.addEventListener('error', resolve, { once: true });
    setTimeout(resolve, 1000);
  });
  document.head.append(link);
  return loaded;
}

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag @param {string} [cls] @param {string} [text]
 * @returns {HTMLElementTagNameMap[K]}
 */
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = text;
  return e;
}

/**
 * Sets a field's raw text. A trailing line break gets a <br> after it so the browser draws
 * (and lets the caret into) the empty last line; <br> adds nothing to textContent.
 * @param {HTMLElement} e @param {string} text
 */
function setRawText(e, text) {
  e.textContent = text;
  if (text.endsWith('\n')) e.append(e.ownerDocument.createElement('br'));
}

/** @param {HTMLElement} e @param {boolean} h */
function setHidden(e, h) {
  if (e.hidden !== h) e.hidden = h;
}

/** @param {number} n @param {string} one @param {string} many */
const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

/**
 * @param {HTMLElement} root
 * @param {MountOptions} opts
 * @returns {Promise<{destroy(): void, engine: DocSyncEngine}>}
 */
export async function mountEditor(root, { docId, me, clientId, openShareDialog, snapshot, stored }) {
  const cssReady = ensureCss();
  storeOpening ??= openStore({ indexedDB }).catch((e) => {
    storeOpening = null; // try again on the next document
    throw e;
  });
  const store = await storeOpening;
  const engine = new DocSyncEngine({
    docId,
    clientId,
    user: { userId: me?.userId ?? me?.id ?? '', name: me?.displayName || me?.name || '' },
    store,
    locks: /** @type {any} */ (navigator.locks),
    snapshot,
    stored,
  });
  // The engine opens (lock, this device's copy, the server) while the stylesheet loads and
  // the page is built; its state arrives with the subscription below.
  if (!navigator.onLine) engine.setOnline(false);
  if (document.visibilityState !== 'visible') engine.setVisible(false);
  const opening = engine.open();
  await cssReady;

  // ---- static chrome ------------------------------------------------------------------------
  const editor = el('div', 'ed');
  editor.id = 'editor';
  editor.dataset.docId = docId;
  const bar = el('div', 'ed-bar');
  const presence = el('div', 'ed-presence');
  presence.id = 'presence';
  presence.setAttribute('aria-label', 'Who else is here');
  const viewOnly = el('span', 'ed-badge', 'View only');
  viewOnly.hidden = true;
  const share = el('button', 'ed-share', 'Share');
  share.id = 'share-button';
  share.type = 'button';
  share.hidden = true;
  share.addEventListener('click', () => openShareDialog?.(docId));
  bar.append(presence, viewOnly, share);
  const title = el('h1', 'ed-title');
  title.id = 'doc-title';
  title.setAttribute('aria-label', 'Document title');
  title.dataset.placeholder = 'Untitled';
  title.spellcheck = true;
  const outline = el('div', 'ed-outline');
  outline.id = 'outline';
  outline.setAttribute('role', 'tree');
  outline.setAttribute('aria-label', 'Outline');
  const empty = el('p', 'ed-empty', 'Loading…');
  const add = el('button', 'ed-add', '+ Add a bullet');
  add.type = 'button';
  add.hidden = true;
  const dropLine = el('div', 'ed-drop');
  dropLine.hidden = true;
  const foot = el('footer', 'ed-foot');
  const notice = el('div', 'ed-notice');
  notice.id = 'notice';
  notice.setAttribute('role', 'status');
  notice.setAttribute('aria-live', 'polite');
  const status = el('div', 'ed-status');
  status.id = 'status';
  const stage = el('span', 'ed-stage');
  stage.id = 'status-stage';
  const pending = el('span', 'ed-pending');
  pending.id = 'status-pending';
  status.append(stage, el('span', 'ed-sep', '·'), pending);
  foot.append(notice, status);
  const main = el('div', 'ed-main');
  main.append(bar, title, outline, empty, add, dropLine);
  editor.append(main, foot);
  root.append(editor);

  // ---- state --------------------------------------------------------------------------------
  /** @type {EngineState|null} */
  let state = null;
  /** @type {Map<string, RowView>} */
  const views = new Map();
  /** @type {Row[]|null} */
  let drawnRows = null;
  /** @type {Map<string, unknown>|null} */
  let drawnLocks = null;
  let drawnEditable = /** @type {boolean|null} */ (null);
  /** @type {Row[]} */
  let visible = [];
  /** @type {Map<string, number>} */
  let visibleIndex = new Map();
  /** @type {Caret|null} caret to place once the row exists (after a structure edit) */
  let pendingFocus = null;
  /** @type {number|null} the x to keep while moving with ↑/↓ */
  let goalX = null;
  let rafId = 0;
  let reconciling = false;
  let composing = false;
  let noticeTimer = 0;
  let lastEngineNotice = 0; // the engine's noticeSeq last shown
  let lastTitle = /** @type {string|null} */ (null);
  let highlighted = /** @type {string|null} */ (null);
  let destroyed = false;
  let firstShown = false;
  /** @type {string|null} id of the row whose text field has focus */
  let focusedId = null;

  // role null = not known yet (opened from this device's store, offline): editable, the
  // engine refuses if the server later says viewer
  const canEdit = () => !!state && state.loaded && state.role !== 'viewer' && !state.error;
  /** @param {string} id */
  const lockedBy = (id) => state?.locks.get(id)?.name ?? null;
  // the engine's current rows (engine.state is updated synchronously by every edit)
  // (text typed but not yet handed over goes first, so no edit is built on stale rows)
  const rows = () => {
    flushTyping();
    return /** @type {FlatRow[]} */ (engine.state?.rows ?? state?.rows ?? []);
  };

  // ---- notices ------------------------------------------------------------------------------
  /** @param {string|null} msg @param {{sticky?: boolean}} [o] */
  function showNotice(msg, o = {}) {
    clearTimeout(noticeTimer);
    notice.textContent = msg ?? '';
    notice.classList.toggle('is-sticky', !!o.sticky);
    if (msg && !o.sticky) noticeTimer = window.setTimeout(() => {
      if (!notice.classList.contains('is-sticky')) notice.textContent = '';
    }, 8000);
  }

  // ---- the one write path ---------------------------------------------------------------------
  /**
   * @param {OpResult|null} result
   * @returns {boolean}
   */
  function commit(result) {
    flushTyping();
    if (!result) return false;
    if (!result.ok) {
      showNotice(result.message);
      return false;
    }
    if (!canEdit()) return false;
    /** @type {EditResult} */
    const r = engine.commitRows(result.rows, { step: result.step });
    if (!r.ok) {
      showNotice(r.message);
      forceRedraw();
      return false;
    }
    if (result.focus) pendingFocus = result.focus;
    renderNow();
    return true;
  }

  function forceRedraw() {
    for (const v of views.values()) v.row = null;
    drawnRows = null;
    renderNow();
  }

  // ---- rendering ----------------------------------------------------------------------------
  function scheduleRender() {
    if (!rafId) rafId = requestAnimationFrame(renderNow);
  }

  function renderNow() {
    if (rafId) cancelAnimationFrame(rafId);
    rafId = 0;
    if (!state || destroyed) return;
    renderChrome(state);
    const editable = canEdit();
    if (state.rows !== drawnRows || state.locks !== drawnLocks || editable !== drawnEditable) {
      renderRows(state, editable);
      drawnRows = state.rows;
      drawnLocks = state.locks;
      drawnEditable = editable;
    }
    if (pendingFocus) {
      const v = ensureView(pendingFocus.id);
      if (v) {
        const { offset } = pendingFocus;
        pendingFocus = null;
        focusView(v, { offset });
      }
    }
    revealHash();
    if (!firstShown && state.loaded) {
      firstShown = true;
      // a new, empty document: start with its title
      if (!state.title && state.rows.length === 0 && canEdit() && !root.contains(document.activeElement)) title.focus();
    }
  }

  /** @param {EngineState} s */
  function renderChrome(s) {
    const ro = !canEdit();
    if (editor.classList.contains('is-readonly') !== ro) editor.classList.toggle('is-readonly', ro);
    setHidden(viewOnly, s.role !== 'viewer');
    setHidden(share, s.role !== 'owner');
    if (s.loaded && s.title !== lastTitle) {
      lastTitle = s.title;
      if (document.activeElement !== title || (title.textContent ?? '') === '') {
        if ((title.textContent ?? '') !== s.title) title.textContent = s.title;
      }
      document.title = `${s.title || 'Untitled'} · docsync`;
      rememberTitle(s.title);
    }
    if (!ro && !title.hasAttribute('contenteditable')) title.setAttribute('contenteditable', 'plaintext-only');
    else if (ro && title.hasAttribute('contenteditable')) title.removeAttribute('contenteditable');
    // status line
    if (stage.textContent !== s.stageLabel) stage.textContent = s.stageLabel;
    if (status.dataset.stage !== s.stage) status.dataset.stage = s.stage;
    // The truth, in three steps: typed but not yet committed to IndexedDB ("Saving"), on
    // this device but not acknowledged by the server, and acknowledged ("All changes saved").
    const p = s.error
      ? `${plural(s.pending, 'change', 'changes')} kept on this device`
      : s.unsaved > 0
        ? `Saving ${plural(s.pending + s.unsaved, 'change', 'changes')}…`
        : s.pending === 0
          ? 'All changes saved'
          : `${plural(s.pending, 'change', 'changes')} saved on this device`;
    if (pending.textContent !== p) pending.textContent = p;
    // notices: access lost beats everything, then storage trouble, then the engine's notice
    if (s.error && (s.error.status === 403 || s.error.status === 404)) {
      const n = s.pending;
      const msg = `You no longer have access — your ${plural(n, 'unsent change is', 'unsent changes are')} kept on this device`;
      if (notice.textContent !== msg) showNotice(msg, { sticky: true });
    } else if (s.error) {
      if (notice.textContent !== s.error.message) showNotice(s.error.message, { sticky: true });
    } else if (s.storageError) {
      if (notice.textContent !== s.storageError) showNotice(s.storageError, { sticky: true });
    } else if (notice.classList.contains('is-sticky')) showNotice(null);
    // noticeSeq, not the text: the same refusal twice in a row is shown twice.
    if (s.noticeSeq !== lastEngineNotice) {
      lastEngineNotice = s.noticeSeq;
      if (s.notice && !s.error) showNotice(s.notice);
    }
    // presence: other sessions, with names where their locks tell us
    const others = Math.max(0, (s.sessions || 0) - 1);
    const names = [...new Set([...s.locks.values()].map((l) => l.name).filter(Boolean))];
    const key = `${others}|${names.join('\u0000')}`;
    if (presence.dataset.key !== key) {
      presence.dataset.key = key;
      presence.textContent = '';
      if (others === 0 && names.length === 0) presence.append(el('span', 'ed-presence-text', 'Only you'));
      else {
        for (const n of names.slice(0, 4)) {
          const a = el('span', 'ed-avatar', initials(n));
          a.title = n;
          a.style.setProperty('--hue', String(hue(n)));
          presence.append(a);
        }
        const count = Math.max(others, names.length);
        const label = names.length
          ? `${names.slice(0, 2).join(', ')}${count > Math.min(2, names.length) ? ` +${count - Math.min(2, names.length)}` : ''}`
          : plural(count, 'other person', 'others');
        presence.append(el('span', 'ed-presence-text', `${label} here`));
      }
    }
    setHidden(empty, s.loaded && s.rows.length > 0);
    const emptyText = !s.loaded
      ? s.stage === 'offline'
        ? 'This document has not been opened on this device yet — it will appear when you are back online.'
        : 'Loading…'
      : !ro
        ? 'Empty document. Click here or press Enter in the title to start.'
        : 'This document is empty.';
    if (empty.textContent !== emptyText) empty.textContent = emptyText;
    setHidden(add, !s.loaded || ro || s.rows.length === 0);
  }

  /**
   * @param {EngineState} s @param {boolean} editable
   */
  function renderRows(s, editable, extraId = /** @type {string|null} */ (null)) {
    const active = document.activeElement;
    const activeView = focusedId ? views.get(focusedId) : undefined;
    const hadFocus = !!activeView && active === activeView.text;
    const caret = hadFocus && activeView ? getSelectionOffsets(activeView.text) : null;
    const oldIndex = focusedId != null ? (visibleIndex.get(focusedId) ?? -1) : -1;

    if (s.rows !== visibleOf) {
      visibleOf = s.rows;
      const before = visible;
      visible = visibleRows(s.rows);
      // typing changes no order: keep the index (and the row offsets) when the ids are the same
      let same = before.length === visible.length;
      for (let i = 0; same && i < visible.length; i++) same = before[i].id === visible[i].id;
      if (same) topsOf = visible;
      else {
        visibleIndex = new Map();
        for (let i = 0; i < visible.length; i++) visibleIndex.set(visible[i].id, i);
      }
    }
    const want = windowed() ? windowIndices([focusedId, pendingFocus?.id, drag?.id, extraId]) : null;

    reconciling = true;
    try {
      // drop rows that are gone, hidden or outside the window
      for (const [id, v] of views) {
        const i = visibleIndex.get(id);
        if (i === undefined || (want && !want.has(i))) {
          v.el.remove();
          views.delete(id);
        }
      }
      // create or update, then put in order (spacers stand in for the rows not drawn)
      const fresh = outline.firstChild === null;
      const frag = fresh ? document.createDocumentFragment() : null;
      let cursor = outline.firstChild;
      let spacerNo = 0;
      let gapFrom = -1; // first index of the current run of rows not drawn
      /** @param {Node} node */
      const place = (node) => {
        if (frag) frag.append(node);
        else if (node === cursor) cursor = cursor.nextSibling;
        else outline.insertBefore(node, cursor);
      };
      /** @param {number} to */
      const flushGap = (to) => {
        if (gapFrom < 0) return;
        const sp = spacer(spacerNo++);
        const h = `${Math.round(heightOf(gapFrom, to))}px`;
        if (sp.style.height !== h) sp.style.height = h;
        place(sp);
        gapFrom = -1;
      };
      for (let i = 0; i < visible.length; i++) {
        if (want && !want.has(i)) {
          if (gapFrom < 0) gapFrom = i;
          continue;
        }
        flushGap(i);
        const r = visible[i];
        let v = views.get(r.id);
        const lock = s.locks.get(r.id)?.name ?? null;
        if (!v) {
          v = createView();
          views.set(r.id, v);
          updateView(v, r, lock, editable);
        } else if (v.lock !== lock || v.editable !== (editable && lock == null) || (v.row !== r && !sameRow(v.row, r))) {
          updateView(v, r, lock, editable);
        } else v.row = r;
        place(v.el);
      }
      flushGap(visible.length);
      if (frag) outline.append(frag);
      for (let k = spacerNo; k < spacers.length; k++) spacers[k].remove();
      spacers.length = spacerNo;
    } finally {
      reconciling = false;
    }

    if (hadFocus && activeView && document.activeElement !== activeView.text && activeView.text.isConnected) {
      activeView.text.focus({ preventScroll: true });
      if (caret) setSelectionOffsets(activeView.text, caret.start, caret.end);
    } else if (hadFocus && activeView && !activeView.text.isConnected && !pendingFocus) {
      // the bullet being edited went away (undo of its insert, someone deleted it): stay near
      const near = visible[Math.max(0, Math.min(oldIndex - 1, visible.length - 1))];
      focusedId = null;
      if (near) {
        const nv = ensureView(near.id);
        if (nv) focusView(nv, { offset: near.content.length });
      }
    }
  }

  // ---- windowing (documents with more than WINDOW_MIN visible rows) ---------------------------
  // Only the rows near the viewport (one screen above and below) are in the DOM, plus the row
  // being edited; runs of other rows are one spacer each, as tall as their measured (or
  // estimated) heights. Small documents are drawn whole, so find-in-page sees everything.
  const WINDOW_MIN = 400;
  /** @type {Row[]|null} */
  let visibleOf = null;
  /** @type {HTMLElement[]} */
  const spacers = [];
  /** measured row heights by block id (px) */
  const heights = new Map();
  /** @type {Float64Array} prefix sums of row heights over `visible` */
  let tops = new Float64Array(1);
  let topsOf = /** @type {Row[]|null} */ (null);
  let topsDirty = true;
  let drawnFrom = 0;
  let drawnTo = 0;

  const windowed = () => visible.length > WINDOW_MIN;

  /** @param {number} k */
  function spacer(k) {
    let sp = spacers[k];
    if (!sp) {
      sp = el('div', 'ed-spacer');
      sp.setAttribute('aria-hidden', 'true');
      spacers[k] = sp;
    }
    return sp;
  }

  /** @param {Row} r */
  function estimate(r) {
    const base = r.type === 'h1' ? 42 : r.type === 'h2' ? 36 : r.type === 'h3' ? 30 : 24;
    const lines = r.type === 'code' ? r.content.split('\n').length : Math.max(1, Math.ceil(r.content.length / 90));
    return base + (lines - 1) * (r.type === 'code' ? 22 : 24) + (r.type === 'code' ? 22 : 0) + (r.conflictOf ? 30 : 0);
  }

  function ensureTops() {
    if (topsOf === visible && !topsDirty) return;
    if (tops.length < visible.length + 1) tops = new Float64Array(visible.length + 1);
    let acc = 0;
    for (let i = 0; i < visible.length; i++) {
      tops[i] = acc;
      acc += heights.get(visible[i].id) ?? estimate(visible[i]);
    }
    tops[visible.length] = acc;
    topsOf = visible;
    topsDirty = false;
  }

  /** @param {number} from @param {number} to */
  function heightOf(from, to) {
    ensureTops();
    return tops[to] - tops[from];
  }

  /** First index whose row ends below `y`. @param {number} y */
  function indexAt(y) {
    ensureTops();
    let lo = 0;
    let hi = visible.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (tops[mid + 1] <= y) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Records the heights of the rows in the DOM (one layout read, before any change). */
  function measure() {
    for (const [id, v] of views) {
      const h = v.el.offsetHeight;
      if (h > 0 && heights.get(id) !== h) {
        heights.set(id, h);
        topsDirty = true;
      }
    }
  }

  /** The range of rows the viewport shows, with one screen of margin each side. */
  function viewportRange() {
    const top = outline.getBoundingClientRect().top;
    const vh = window.innerHeight;
    return [indexAt(-top - vh), Math.min(visible.length, indexAt(-top + 2 * vh) + 1)];
  }

  /** @param {(string|null|undefined)[]} keep ids drawn wherever they are @returns {Set<number>} */
  function windowIndices(keep) {
    measure();
    const [a, b] = viewportRange();
    drawnFrom = a;
    drawnTo = b;
    const want = new Set();
    for (let i = a; i < b; i++) want.add(i);
    for (const id of keep) {
      const i = id ? visibleIndex.get(id) : undefined;
      if (i !== undefined) want.add(i);
    }
    return want;
  }

  function onScroll() {
    if (!windowed() || !state) return;
    const top = outline.getBoundingClientRect().top;
    const vh = window.innerHeight;
    const a = indexAt(-top - vh / 2);
    const b = Math.min(visible.length, indexAt(-top + 1.5 * vh) + 1);
    if (a < drawnFrom || b > drawnTo) {
      drawnRows = null; // force renderRows
      scheduleRender();
    }
  }

  /** The view of a row, drawing it first if it is outside the window. @param {string} id */
  function ensureView(id) {
    let v = views.get(id);
    if (!v && state && visibleIndex.has(id)) {
      renderRows(state, canEdit(), id);
      v = views.get(id);
    }
    return v ?? null;
  }

  /** Scrolls a row (drawn or not) into the middle of the screen. @param {string} id */
  function scrollToRow(id) {
    const i = visibleIndex.get(id);
    if (i === undefined) return null;
    if (windowed()) {
      ensureTops();
      const top = outline.getBoundingClientRect().top + window.scrollY;
      window.scrollTo(0, Math.max(0, top + tops[i] - window.innerHeight / 2));
      drawnRows = null;
      renderNow();
    }
    return ensureView(id);
  }

  /** @returns {RowView} */
  function createView() {
    const row = el('div', 'row');
    row.setAttribute('role', 'treeitem');
    const handle = el('span', 'row-handle');
    handle.setAttribute('aria-hidden', 'true');
    const text = el('div', 'row-text');
    text.spellcheck = true;
    row.append(handle, text);
    return { el: row, text, row: null, lock: null, editable: false, raw: true, tokens: null, toggle: null, check: null, lockEl: null, conflict: null, lang: null };
  }

  /**
   * @param {RowView} v @param {Row} r @param {string|null} lock @param {boolean} editable
   */
  function updateView(v, r, lock, editable) {
    const prev = v.row;
    const e = v.el;
    if (!prev) e.dataset.blockId = r.id;
    if (!prev || prev.depth !== r.depth) {
      e.setAttribute('aria-level', String(r.depth + 1));
      e.style.setProperty('--depth', String(r.depth));
    }
    if (!prev || prev.hasChildren !== r.hasChildren || prev.collapsed !== r.collapsed) {
      if (r.hasChildren) {
        e.setAttribute('aria-expanded', String(!r.collapsed));
        if (!v.toggle) {
          v.toggle = el('button', 'row-toggle');
          v.toggle.type = 'button';
          v.toggle.tabIndex = -1;
          e.prepend(v.toggle);
        }
        v.toggle.setAttribute('aria-label', r.collapsed ? 'Expand' : 'Collapse');
      } else {
        e.removeAttribute('aria-expanded');
        v.toggle?.remove();
        v.toggle = null;
      }
      e.classList.toggle('is-collapsed', r.hasChildren && r.collapsed);
    }
    if (!prev || prev.type !== r.type) e.dataset.type = r.type;
    e.classList.toggle('is-checked', r.type === 'todo' && r.checked);
    // todo checkbox
    if (r.type === 'todo') {
      if (!v.check) {
        v.check = el('input', 'row-check');
        v.check.type = 'checkbox';
        v.check.setAttribute('aria-label', 'Done');
        v.text.before(v.check);
      }
      v.check.checked = r.checked;
      v.check.disabled = !editable || lock != null;
    } else if (v.check) {
      v.check.remove();
      v.check = null;
    }
    // lock
    if (lock != null) {
      e.dataset.locked = 'true';
      if (!v.lockEl) {
        v.lockEl = el('span', 'row-lock');
        e.append(v.lockEl);
      }
      if (v.lockEl.textContent !== lock) {
        v.lockEl.textContent = lock;
        v.lockEl.title = `${lock} is editing this bullet`;
      }
    } else if (v.lockEl || e.dataset.locked) {
      delete e.dataset.locked;
      v.lockEl?.remove();
      v.lockEl = null;
    }
    // conflict copy
    if (r.conflictOf && !r.conflictResolved) {
      e.dataset.conflictOf = r.conflictOf;
      const who = r.conflictAuthor?.name || 'someone';
      const label = r.conflictOf === 'title' ? `Conflict copy of the title by ${who}` : `Conflict copy by ${who}`;
      if (!v.conflict) {
        v.conflict = el('div', 'row-conflict');
        const lab = el('span', 'row-conflict-label');
        const acc = el('button', 'conflict-accept', 'Accept');
        acc.type = 'button';
        acc.title = 'Replace the original with this text';
        const dis = el('button', 'conflict-discard', 'Discard');
        dis.type = 'button';
        dis.title = 'Delete this copy';
        v.conflict.append(lab, acc, dis);
        e.append(v.conflict);
      }
      const lab = /** @type {HTMLElement} */ (v.conflict.firstChild);
      if (lab.textContent !== label) lab.textContent = label;
      for (const b of v.conflict.querySelectorAll('button')) {
        b.disabled = !editable;
        b.hidden = state?.role === 'viewer';
      }
    } else {
      if (e.dataset.conflictOf) delete e.dataset.conflictOf;
      if (r.conflictOf) e.dataset.conflictOf = r.conflictOf; // resolved: keep the marker, no buttons
      v.conflict?.remove();
      v.conflict = null;
    }
    e.classList.toggle('is-conflict', !!r.conflictOf && !r.conflictResolved);
    // code language
    if (r.type === 'code') {
      if (!v.lang) {
        v.lang = el('input', 'row-lang');
        v.lang.placeholder = 'language';
        v.lang.setAttribute('aria-label', 'Code language');
        v.lang.spellcheck = false;
        e.append(v.lang);
      }
      if (document.activeElement !== v.lang) v.lang.value = r.language ?? '';
      v.lang.readOnly = !editable || lock != null;
    } else if (v.lang) {
      v.lang.remove();
      v.lang = null;
    }
    // editability
    const canType = editable && lock == null;
    if (!prev || v.editable !== canType || v.lock !== lock) {
      if (canType) {
        v.text.setAttribute('contenteditable', 'plaintext-only');
        v.text.removeAttribute('tabindex');
        v.text.removeAttribute('aria-readonly');
      } else {
        v.text.removeAttribute('contenteditable');
        v.text.tabIndex = 0;
        v.text.setAttribute('aria-readonly', 'true');
      }
      v.text.setAttribute('role', 'textbox');
      v.text.setAttribute('aria-multiline', 'true'); // Shift+Enter adds line breaks
    }
    // text
    const focused = document.activeElement === v.text;
    if (focused && canType) {
      const cur = v.text.textContent ?? '';
      // the field may be ahead of the engine (typing not handed over yet): never go back
      if (cur !== r.content && typingView !== v) replaceFocusedText(v, r.content);
      v.raw = true;
      v.tokens = null;
    } else if (!prev || prev.content !== r.content || prev.type !== r.type || (focused && !canType)) {
      drawText(v, r.content, r.type);
    }
    v.row = r;
    v.lock = lock;
    v.editable = canType;
  }

  /**
   * Rendered markdown into a row that is not being edited (code blocks stay raw).
   * @param {RowView} v @param {string} content @param {string} type
   */
  function drawText(v, content, type) {
    if (type === 'code') {
      setRawText(v.text, content);
      v.tokens = null;
      v.raw = true;
      return;
    }
    const tokens = parseInline(content);
    fillInline(v.text, tokens);
    const flat = tokens.length <= 1 && (tokens.length === 0 || tokens[0].kind === 'text');
    v.tokens = flat ? null : tokens;
    v.raw = flat;
  }

  /**
   * The engine changed the text of the row being edited (undo, redo): set it and put the caret
   * at the end of what changed.
   * @param {RowView} v @param {string} next
   */
  function replaceFocusedText(v, next) {
    const cur = v.text.textContent ?? '';
    let a = 0;
    while (a < cur.length && a < next.length && cur[a] === next[a]) a++;
    let b = 0;
    while (b < cur.length - a && b < next.length - a && cur[cur.length - 1 - b] === next[next.length - 1 - b]) b++;
    setRawText(v.text, next);
    setSelectionOffsets(v.text, next.length - b);
  }

  /** Shows the raw text in a row that is about to be edited. @param {RowView} v */
  function showRaw(v) {
    if (v.raw || !v.row) return;
    setRawText(v.text, v.row.content);
    v.raw = true;
    v.tokens = null;
  }

  /**
   * @param {RowView} v
   * @param {{offset?: number, x?: number, line?: 'first'|'last'}} where
   */
  function focusView(v, where) {
    if (document.activeElement !== v.text) v.text.focus({ preventScroll: true });
    showRaw(v);
    scrollIntoViewIfNeeded(v.el);
    if (v.text.getAttribute('contenteditable') == null) return;
    if (where.x != null && where.line) placeCaretAtX(v.text, where.x, where.line);
    else setSelectionOffsets(v.text, Math.min(where.offset ?? 0, (v.text.textContent ?? '').length));
  }

  /** @param {HTMLElement} e */
  function scrollIntoViewIfNeeded(e) {
    const r = e.getBoundingClientRect();
    const footH = foot.getBoundingClientRect().height;
    if (r.top < 8 || r.bottom > window.innerHeight - footH - 8) e.scrollIntoView({ block: 'nearest' });
    const r2 = e.getBoundingClientRect();
    if (r2.bottom > window.innerHeight - footH - 8) window.scrollBy(0, r2.bottom - (window.innerHeight - footH - 8));
  }

  // ---- recent documents, hash links -----------------------------------------------------------
  let rememberTimer = 0;
  /** @param {string} t */
  function rememberTitle(t) {
    clearTimeout(rememberTimer);
    rememberTimer = window.setTimeout(() => {
      import('../recent.js').then((m) => m.rememberDoc?.({ docId, title: t })).catch(() => {});
    }, 500);
  }

  /** The deep-linked bullet already said to be missing (said once). @type {string|null} */
  let missingSaid = null;
  function revealHash() {
    let id = '';
    try {
      id = decodeURIComponent(location.hash.slice(1));
    } catch {
      return;
    }
    if (!id.startsWith('blk_') || id === highlighted || !state?.loaded) return;
    const all = /** @type {FlatRow[]} */ (engine.state.rows);
    const i = indexOfId(all, id);
    if (i < 0) {
      // Said once the server has answered: this device's copy alone may be behind.
      if (state.synced && missingSaid !== id) {
        missingSaid = id;
        showNotice('That bullet no longer exists (it was deleted, or the link is wrong).');
      }
      return;
    }
    highlighted = id;
    const hiddenBy = ancestorIndices(all, i).filter((k) => all[k].collapsed);
    if (hiddenBy.length && canEdit()) {
      let next = all;
      for (const k of hiddenBy) next = /** @type {FlatRow[]} */ (setProps(next, all[k].id, { collapsed: false }));
      commit({ ok: true, rows: next, step: 'props', focus: null });
    }
    const v = scrollToRow(id);
    if (!v) return;
    v.el.scrollIntoView({ block: 'center' });
    v.el.classList.remove('is-target');
    void v.el.offsetWidth;
    v.el.classList.add('is-target');
    setTimeout(() => v.el.classList.remove('is-target'), 2600);
  }
  const onHash = () => {
    highlighted = null;
    revealHash();
  };

  // ---- helpers for handlers ---------------------------------------------------------------------
  /** @param {EventTarget|null} t @returns {RowView|null} */
  function viewOf(t) {
    if (!(t instanceof Element)) return null;
    const rowEl = t.closest('.row');
    const id = rowEl instanceof HTMLElement ? rowEl.dataset.blockId : undefined;
    return id ? (views.get(id) ?? null) : null;
  }
  /** @param {RowView} v */
  const idOf = (v) => /** @type {Row} */ (v.row).id;
  const newId = () => engine.newBlockId();
  const opts = () => ({ lockedBy, newId });

  /** @param {RowView} v @param {number} delta */
  function neighbour(v, delta) {
    const i = visibleIndex.get(idOf(v));
    if (i == null) return null;
    const r = visible[i + delta];
    return r ? ensureView(r.id) : null;
  }

  /** Commits what the field shows (typing), with markdown shortcuts at the line start. @param {RowView} v */
  function commitTyping(v) {
    if (!v.row || !canEdit()) return;
    const id = v.row.id;
    let content = v.text.textContent ?? '';
    const sel = getSelectionOffsets(v.text);
    const sc = detectShortcut(content, v.row.type);
    if (sc && sel && sel.start >= sc.strip && content.slice(0, sc.strip) !== v.row.content.slice(0, sc.strip)) {
      content = content.slice(sc.strip);
      v.text.textContent = content;
      setSelectionOffsets(v.text, sel.start - sc.strip);
      const next = setProps(rows(), id, { ...sc.patch, content });
      commit(next && { ok: true, rows: next, step: 'props', focus: null });
      return;
    }
    const next = setContent(rows(), id, content);
    if (!next) return;
    const r = engine.commitRows(next, { step: 'typing' });
    if (!r.ok) {
      showNotice(r.message);
      forceRedraw();
    }
  }

  /** Inserts text at the caret of a field (line breaks), as typing. @param {RowView} v @param {string} s */
  function insertAtCaret(v, s) {
    const sel = getSelectionOffsets(v.text) ?? { start: 0, end: 0 };
    const cur = v.text.textContent ?? '';
    setRawText(v.text, cur.slice(0, sel.start) + s + cur.slice(sel.end));
    setSelectionOffsets(v.text, sel.start + s.length);
    commitTyping(v);
  }

  function undo() {
    flushTyping();
    const r = engine.undo();
    if (r && r.skipped && r.skipped.length && !state?.notice) showNotice('Some changes could not be undone because someone else changed those bullets.');
    renderNow();
  }
  function redo() {
    flushTyping();
    engine.redo();
    renderNow();
  }

  /** Split (Enter) in a row. @param {RowView} v */
  function split(v) {
    const sel = getSelectionOffsets(v.text) ?? { start: (v.text.textContent ?? '').length, end: (v.text.textContent ?? '').length };
    let all = rows();
    if (sel.end > sel.start && v.editable) {
      const cur = v.text.textContent ?? '';
      all = /** @type {FlatRow[]} */ (setContent(all, idOf(v), cur.slice(0, sel.start) + cur.slice(sel.end)) ?? all);
    }
    commit(splitRow(all, idOf(v), v.editable ? sel.start : 0, opts()));
  }

  // ---- event handlers ---------------------------------------------------------------------------
  /** @param {KeyboardEvent} e */
  function onKeyDown(e) {
    flushTyping();
    const v = viewOf(e.target);
    if (!v || e.target !== v.text || !v.row || e.isComposing) return;
    const cmd = commandFor(e);
    if (cmd !== 'up' && cmd !== 'down') goalX = null;
    if (!cmd) {
      if (v.lock && canEdit() && e.key.length === 1 && !e.ctrlKey && !e.metaKey && !e.altKey) {
        showNotice(`${v.lock} is editing this bullet — it is read-only until they leave it. Enter adds a bullet below.`);
      }
      return;
    }
    const id = v.row.id;
    const editable = canEdit();
    const len = (v.text.textContent ?? '').length;
    const sel = getSelectionOffsets(v.text);
    const collapsedAt = (/** @type {number} */ n) => !!sel && sel.start === sel.end && sel.start === n;
    switch (cmd) {
      case 'undo':
        e.preventDefault();
        if (editable) undo();
        return;
      case 'redo':
        e.preventDefault();
        if (editable) redo();
        return;
      case 'escape':
        e.preventDefault();
        v.text.blur();
        return;
      case 'up':
      case 'down': {
        const line = v.editable ? caretLine(v.text) : { first: true, last: true, x: null };
        const edge = cmd === 'up' ? line.first : line.last;
        if (!edge) return;
        const target = neighbour(v, cmd === 'up' ? -1 : 1);
        e.preventDefault();
        if (goalX == null) goalX = line.x ?? v.text.getBoundingClientRect().left;
        if (!target) {
          if (cmd === 'up') {
            title.focus();
            setSelectionOffsets(title, (title.textContent ?? '').length);
          } else setSelectionOffsets(v.text, len);
          return;
        }
        focusView(target, { x: goalX, line: cmd === 'up' ? 'last' : 'first' });
        return;
      }
      case 'left':
      case 'right': {
        if (cmd === 'left' ? !collapsedAt(0) && v.editable : !collapsedAt(len) && v.editable) return;
        const target = neighbour(v, cmd === 'left' ? -1 : 1);
        if (!target?.row) return;
        e.preventDefault();
        focusView(target, { offset: cmd === 'left' ? target.row.content.length : 0 });
        return;
      }
    }
    if (!editable) {
      if (cmd === 'split' || cmd === 'newline') e.preventDefault();
      return;
    }
    switch (cmd) {
      case 'split':
        e.preventDefault();
        if (v.row.type === 'code' && v.editable) insertAtCaret(v, '\n');
        else split(v);
        return;
      case 'newline':
        e.preventDefault();
        if (v.row.type === 'code' || !v.editable) split(v);
        else insertAtCaret(v, '\n');
        return;
      case 'toggleTodo':
        e.preventDefault();
        commit(toggleTodo(rows(), id, opts()));
        return;
      case 'indent':
      case 'outdent': {
        e.preventDefault();
        const off = sel?.start ?? 0;
        if (commit((cmd === 'indent' ? indent : outdent)(rows(), id, opts()))) keepCaret(id, off);
        return;
      }
      case 'moveUp':
      case 'moveDown': {
        e.preventDefault();
        const off = sel?.start ?? 0;
        if (commit((cmd === 'moveUp' ? moveUp : moveDown)(rows(), id, opts()))) keepCaret(id, off);
        return;
      }
      case 'collapse':
      case 'expand':
        e.preventDefault();
        commit(setCollapsed(rows(), id, cmd === 'collapse', opts()));
        return;
      case 'backspace':
        if (v.editable && !collapsedAt(0)) return;
        e.preventDefault();
        commit(mergeBackward(rows(), id, opts()));
        return;
      case 'delete':
        if (v.editable && !collapsedAt(len)) return;
        e.preventDefault();
        commit(mergeForward(rows(), id, opts()));
        return;
    }
  }

  /** After a move the row element may have been re-inserted: keep the caret where it was. @param {string} id @param {number} off */
  function keepCaret(id, off) {
    const v = ensureView(id);
    if (v && document.activeElement !== v.text) focusView(v, { offset: off });
    else if (v) scrollIntoViewIfNeeded(v.el);
  }

  /** @param {InputEvent} e */
  function onBeforeInput(e) {
    const t = e.target;
    if (e.inputType === 'historyUndo' || e.inputType === 'historyRedo') {
      e.preventDefault();
      if (!canEdit()) return;
      if (e.inputType === 'historyUndo') undo();
      else redo();
      return;
    }
    if (t === title) {
      if (e.inputType === 'insertParagraph' || e.inputType === 'insertLineBreak') e.preventDefault();
      return;
    }
    const v = viewOf(t);
    if (!v || t !== v.text || !v.row) return;
    if (e.inputType === 'insertParagraph') {
      // soft keyboards that send no Enter keydown
      e.preventDefault();
      if (v.row.type === 'code') insertAtCaret(v, '\n');
      else split(v);
    }
  }

  /** @param {Event} e */
  function onInput(e) {
    if (e.target === title) {
      if (canEdit()) engine.setTitle((title.textContent ?? '').replace(/\n/g, ' '));
      return;
    }
    const v = viewOf(e.target);
    if (!v || e.target !== v.text || composing) return;
    // The typed character is already in the field: let the browser paint it first and hand
    // the text to the engine right after that frame (one commit per frame however fast the
    // keys come). Everything that reads the engine's rows flushes first (flushTyping).
    if (typingView && typingView !== v) flushTyping();
    typingView = v;
    // Painted now, handed over after the frame: until then the journal holds it, written
    // synchronously here, so a tab that crashes in between still has it at the next start.
    if (v.row && canEdit()) engine.noteTyping(v.row.id, v.text.textContent ?? '');
    if (!typingRaf) typingRaf = requestAnimationFrame(() => {
      typingTimer = window.setTimeout(flushTyping, 0);
    });
  }

  /** @type {RowView|null} a field whose text the engine has not been given yet */
  let typingView = null;
  let typingRaf = 0;
  let typingTimer = 0;
  function flushTyping() {
    if (typingRaf) cancelAnimationFrame(typingRaf);
    clearTimeout(typingTimer);
    typingRaf = 0;
    typingTimer = 0;
    const v = typingView;
    typingView = null;
    if (v && v.text.isConnected && v.row) commitTyping(v);
  }

  /** @param {ClipboardEvent} e */
  function onPaste(e) {
    flushTyping();
    const v = viewOf(e.target);
    if (!v || e.target !== v.text || !v.row || !v.editable || v.row.type === 'code') return; // code: the field pastes as is
    const text = e.clipboardData?.getData('text/plain') ?? '';
    if (!/\n/.test(text.trim())) return; // one line: the field pastes plain text itself
    e.preventDefault();
    const sel = getSelectionOffsets(v.text) ?? { start: 0, end: 0 };
    commit(pasteText(rows(), v.row.id, sel.start, sel.end, text, opts()));
  }

  /** @param {FocusEvent} e */
  function onFocusIn(e) {
    if (reconciling) return;
    if (e.target === title) {
      focusedId = null;
      if (canEdit()) engine.focus('title');
      return;
    }
    const v = viewOf(e.target);
    if (!v || e.target !== v.text || !v.row) return;
    focusedId = v.row.id;
    v.el.classList.add('is-focused');
    if (v.editable) {
      if (!v.raw) {
        const off = getSelectionOffsets(v.text);
        const tokens = v.tokens;
        showRaw(v);
        if (off && tokens) setSelectionOffsets(v.text, renderedToRaw(tokens, off.start));
      }
      engine.focus(v.row.id);
    }
  }

  /** @param {FocusEvent} e */
  function onFocusOut(e) {
    flushTyping();
    if (reconciling) return;
    const v = viewOf(e.target);
    if (v && e.target === v.text) {
      v.el.classList.remove('is-focused');
      // the field's text is what was just handed to the engine (v.row may be a frame behind)
      if (v.row && v.raw) drawText(v, v.editable ? (v.text.textContent ?? '') : v.row.content, v.row.type);
      if (focusedId === v.row?.id) focusedId = null;
    }
    const to = e.relatedTarget;
    const staysInEditor = to instanceof Node && (to === title || (outline.contains(to) && !!viewOf(to)));
    if (!staysInEditor && canEdit()) engine.focus(null);
  }

  /** Clicking rendered markdown: open links; otherwise put the caret where the click was. @param {PointerEvent} e */
  function onPointerDown(e) {
    goalX = null;
    const t = /** @type {Element} */ (e.target);
    const v = viewOf(t);
    if (!v || !v.row) return;
    if (t.closest('.row-handle')) return startDrag(e, v);
    if (!v.text.contains(t) || document.activeElement === v.text) return;
    const link = t.closest('a');
    if (link && e.button === 0) {
      e.preventDefault();
      return;
    }
    if (v.raw || !v.editable || e.pointerType !== 'mouse' || e.button !== 0 || !v.tokens) return;
    // the rendered text differs from the raw text: map the click to the raw offset
    const at = offsetAtPoint(v.text, e.clientX, e.clientY);
    const tokens = v.tokens;
    e.preventDefault();
    focusView(v, { offset: at == null ? v.row.content.length : renderedToRaw(tokens, at) });
  }

  /** @param {MouseEvent} e */
  function onClick(e) {
    const t = /** @type {Element} */ (e.target);
    const v = viewOf(t);
    if (!v || !v.row) {
      if (t === empty && canEdit() && state?.loaded && rows().length === 0) startFirstRow();
      return;
    }
    if (t.closest('.row-toggle')) {
      commit(setCollapsed(rows(), v.row.id, !v.row.collapsed, opts()));
      return;
    }
    if (t === v.check) {
      e.preventDefault();
      const next = setProps(rows(), v.row.id, { checked: !v.row.checked });
      if (v.lock) showNotice(`Can't change it: ${v.lock} is editing that bullet right now.`);
      else commit(next && { ok: true, rows: next, step: 'check', focus: null });
      return;
    }
    if (t.closest('.conflict-accept') || t.closest('.conflict-discard')) {
      const r = t.closest('.conflict-accept') ? engine.acceptConflict(v.row.id) : engine.discardConflict(v.row.id);
      if (r && !r.ok) showNotice(r.message);
      renderNow();
      return;
    }
    const link = t.closest('a');
    if (link && v.text.contains(link) && document.activeElement !== v.text) {
      const href = link.getAttribute('href') ?? '';
      const external = /^(https?:|mailto:)/i.test(href);
      if (external || e.ctrlKey || e.metaKey) {
        e.preventDefault();
        window.open(href, '_blank', 'noopener');
        return;
      }
      // in-app link (#tag): let the app's router take it; navigate if nobody did
      setTimeout(() => {
        if (!e.defaultPrevented) location.assign(href);
      }, 0);
    }
  }

  /** @param {Event} e */
  function onChange(e) {
    const t = e.target;
    if (!(t instanceof HTMLInputElement) || !t.classList.contains('row-lang')) return;
    const v = viewOf(t);
    if (!v || !v.row) return;
    const language = t.value.trim() || null;
    if (language === v.row.language) return;
    const next = setProps(rows(), v.row.id, { language });
    commit(next && { ok: true, rows: next, step: 'props', focus: null });
  }

  function startFirstRow() {
    const all = rows();
    if (all.length === 0) {
      const id = newId();
      commit({ ok: true, rows: [withProps({ id, depth: 0, content: '' })], step: 'insert', focus: { id, offset: 0 } });
    } else {
      const first = ensureView(visible[0]?.id ?? '');
      if (first) focusView(first, { offset: 0 });
    }
  }

  /** @param {KeyboardEvent} e */
  function onTitleKey(e) {
    const cmd = commandFor(e);
    if (cmd === 'undo' || cmd === 'redo') {
      e.preventDefault();
      if (canEdit()) (cmd === 'undo' ? undo : redo)();
      return;
    }
    if (e.key === 'Enter' || cmd === 'down') {
      if (cmd === 'down' && !caretLine(title).last) return;
      e.preventDefault();
      if (canEdit() && e.key === 'Enter' && rows().length === 0) startFirstRow();
      else {
        const first = visible[0] && ensureView(visible[0].id);
        if (first) focusView(first, { offset: 0 });
        else if (canEdit()) startFirstRow();
      }
    }
  }

  function onAdd() {
    const all = rows();
    const last = visible[visible.length - 1];
    const lv = last && ensureView(last.id);
    if (last && last.content === '' && !last.hasChildren && lv && !lv.lock) return focusView(lv, { offset: 0 });
    const id = newId();
    commit({ ok: true, rows: [...all, withProps({ id, depth: 0, content: '' })], step: 'insert', focus: { id, offset: 0 } });
  }

  // ---- drag and drop (pointer events on the bullet) ---------------------------------------------
  /** @type {{id: string, v: RowView, x: number, y: number, pid: number, started: boolean, target: {id: string, where: 'before'|'after'|'into'}|null, ghost: HTMLElement|null}|null} */
  let drag = null;

  /** @param {PointerEvent} e @param {RowView} v */
  function startDrag(e, v) {
    if (e.button !== 0 || !v.row) return;
    e.preventDefault();
    drag = { id: v.row.id, v, x: e.clientX, y: e.clientY, pid: e.pointerId, started: false, target: null, ghost: null };
    try {
      v.el.setPointerCapture(e.pointerId);
    } catch {
      /* capture is a nicety */
    }
  }

  /** @param {PointerEvent} e */
  function onPointerMove(e) {
    if (!drag || e.pointerId !== drag.pid) return;
    if (!drag.started) {
      if (Math.hypot(e.clientX - drag.x, e.clientY - drag.y) < 5) return;
      if (!canEdit()) return;
      if (drag.v.lock) {
        showNotice(`Can't move it: ${drag.v.lock} is editing that bullet right now.`);
        drag = null;
        return;
      }
      drag.started = true;
      drag.v.el.classList.add('is-dragging');
      editor.classList.add('is-dragging');
      const g = el('div', 'ed-ghost', drag.v.row?.content || ' ');
      editor.append(g);
      drag.ghost = g;
    }
    if (drag.ghost) {
      drag.ghost.style.transform = `translate(${e.clientX + 12}px, ${e.clientY + 8}px)`;
    }
    // auto-scroll near the edges
    const edge = 48;
    if (e.clientY < edge) window.scrollBy(0, -12);
    else if (e.clientY > window.innerHeight - edge) window.scrollBy(0, 12);
    drag.target = dropTarget(e.clientX, e.clientY);
    const t = drag.target && views.get(drag.target.id);
    if (!t || !drag.target) {
      dropLine.hidden = true;
      return;
    }
    const r = t.el.getBoundingClientRect();
    const tr = t.text.getBoundingClientRect();
    const base = main.getBoundingClientRect();
    const indentPx = drag.target.where === 'into' ? 28 : 0;
    dropLine.hidden = false;
    dropLine.style.top = `${(drag.target.where === 'before' ? r.top : r.bottom) - base.top - 1}px`;
    dropLine.style.left = `${tr.left - base.left + indentPx - 14}px`;
    dropLine.style.width = `${Math.max(40, outline.getBoundingClientRect().right - tr.left - indentPx + 14)}px`;
  }

  /**
   * Which row the pointer is over and where the bullet would go.
   * @param {number} x @param {number} y
   * @returns {{id: string, where: 'before'|'after'|'into'}|null}
   */
  function dropTarget(x, y) {
    if (!drag) return null;
    const hit = document.elementFromPoint(Math.max(x, outline.getBoundingClientRect().left + 40), y);
    const v = hit ? viewOf(hit) : null;
    if (!v || !v.row || v.row.id === drag.id) return null;
    const r = v.el.getBoundingClientRect();
    const rel = (y - r.top) / Math.max(1, r.height);
    /** @type {'before'|'after'|'into'} */
    let where = rel < 0.3 ? 'before' : rel > 0.7 ? 'after' : 'into';
    // below an expanded parent, "after" would land far down (after its children): go in first
    if (where === 'after' && v.row.hasChildren && !v.row.collapsed) where = 'into';
    return { id: v.row.id, where };
  }

  /** @param {PointerEvent} e */
  function onPointerUp(e) {
    if (!drag || e.pointerId !== drag.pid) return;
    const d = drag;
    drag = null;
    dropLine.hidden = true;
    d.ghost?.remove();
    d.v.el.classList.remove('is-dragging');
    editor.classList.remove('is-dragging');
    if (!d.started) {
      // a click on the bullet: fold or unfold it
      const r = d.v.row;
      if (e.type === 'pointerup' && r && r.hasChildren) commit(setCollapsed(rows(), r.id, !r.collapsed, opts()));
      else if (e.type === 'pointerup' && r) focusView(d.v, { offset: r.content.length });
      return;
    }
    if (e.type !== 'pointerup' || !d.target) return;
    commit(dropRow(rows(), d.id, d.target.id, d.target.where, opts()));
  }

  /**
   * A viewer's keys go nowhere (the text is not editable): say why at the first one instead
   * of ignoring them. Only for keys aimed at the document (not at a dialog's field).
   * @param {KeyboardEvent} e
   */
  const onViewerKey = (e) => {
    if (state?.role !== 'viewer' || e.key.length !== 1 || e.ctrlKey || e.metaKey || e.altKey) return;
    const t = /** @type {Node|null} */ (e.target);
    if (t && t !== document.body && !editor.contains(t)) return;
    if (t instanceof HTMLElement && (t.isContentEditable || t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement)) return;
    showNotice('You can only read this document — ask its owner for edit access to change it.');
  };
  document.addEventListener('keydown', onViewerKey);

  // ---- wiring ---------------------------------------------------------------------------------
  outline.addEventListener('keydown', onKeyDown);
  outline.addEventListener('input', onInput);
  outline.addEventListener('paste', onPaste);
  outline.addEventListener('change', onChange);
  outline.addEventListener('compositionstart', () => (composing = true));
  outline.addEventListener('compositionend', (e) => {
    composing = false;
    const v = viewOf(e.target);
    if (v && e.target === v.text) commitTyping(v);
  });
  editor.addEventListener('beforeinput', onBeforeInput);
  editor.addEventListener('focusin', onFocusIn);
  editor.addEventListener('focusout', onFocusOut);
  outline.addEventListener('pointerdown', onPointerDown);
  outline.addEventListener('pointermove', onPointerMove);
  outline.addEventListener('pointerup', onPointerUp);
  outline.addEventListener('pointercancel', onPointerUp);
  editor.addEventListener('click', onClick);
  title.addEventListener('input', onInput);
  title.addEventListener('keydown', onTitleKey);
  title.addEventListener('paste', (e) => {
    // a title is one line: pasted line breaks become spaces
    const text = e.clipboardData?.getData('text/plain') ?? '';
    if (!/[\r\n]/.test(text)) return;
    e.preventDefault();
    const sel = getSelectionOffsets(title) ?? { start: 0, end: 0 };
    const cur = title.textContent ?? '';
    const ins = text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
    title.textContent = cur.slice(0, sel.start) + ins + cur.slice(sel.end);
    setSelectionOffsets(title, sel.start + ins.length);
    if (canEdit()) engine.setTitle(title.textContent ?? '');
  });
  add.addEventListener('click', onAdd);

  const onVisibility = () => {
    flushTyping();
    engine.setVisible(document.visibilityState === 'visible');
  };
  const onOnline = () => engine.setOnline(true);
  const onOffline = () => engine.setOnline(false);
  const onPageHide = () => {
    flushTyping();
    engine.pageHide();
  };
  // Page Lifecycle: a frozen page may be discarded without another event; hand the typed
  // text over now (its IndexedDB write begins; the journal holds it until that commits).
  const onFreeze = () => flushTyping();
  document.addEventListener('visibilitychange', onVisibility);
  document.addEventListener('freeze', onFreeze);
  window.addEventListener('online', onOnline);
  window.addEventListener('offline', onOffline);
  window.addEventListener('pagehide', onPageHide);
  window.addEventListener('hashchange', onHash);
  window.addEventListener('scroll', onScroll, { passive: true });
  window.addEventListener('resize', onScroll, { passive: true });

  const off = engine.subscribe((s) => {
    state = s;
    scheduleRender();
  });
  opening.catch((/** @type {unknown} */ err) => showNotice(err instanceof Error ? err.message : String(err), { sticky: true }));

  return {
    engine,
    destroy() {
      flushTyping();
      destroyed = true;
      if (rafId) cancelAnimationFrame(rafId);
      clearTimeout(noticeTimer);
      clearTimeout(rememberTimer);
      off();
      document.removeEventListener('visibilitychange', onVisibility);
      document.removeEventListener('freeze', onFreeze);
      document.removeEventListener('keydown', onViewerKey);
      window.removeEventListener('online', onOnline);
      window.removeEventListener('offline', onOffline);
      window.removeEventListener('pagehide', onPageHide);
      window.removeEventListener('hashchange', onHash);
      window.removeEventListener('scroll', onScroll);
      window.removeEventListener('resize', onScroll);
      engine.close();
      editor.remove();
    },
  };
}

/**
 * Value equality of two rows (the engine may hand out fresh Row objects for unchanged
 * blocks; comparing fields keeps re-rendering limited to rows that really changed).
 * @param {Row|null} a @param {Row} b
 */
function sameRow(a, b) {
  // The engine keeps the same Row object for an unchanged row (docs/browser.md, Engine API).
  if (a === b) return true;
  return (
    !!a &&
    a.id === b.id &&
    a.depth === b.depth &&
    a.content === b.content &&
    a.type === b.type &&
    a.checked === b.checked &&
    a.collapsed === b.collapsed &&
    a.hasChildren === b.hasChildren &&
    a.language === b.language &&
    a.conflictOf === b.conflictOf &&
    a.conflictResolved === b.conflictResolved &&
    (a.conflictAuthor?.name ?? null) === (b.conflictAuthor?.name ?? null)
  );
}

/** @param {string} name */
function initials(name) {
  const parts = name.trim().split(/\s+/).filter(Boolean);
  const s = parts.length > 1 ? parts[0][0] + parts[parts.length - 1][0] : (parts[0] ?? '?').slice(0, 1);
  return s.toUpperCase();
}

/** @param {string} s */
function hue(s) {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) % 360;
  return h;
}
