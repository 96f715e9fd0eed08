// The outline editor page: `mountEditor(root, options)` (contract in editor.d.ts) opens the
// document's engine and wires the editor's parts, each the owner of its own state:
//   EditorChrome    — bar, breadcrumbs, title, footer (status, notices)      chrome.js
//   OutlineView     — which rows are shown and drawn, their RowViews          outline-view.js
//   InputController — keys, typing, selection, clipboard, drag → the engine  input-controller.js
//   FindBar         — find in the document                                    find-bar.js
//   FindHighlights  — the hits marked and shown in the outline                find-highlights.js
//   OutlineTransfer — export, copy as Markdown, import into what is shown     outline-transfer.js
//   Panels          — find, history, conflicts, backlinks, keys help (lazy)   panels.js
//   DocTitles       — readable documents: [[link]] titles, the [[ picker      doc-titles.js
//   BulletReveal    — the bullet a link points at, shown once it exists       reveal.js
//   AccessAlert     — signed out / access lost, with the text kept            access-alert.js
//   pageKeyHandler  — Ctrl+F, Alt+H, ? and a viewer's typing, page-wide       page-keys.js
// One direction of data: the engine owns the document; its state is drawn by `render`;
// input builds the next flat list with outline-ops.js and hands it to `engine.commitRows`,
// whose new state comes back through `render`.
//
// Every bullet is a `contenteditable="plaintext-only"` line rather than a textarea: it wraps
// and grows with its text with no measuring, shows rendered markdown and raw text in the same
// box (no swap of elements, so focus and layout stay put), and the browser never inserts
// markup on paste or typing. The caret is handled through the Selection API (caret.js).

import { DocSyncEngine } from '../../engine/engine.js';
import { openStore } from '../../engine/store.js';
import { newClientId } from '../../engine/ids.js';
import { readFirstScreen, keepFirstScreen, firstScreenOf, pageStorage } from '../first-screen.js';
import { HeldKeys, holdKeys, typeAgain } from './type-ahead.js';
import { ancestorIndices, indexOfId } from './outline-ops.js';
import { takeOver } from './pending-import.js';
import { FindHighlights } from './find-highlights.js';
import { OutlineTransfer } from './outline-transfer.js';
import { EditorChrome } from './chrome.js';
import { OutlineView } from './outline-view.js';
import { InputController } from './input-controller.js';
import { setSelectionOffsets } from './caret.js';
import { TouchToolbar } from './touch-toolbar.js';
import { LinkPicker } from './link-picker.js';
import { DocTitles } from './doc-titles.js';
import { AccessAlert } from './access-alert.js';
import { BulletReveal } from './reveal.js';
import { Panels } from './panels.js';
import { pageKeyHandler, listenAll } from './page-keys.js';
import { afterNextPaint } from '../ui/dom.js';

/** @typedef {import('./editor.js').MountOptions} MountOptions */
/** @typedef {import('./editor.js').EditorMount} EditorMount */
/** @typedef {import('./editor.js').EditorRoute} EditorRoute */
/** @typedef {import('../../engine/types.js').EngineState} EngineState */
/** @typedef {import('../../engine/types.js').FlatRow} FlatRow */
/** @typedef {import('../../engine/types.js').Row} Row */
/** @typedef {import('./outline-io.js').Item} Item */

const CSS_HREF = '/app/editor/editor.css';
const HIDE_DONE_KEY = 'docsync:hide-completed';
/** How often the first screen is kept while the document changes (and when the page goes). */
const KEEP_EVERY_MS = 2_000;

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
 * @param {HTMLElement} root
 * @param {MountOptions} opts
 * @returns {Promise<EditorMount>}
 */
export async function mountEditor(root, opts) {
  const { docId, me, clientId, openShareDialog, snapshot, stored } = opts;
  const cssReady = ensureCss();
  storeOpening ??= openStore({ indexedDB }).catch((e) => {
    storeOpening = null; // try again on the next document
    throw e;
  });
  const userId = me?.userId ?? me?.id ?? '';
  const storage = pageStorage();
  await cssReady;
  performance.mark('docsync:editor-css');

  /** @type {EngineState|null} */
  let state = null;
  let rafId = 0;
  let destroyed = false;
  let firstShown = false;
  /** the held keys were taken (at the first render of the loaded document) */
  let typedAgain = false;
  let hideDone = localStorage.getItem(HIDE_DONE_KEY) === '1';
  /** @type {string|null} the bullet the caret was last in (a menu takes the focus away) */
  let lastFocusedId = null;
  /** Whether a row holds typed text not handed over yet (the input controller, once made). @type {(id: string) => boolean} */
  let typingHolds = () => false;

  // role null = not known yet (opened from this device's store, offline): editable, the
  // engine refuses if the server later says viewer. Signed out (401) stays editable: what is
  // typed is queued on this device and sent after "Log in again", like offline; no access
  // (403/404) is read-only.
  const canEdit = () => !!state && state.loaded && state.role !== 'viewer' && (!state.error || state.error.status === 401);

  /** @type {EditorChrome} */
  const chrome = new EditorChrome(document, {
    docId,
    userId,
    onShare: () => openShareDialog?.(docId, { onChanged: () => void engine.syncNow() }),
    onZoom: (id) => zoomTo(id),
    onConflicts: () => void panels.openConflicts(),
    menu: [
      { label: 'Find in document (Ctrl+F)', icon: 'search', onSelect: () => void panels.openFind() },
      { label: 'History and versions (Alt+Shift+H)', onSelect: () => void panels.openHistory() },
      { label: 'History of this bullet (Alt+H)', onSelect: () => void panels.openBulletHistory() },
      { label: 'Share this bullet… (Alt+S)', icon: 'team', onSelect: () => shareBullet() },
      { label: 'Review conflicts', onSelect: () => void panels.openConflicts() },
      { label: 'Expand all', onSelect: () => void controller.foldAll(false) },
      { label: 'Collapse all', onSelect: () => void controller.foldAll(true) },
      { label: 'Show two levels', onSelect: () => void controller.foldAll(true, 2) },
      { label: 'Hide / show completed', icon: 'check', onSelect: () => toggleHideDone() },
      { label: 'Export as Markdown', onSelect: () => transfer.exportAs('md') },
      { label: 'Export as OPML', onSelect: () => transfer.exportAs('opml') },
      { label: 'Export as plain text', onSelect: () => transfer.exportAs('txt') },
      { label: 'Copy as text', onSelect: () => void transfer.copyAsText() },
      { label: 'Import Markdown, OPML or text…', onSelect: () => transfer.pickImport() },
      { label: 'Keyboard shortcuts (?)', onSelect: () => void panels.openKeysHelp() },
    ],
  });
  /** @type {OutlineView} */
  const view = new OutlineView(chrome.outline, {
    bottomInset: () => chrome.foot.getBoundingClientRect().height,
    isTyping: (id) => typingHolds(id),
  });
  view.setHideCompleted(hideDone);
  view.setZoom(opts.zoomId);
  root.append(chrome.editor);
  // The first screen as last shown on this device, drawn read-only while this device's copy
  // is read and its model built (a big document: a few hundred ms); the engine's first
  // state then takes over the same rows (first-screen.js).
  let early = opts.zoomId ? null : readFirstScreen(storage, userId, docId);
  // Keys typed into those rows before they are editable, typed again once they are (and
  // those a page closed too early left on this device).
  const held = new HeldKeys(storage, userId, docId, newClientId());
  /** @type {(() => void)|null} */
  let stopHolding = null;
  /** @param {import('../first-screen.js').FirstScreen} first */
  const drawEarly = (first) => {
    stopHolding ??= holdKeys(chrome.outline, held);
    const shown = earlyState(docId, first);
    chrome.render(shown, { readOnly: true, zoomPath: null, zoomFound: true, signedOut: false, early: true });
    view.render(shown, false);
    performance.mark('docsync:early-rows');
  };
  if (early) drawEarly(early);
  else if (opts.firstRows && !opts.zoomId) {
    // A document new to this device: the server's first rows, if they come before the
    // snapshot is in (for a big document they do, by far).
    opts.firstRows.then((reply) => {
      const first = firstScreenOf(reply);
      if (!first || destroyed || firstShown || state?.loaded || state?.error) return;
      early = first;
      drawEarly(first);
    }, () => {});
  }

  const store = await storeOpening;
  // Rows drawn early are painted before the editor's setup below takes the main thread
  // (in a fresh tab, where every function is compiled on its first call, ≈ 100 ms).
  if (early) await afterNextPaint(undefined);
  const engine = new DocSyncEngine({
    docId,
    clientId,
    user: { userId, name: me?.displayName || me?.name || '' },
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

  // The documents this user can read: titles for [[links]] and choices for the [[ picker.
  const titles = new DocTitles(opts.api, () => /** @type {Row[]} */ (engine.state.rows), () => {
    view.invalidate();
    chrome.relabel();
    panels.redrawBacklinks();
    scheduleRender();
  });
  const picker = new LinkPicker(document, {
    docId,
    docs: (fresh) => titles.load(fresh),
    insert: (v, from, to, text) => controller.replaceText(v, from, to, text),
  });
  /** @type {InputController} */
  const controller = new InputController({
    picker,
    engine,
    view,
    chrome,
    state: () => state,
    canEdit,
    render: () => renderNow(),
    zoom: (id) => zoomTo(id),
    openFind: () => void panels.openFind(),
    openHelp: () => void panels.openKeysHelp(),
  });
  typingHolds = (id) => controller.typing.holds(id);
  const hits = new FindHighlights({
    view, outline: chrome.outline, rows: () => /** @type {Row[]} */ (engine.state.rows), zoomTo: (id) => zoomTo(id),
  });
  const transfer = new OutlineTransfer({
    rows: () => /** @type {Row[]} */ (engine.state.rows),
    title: () => engine.state.title,
    zoomed: () => view.zoom,
    zoomTitle: () => {
      const path = zoomPath();
      return path && path.length ? path[path.length - 1].content : null;
    },
    canEdit,
    newId: () => engine.newBlockId(),
    controller,
    notice: (text) => chrome.showNotice(text),
  });
  // Parts not needed for the first bullets are loaded when first used (or after the first
  // paint), so opening a document fetches and compiles fewer modules.
  const panels = new Panels({
    docId, clientId, api: opts.api, engine, chrome, hits, canEdit,
    roleKnown: () => state?.role != null,
    bulletGuest: () => !!state?.bulletGuest,
    caretBullet: () => view.focusedId ?? lastFocusedId,
    refocus: () => {
      // back where the caret was before the panel took the focus (else the first bullet, else
      // the title): keys typed next must land somewhere visible
      const id = view.focusedId ?? lastFocusedId ?? view.rows[0]?.id;
      const v = id ? view.ensure(id) : null;
      if (v) view.focus(v, { offset: (v.text.textContent ?? '').length });
      else chrome.title.focus();
    },
    reveal: (id) => reveal.want(id),
    linkTitles: () => void titles.load().catch(() => {}),
  });
  const reveal = new BulletReveal(opts.blockId, {
    state: () => state,
    unfold: (ids) => engine.setFolds(ids.map((id) => [id, false])),
    scrollTo: (id) => view.scrollTo(id),
    notice: (text) => chrome.showNotice(text),
  });
  const alert = new AccessAlert(document, {
    api: opts.api,
    rows: () => /** @type {Row[]} */ (engine.state.rows),
    title: () => engine.state.title,
    navigate: opts.navigate ?? ((u) => location.assign(u)),
    copyAsText: () => void transfer.copyAsText(),
    notice: (text) => chrome.showNotice(text),
  });
  chrome.main.insertBefore(alert.el, chrome.title);
  const toolbar = new TouchToolbar(document, (cmd) => controller.runOnFocused(cmd));
  chrome.editor.append(toolbar.el);
  chrome.main.append(picker.el);

  // ---- rendering ----------------------------------------------------------------------------
  function scheduleRender() {
    if (!rafId) rafId = requestAnimationFrame(renderNow);
  }

  function renderNow() {
    if (rafId) cancelAnimationFrame(rafId);
    rafId = 0;
    if (!state || destroyed) return;
    const s = state;
    // The kept first screen stays until this device's copy (or the server's) is in.
    if (early && !s.loaded && !s.error) return;
    early = null;
    stopHolding?.();
    stopHolding = null;
    // A document this person can no longer read is not drawn from this device again.
    if (s.error && (s.error.status === 403 || s.error.status === 404)) forgetFirstScreen();
    const signedOut = s.error?.status === 401;
    const titleChanged = chrome.render(s, { readOnly: !canEdit(), zoomPath: zoomPath(), zoomFound: view.zoomFound || !s.loaded, signedOut });
    if (titleChanged) rememberTitle(s.title);
    view.render(s, canEdit());
    if (s.loaded && !typedAgain) {
      typedAgain = true;
      const keys = held.take();
      if (keys.length && canEdit() && !s.error) void typeAgain(view, keys);
    }
    controller.syncSelection();
    // rows drawn since (scrolling a big document) get the find's highlights too
    if (panels.findQuery) hits.mark(panels.findQuery);
    alert.render(s);
    reveal.run();
    applyPendingImport();
    if (s.loaded && !s.error) keepSoon();
    if (!firstShown && s.loaded) {
      firstShown = true;
      // titles of linked documents and the backlinks: after the first bullets are painted,
      // never on their way (two requests and, for links, a redraw)
      setTimeout(() => {
        if (destroyed) return;
        if (titles.linked()) titles.load().catch(() => {});
        void panels.refreshBacklinks();
        // Ctrl+F should open at once: the find bar's module is fetched now, not at the key.
        import('./find-bar.js').catch(() => {});
      }, 300);
      // a new, empty document: start with its title
      // (the shell may have focused the heading for screen readers before it was editable)
      const userPlaced = root.contains(document.activeElement) && document.activeElement !== chrome.title;
      if (!s.title && s.rows.length === 0 && canEdit() && !userPlaced) {
        // focus alone may leave the selection where it was (a closed dialog, a button):
        // typed keys would go nowhere; put the caret into the title explicitly
        chrome.title.removeAttribute('tabindex');
        chrome.title.blur();
        chrome.title.focus();
        setSelectionOffsets(chrome.title, (chrome.title.textContent ?? '').length);
      }
    }
  }

  /** The zoomed bullet and its ancestors, outermost first (null when not zoomed). */
  function zoomPath() {
    if (!view.zoom || !state) return null;
    const all = state.rows;
    const i = indexOfId(all, view.zoom);
    if (i < 0) return [];
    return [...ancestorIndices(all, i).reverse().map((k) => all[k]), all[i]];
  }

  /**
   * The sharing dialog of the bullet with the caret (PROTOCOL §10): it and everything below
   * it, shared without the rest of the document.
   */
  function shareBullet() {
    const id = view.focusedId ?? lastFocusedId;
    const row = id ? /** @type {Row[]} */ (engine.state.rows).find((r) => r.id === id) : null;
    if (!row) {
      chrome.showNotice('Put the caret into a bullet to share it with everything below it.');
      return;
    }
    void openShareDialog?.(docId, { blockId: row.id, title: row.content, onChanged: () => void engine.syncNow() });
  }

  // ---- zoom ---------------------------------------------------------------------------------
  /** Zooms via the URL (so Back zooms out again). @param {string|null} id */
  function zoomTo(id) {
    controller.typing.flush();
    const url = id ? `/d/${encodeURIComponent(docId)}/b/${encodeURIComponent(id)}` : `/d/${encodeURIComponent(docId)}`;
    if (opts.navigate) opts.navigate(url);
    else {
      history.pushState(null, '', url);
      applyZoom(id);
    }
  }

  /** @param {string|null} id */
  function applyZoom(id) {
    if (id === view.zoom) return;
    controller.clearSelection();
    const from = view.zoom;
    view.setZoom(id);
    window.scrollTo(0, 0);
    renderNow();
    // the caret: into the first bullet shown (zoom in), or back to the bullet zoomed out of
    const target = from && !id ? from : from && id && view.indexOf(from) >= 0 ? from : view.rows[0]?.id;
    const v = target ? view.ensure(target) : null;
    if (v && v.row) view.focus(v, { offset: v.row.content.length });
  }

  // ---- hide completed --------------------------------------------------------------------------
  function toggleHideDone() {
    hideDone = !hideDone;
    localStorage.setItem(HIDE_DONE_KEY, hideDone ? '1' : '0');
    view.setHideCompleted(hideDone);
    chrome.showNotice(hideDone ? 'Completed bullets are hidden.' : 'Completed bullets are shown.');
    renderNow();
  }

  /** Bullets handed over by the page that made this document for them (import, rescue). */
  function applyPendingImport() {
    if (!state?.loaded || !state.synced || !canEdit()) return;
    const waiting = takeOver(docId);
    if (!waiting) return;
    if (waiting.title && !state.title) engine.setTitle(waiting.title);
    transfer.importItems(waiting.items);
  }

  // ---- recent documents, deep links ---------------------------------------------------------------
  // ---- the first screen, kept for the next opening (first-screen.js) ------------------------
  let keepTimer = 0;
  function keepSoon() {
    if (!keepTimer) keepTimer = window.setTimeout(keepNow, KEEP_EVERY_MS);
  }
  function keepNow() {
    clearTimeout(keepTimer);
    keepTimer = 0;
    const s = engine.state;
    if (s.loaded && !s.error && !forgotten) keepFirstScreen(storage, userId, docId, { title: s.title, icon: s.icon, rows: s.rows });
  }
  let forgotten = false;
  function forgetFirstScreen() {
    if (forgotten) return;
    forgotten = true;
    clearTimeout(keepTimer);
    keepTimer = 0;
    keepFirstScreen(storage, userId, docId, { title: '', icon: null, rows: [] });
  }

  let rememberTimer = 0;
  /** @param {string} t */
  function rememberTitle(t) {
    clearTimeout(rememberTimer);
    rememberTimer = window.setTimeout(() => {
      import('../recent.js').then((m) => m.rememberDoc?.({ docId, title: t })).catch(() => {});
    }, 500);
  }

  const onDocumentKey = pageKeyHandler({
    editor: chrome.editor,
    find: () => void panels.openFind(),
    history: (whole) => void (whole ? panels.openHistory() : panels.openBulletHistory()),
    shareBullet: () => shareBullet(),
    help: () => void panels.openKeysHelp(),
    viewer: () => state?.role === 'viewer',
    notice: (text) => chrome.showNotice(text),
  });

  // ---- wiring ---------------------------------------------------------------------------------
  const detach = controller.attach();
  const detachToolbar = toolbar.attach();
  // the touch toolbar follows the caret: shown while a bullet (or a selection) is being edited
  const onFocusChange = () =>
    setTimeout(() => {
      if (view.focusedId) lastFocusedId = view.focusedId;
      toolbar.show(!destroyed && canEdit() && (view.focusedId != null || controller.selection.active));
    }, 0);
  chrome.editor.addEventListener('focusin', onFocusChange);
  chrome.editor.addEventListener('focusout', onFocusChange);
  const onVisibility = () => {
    controller.typing.flush();
    engine.setVisible(document.visibilityState === 'visible');
    if (document.visibilityState === 'visible' && firstShown) void panels.refreshBacklinks();
  };
  const onOnline = () => engine.setOnline(true);
  const onOffline = () => engine.setOnline(false);
  const onPageHide = () => {
    controller.typing.flush();
    engine.pageHide();
    if (keepTimer) keepNow();
  };
  // Page Lifecycle: a frozen page may be discarded without another event; hand the typed
  // text over now (its IndexedDB write begins; the journal holds it until that commits).
  const onFreeze = () => controller.typing.flush();
  const onHash = () => {
    try {
      reveal.want(decodeURIComponent(location.hash.slice(1)) || null);
    } catch {
      reveal.want(null);
    }
  };
  const onScroll = () => {
    view.onScroll();
    if (panels.findQuery) hits.mark(panels.findQuery);
  };
  const unlisten = listenAll([
    [document, 'keydown', /** @type {EventListener} */ (onDocumentKey)],
    [document, 'visibilitychange', onVisibility],
    [document, 'freeze', onFreeze],
    [window, 'online', onOnline],
    [window, 'offline', onOffline],
    [window, 'pagehide', onPageHide],
    [window, 'hashchange', onHash],
    [window, 'scroll', onScroll, { passive: true }],
    [window, 'resize', onScroll, { passive: true }],
  ]);

  const off = engine.subscribe((s) => {
    state = s;
    scheduleRender();
  });

  opening.catch((/** @type {unknown} */ err) => chrome.showNotice(err instanceof Error ? err.message : String(err), { sticky: true }));

  return {
    engine,
    route(r) {
      applyZoom(r.zoomId);
      if (r.blockId) reveal.want(r.blockId);
    },
    destroy() {
      detach();
      detachToolbar();
      destroyed = true;
      stopHolding?.();
      if (rafId) cancelAnimationFrame(rafId);
      clearTimeout(rememberTimer);
      if (keepTimer) keepNow();
      off();
      panels.close();
      unlisten();
      engine.close();
      chrome.destroy();
    },
  };
}

/**
 * What the chrome and the outline draw of a kept first screen: the rows and title as last
 * shown, nothing known yet of the server (no role: nothing to share or edit until the
 * engine's state is in).
 * @param {string} docId @param {import('../first-screen.js').FirstScreen} first
 * @returns {EngineState}
 */
function earlyState(docId, first) {
  return {
    docId, title: first.title, titleVersion: 0, icon: first.icon, role: null, mode: 'private', shared: false,
    sessions: 0, bulletGuest: false, people: [], rows: first.rows, locks: new Map(), lastSeq: 0,
    stage: 'connecting', stageLabel: 'Opening…', pending: 0, unsaved: 0, loaded: true, synced: false,
    error: null, notice: null, noticeSeq: 0, storageError: null,
  };
}
