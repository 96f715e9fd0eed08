// The outline editor page: `mountEditor(root, options)` (contract in editor.d.ts) opens the
// document's engine and wires the editor's parts, each the owner of its own state:
//   EditorChrome    — bar, breadcrumbs, title, footer (status, notices)      chrome.js
//   OutlineView     — which rows are shown and drawn, their RowViews          outline-view.js
//   InputController — keys, typing, selection, clipboard, drag → the engine  input-controller.js
//   FindBar         — find in the document                                    find-bar.js
//   FindHighlights  — the hits marked and shown in the outline                find-highlights.js
//   OutlineTransfer — export, copy as Markdown, import into what is shown     outline-transfer.js
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
import { ancestorIndices, indexOfId, setProps } from './outline-ops.js';
import { fromMarkdown, toMarkdown } from './outline-io.js';
import { handOver, takeOver } from './pending-import.js';
import { FindHighlights } from './find-highlights.js';
import { OutlineTransfer } from './outline-transfer.js';
import { EditorChrome } from './chrome.js';
import { OutlineView } from './outline-view.js';
import { InputController } from './input-controller.js';
import { setSelectionOffsets } from './caret.js';
import { TouchToolbar } from './touch-toolbar.js';
import { LinkPicker } from './link-picker.js';
import { setLinkTitles } from './markdown.js';
import { newOpId } from '../../engine/ids.js';

/** @typedef {import('./editor.js').MountOptions} MountOptions */
/** @typedef {import('./editor.js').EditorMount} EditorMount */
/** @typedef {import('./editor.js').EditorRoute} EditorRoute */
/** @typedef {import('../../engine/types.js').EngineState} EngineState */
/** @typedef {import('../../engine/types.js').FlatRow} FlatRow */
/** @typedef {import('../../engine/types.js').Row} Row */
/** @typedef {import('./outline-io.js').Item} Item */

const CSS_HREF = '/app/editor/editor.css';
const HIDE_DONE_KEY = 'docsync:hide-completed';

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

  /** @type {EngineState|null} */
  let state = null;
  let rafId = 0;
  let destroyed = false;
  let firstShown = false;
  let hideDone = localStorage.getItem(HIDE_DONE_KEY) === '1';
  /** @type {string|null} the bullet the caret was last in (a menu takes the focus away) */
  let lastFocusedId = null;
  /** @type {string|null} the #bullet to reveal (once) */
  let revealId = opts.blockId;
  /** @type {string|null} */
  let missingSaid = null;

  // role null = not known yet (opened from this device's store, offline): editable, the
  // engine refuses if the server later says viewer. Signed out (401) stays editable: what is
  // typed is queued on this device and sent after "Log in again", like offline; no access
  // (403/404) is read-only.
  const canEdit = () => !!state && state.loaded && state.role !== 'viewer' && (!state.error || state.error.status === 401);

  /** @type {EditorChrome} */
  const chrome = new EditorChrome(document, {
    docId,
    userId: me?.userId ?? me?.id ?? '',
    onShare: () => openShareDialog?.(docId),
    onZoom: (id) => zoomTo(id),
    onConflicts: () => void openConflicts(),
    menu: [
      { label: 'Find in document (Ctrl+F)', icon: 'search', onSelect: () => void openFind() },
      { label: 'History and versions (Alt+Shift+H)', onSelect: () => void openHistory() },
      { label: 'History of this bullet (Alt+H)', onSelect: () => void openBulletHistory() },
      { label: 'Review conflicts', onSelect: () => void openConflicts() },
      { label: 'Expand all', onSelect: () => void controller.foldAll(false) },
      { label: 'Collapse all', onSelect: () => void controller.foldAll(true) },
      { label: 'Show two levels', onSelect: () => void controller.foldAll(true, 2) },
      { label: 'Hide / show completed', icon: 'check', onSelect: () => toggleHideDone() },
      { label: 'Export as Markdown', onSelect: () => transfer.exportAs('md') },
      { label: 'Export as OPML', onSelect: () => transfer.exportAs('opml') },
      { label: 'Export as plain text', onSelect: () => transfer.exportAs('txt') },
      { label: 'Copy as text', onSelect: () => void transfer.copyAsText() },
      { label: 'Import Markdown, OPML or text…', onSelect: () => transfer.pickImport() },
      { label: 'Keyboard shortcuts (?)', onSelect: () => void openKeysHelp() },
    ],
  });
  /** @type {OutlineView} */
  const view = new OutlineView(chrome.outline, {
    bottomInset: () => chrome.foot.getBoundingClientRect().height,
    isTyping: (id) => controller.typing.holds(id),
  });
  view.setHideCompleted(hideDone);
  view.setZoom(opts.zoomId);
  // The documents this user can read: titles for [[links]] and choices for the [[ picker.
  /** @type {Map<string, string>} */
  const titles = new Map();
  /** @type {Promise<{docId: string, title: string}[]>|null} */
  let docsLoading = null;
  /** @param {boolean} [fresh] ask the server again */
  /** Whether any bullet links to a document (their titles are worth fetching). */
  const hasDocLinks = () => /** @type {Row[]} */ (engine.state.rows).some((r) => r.content.includes('[[doc_'));
  const loadDocs = (fresh = false) => {
    if (fresh) docsLoading = null;
    // quiet401: an ended session is the editor's to say ("Signed out"), not a jump to /login
    docsLoading ??= opts.api.get('/docs', { quiet401: true }).then((r) => {
      const list = /** @type {{docId: string, title: string}[]} */ ((r?.documents ?? []).map((/** @type {any} */ d) => ({ docId: d.docId, title: d.title ?? '' })));
      for (const d of list) titles.set(d.docId, d.title);
      setLinkTitles((id) => (titles.has(id) ? /** @type {string} */ (titles.get(id)) : null));
      if (hasDocLinks()) {
        view.invalidate(); // links drawn before the titles came: draw them with their titles
        scheduleRender();
      }
      return list;
    }).catch((e) => {
      docsLoading = null;
      throw e;
    });
    return docsLoading;
  };
  const picker = new LinkPicker(document, {
    docId,
    docs: loadDocs,
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
    openFind: () => void openFind(),
    openHelp: () => void openKeysHelp(),
  });
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
  /** @type {import('./find-bar.js').FindBar|null} */
  let find = null;
  async function openFind() {
    if (!find) {
      const { FindBar } = await import('./find-bar.js');
      if (destroyed) return;
      find ??= new FindBar(document, {
        rows: () => /** @type {Row[]} */ (engine.state.rows),
        show: (id, q) => hits.show(id, q),
        clear: () => hits.clear(),
        onClose: () => {
          const v = view.focusedId ? view.view(view.focusedId) : null;
          if (v) view.focus(v, { offset: (v.text.textContent ?? '').length });
        },
      });
      chrome.main.insertBefore(find.el, chrome.crumbs);
    }
    find.show();
  }
  const openKeysHelp = () => import('./keys-help.js').then((m) => m.openKeysHelp());

  // ---- history (versions, a bullet's past, conflicts): loaded on first use ------------------
  async function openHistory() {
    const { openHistoryPanel } = await import('../history/history-panel.js');
    if (destroyed) return;
    openHistoryPanel({
      api: opts.api,
      docId,
      clientId,
      canEdit: canEdit() && state?.role != null,
      onRestored: (summary) => chrome.showNotice(summary),
    });
  }
  /** The history of the focused bullet (else the first one shown). */
  async function openBulletHistory() {
    const rows = /** @type {Row[]} */ (engine.state.rows);
    const id = view.focusedId ?? lastFocusedId ?? rows[0]?.id;
    if (!id) {
      chrome.showNotice('Put the caret into a bullet to see its history.');
      return;
    }
    const { openBulletHistory: open } = await import('../history/bullet-history.js');
    if (destroyed) return;
    const row = () => /** @type {Row[]} */ (engine.state.rows).find((r) => r.id === id) ?? null;
    open({
      api: opts.api,
      docId,
      blockId: id,
      canEdit: canEdit() && state?.role != null,
      current: () => row()?.content ?? null,
      restoreText: (text) => {
        const r = row();
        /** @type {import('../../engine/types.js').Op} */
        const op = { opId: newOpId(), kind: 'set_content', blockId: id, content: text, baseVersion: r?.version ?? 0 };
        return engine.submitOps([op], { step: 'restore' });
      },
    });
  }
  async function openConflicts() {
    const { openConflictReview } = await import('../history/conflict-review.js');
    if (destroyed) return;
    openConflictReview({
      rows: () => /** @type {Row[]} */ (engine.state.rows),
      title: () => engine.state.title,
      canEdit: canEdit(),
      subscribe: (fn) => engine.subscribe(() => fn()),
      accept: (id) => engine.acceptConflict(id),
      discard: (id) => engine.discardConflict(id),
      keep: (id) => engine.keepConflict(id),
      reveal: (id) => {
        revealId = id;
        revealBullet();
      },
    });
  }
  /** @type {import('./backlinks.js').BacklinksPanel|null} */
  let backlinks = null;
  async function refreshBacklinks() {
    if (!backlinks) {
      const { BacklinksPanel } = await import('./backlinks.js');
      if (destroyed) return;
      backlinks ??= new BacklinksPanel(document, async () => {
        const r = await opts.api.get(`/docs/${encodeURIComponent(docId)}/backlinks`, { quiet401: true });
        return r?.backlinks ?? [];
      });
      chrome.main.insertBefore(backlinks.el, chrome.dropLine);
    }
    await backlinks.refresh();
  }
  const alert = document.createElement('div');
  alert.className = 'ed-alert';
  alert.id = 'editor-alert';
  alert.setAttribute('role', 'alert');
  alert.hidden = true;
  chrome.main.insertBefore(alert, chrome.title);
  const toolbar = new TouchToolbar(document, (cmd) => controller.runOnFocused(cmd));
  chrome.editor.append(toolbar.el);
  chrome.main.append(picker.el);
  root.append(chrome.editor);

  // ---- rendering ----------------------------------------------------------------------------
  function scheduleRender() {
    if (!rafId) rafId = requestAnimationFrame(renderNow);
  }

  function renderNow() {
    if (rafId) cancelAnimationFrame(rafId);
    rafId = 0;
    if (!state || destroyed) return;
    const s = state;
    const signedOut = s.error?.status === 401;
    const titleChanged = chrome.render(s, { readOnly: !canEdit(), zoomPath: zoomPath(), zoomFound: view.zoomFound || !s.loaded, signedOut });
    if (titleChanged) rememberTitle(s.title);
    view.render(s, canEdit());
    controller.syncSelection();
    // rows drawn since (scrolling a big document) get the find's highlights too
    if (find?.query) hits.mark(find.query);
    renderAlert(s);
    revealBullet();
    applyPendingImport();
    if (!firstShown && s.loaded) {
      firstShown = true;
      // titles of linked documents and the backlinks: after the first bullets are painted,
      // never on their way (two requests and, for links, a redraw)
      setTimeout(() => {
        if (destroyed) return;
        if (hasDocLinks()) loadDocs().catch(() => {});
        void refreshBacklinks();
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

  // ---- access lost, signed out --------------------------------------------------------------------
  let alertKey = '';
  /** @param {EngineState} s */
  function renderAlert(s) {
    const status = s.error?.status ?? 0;
    const key = status === 401 ? 'signedout' : (status === 403 || status === 404) && s.rows.length ? `lost:${s.pending}` : '';
    if (key === alertKey) return;
    alertKey = key;
    alert.textContent = '';
    alert.hidden = !key;
    if (!key) return;
    const p = document.createElement('p');
    const actions = document.createElement('div');
    actions.className = 'ed-alert-actions';
    /** @param {string} label @param {() => void} fn @param {string} id */
    const button = (label, fn, id) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'btn';
      b.id = id;
      b.textContent = label;
      b.addEventListener('click', fn);
      actions.append(b);
      return b;
    };
    if (status === 401) {
      p.textContent = `You were signed out. ${s.pending ? `Your ${s.pending} unsent ${s.pending === 1 ? 'change is' : 'changes are'} kept on this device and sent when you log in again.` : 'Nothing is lost.'}`;
      button('Log in again', () => {
        const next = location.pathname + location.search + location.hash;
        location.assign(`/login?next=${encodeURIComponent(next)}`);
      }, 'login-again').classList.add('btn-primary');
    } else {
      const kept = s.pending ? ` Your ${s.pending} unsent ${s.pending === 1 ? 'change is' : 'changes are'} kept on this device and sent if the document comes back (its owner can restore it from the Trash).` : '';
      p.textContent = `This document is no longer available to you: it was deleted, or your access ended.${kept} What you see here is this device\u2019s copy — you can also take your text with you:`;
      button('Save my text as a new document', () => rescueAsNewDocument(), 'rescue-new-doc').classList.add('btn-primary');
      button('Copy as text', () => void transfer.copyAsText(), 'rescue-copy');
      // Opening it again asks the server afresh; the queue on this device goes out if it can.
      button('Try again', () => location.reload(), 'rescue-retry');
    }
    alert.prepend(p);
    alert.append(actions);
  }

  async function rescueAsNewDocument() {
    const items = fromMarkdown(toMarkdown(/** @type {Row[]} */ (engine.state.rows))).items;
    try {
      const doc = await opts.api.post('/docs', { title: `${engine.state.title || 'Untitled'} (my copy)` });
      const id = doc?.docId ?? doc?.id;
      if (!id) throw new Error('the server did not name the new document');
      handOver(id, { title: null, items });
      (opts.navigate ?? ((u) => location.assign(u)))(`/d/${encodeURIComponent(id)}`);
    } catch (e) {
      chrome.showNotice(`The new document could not be made: ${e instanceof Error ? e.message : String(e)}. Use “Copy as text”.`);
    }
  }

  // ---- recent documents, deep links ---------------------------------------------------------------
  let rememberTimer = 0;
  /** @param {string} t */
  function rememberTitle(t) {
    clearTimeout(rememberTimer);
    rememberTimer = window.setTimeout(() => {
      import('../recent.js').then((m) => m.rememberDoc?.({ docId, title: t })).catch(() => {});
    }, 500);
  }

  function revealBullet() {
    const id = revealId;
    if (!id || !id.startsWith('blk_') || !state?.loaded) return;
    const all = /** @type {FlatRow[]} */ (engine.state.rows);
    const i = indexOfId(all, id);
    if (i < 0) {
      // Said once the server has answered: this device's copy alone may be behind.
      if (state.synced && missingSaid !== id) {
        missingSaid = id;
        revealId = null;
        chrome.showNotice('That bullet no longer exists (it was deleted, or the link is wrong).');
      }
      return;
    }
    revealId = null;
    const hiddenBy = ancestorIndices(all, i).filter((k) => all[k].collapsed);
    if (hiddenBy.length && canEdit()) {
      let next = all;
      for (const k of hiddenBy) next = /** @type {FlatRow[]} */ (setProps(next, all[k].id, { collapsed: false }));
      controller.commit({ ok: true, rows: next, step: 'props', focus: null });
    }
    const v = view.scrollTo(id);
    if (!v) return;
    v.el.classList.remove('is-target');
    void v.el.offsetWidth;
    v.el.classList.add('is-target');
    setTimeout(() => v.el.classList.remove('is-target'), 2600);
  }

  // ---- keys outside the outline -------------------------------------------------------------------
  /**
   * Ctrl+F and `?` anywhere on the page (not in a dialog's field); a viewer's keys go nowhere
   * (the text is not editable): say why at the first one instead of ignoring them.
   * @param {KeyboardEvent} e
   */
  const onDocumentKey = (e) => {
    const t = /** @type {Node|null} */ (e.target);
    // the editor, or what holds it (the page's <main> takes focus after a click beside the text)
    const inPage = !t || chrome.editor.contains(t) || t.contains(chrome.editor);
    if (!inPage || e.defaultPrevented) return;
    const typingField = t instanceof HTMLElement && (t.isContentEditable || t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement);
    if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 'f') {
      e.preventDefault();
      void openFind();
      return;
    }
    // Alt+H: this bullet's history; Alt+Shift+H: the document's (by the key's place, so a
    // layout where Alt+H types a character still has it).
    if (e.altKey && !e.ctrlKey && !e.metaKey && e.code === 'KeyH') {
      e.preventDefault();
      void (e.shiftKey ? openHistory() : openBulletHistory());
      return;
    }
    if (e.key === '?' && !typingField && !e.ctrlKey && !e.metaKey) {
      e.preventDefault();
      void openKeysHelp();
      return;
    }
    if (state?.role !== 'viewer' || e.key.length !== 1 || e.ctrlKey || e.metaKey || e.altKey || typingField) return;
    chrome.showNotice('You can only read this document — ask its owner for edit access to change it.');
  };

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
    if (document.visibilityState === 'visible' && firstShown) void refreshBacklinks();
  };
  const onOnline = () => engine.setOnline(true);
  const onOffline = () => engine.setOnline(false);
  const onPageHide = () => {
    controller.typing.flush();
    engine.pageHide();
  };
  // Page Lifecycle: a frozen page may be discarded without another event; hand the typed
  // text over now (its IndexedDB write begins; the journal holds it until that commits).
  const onFreeze = () => controller.typing.flush();
  const onHash = () => {
    try {
      revealId = decodeURIComponent(location.hash.slice(1)) || null;
    } catch {
      revealId = null;
    }
    revealBullet();
  };
  const onScroll = () => {
    view.onScroll();
    if (find?.query) hits.mark(find.query);
  };
  document.addEventListener('keydown', onDocumentKey);
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

  opening.catch((/** @type {unknown} */ err) => chrome.showNotice(err instanceof Error ? err.message : String(err), { sticky: true }));

  return {
    engine,
    route(r) {
      applyZoom(r.zoomId);
      if (r.blockId && r.blockId !== revealId) {
        revealId = r.blockId;
        revealBullet();
      }
    },
    destroy() {
      detach();
      detachToolbar();
      destroyed = true;
      if (rafId) cancelAnimationFrame(rafId);
      clearTimeout(rememberTimer);
      off();
      find?.close();
      document.removeEventListener('keydown', onDocumentKey);
      document.removeEventListener('visibilitychange', onVisibility);
      document.removeEventListener('freeze', onFreeze);
      window.removeEventListener('online', onOnline);
      window.removeEventListener('offline', onOffline);
      window.removeEventListener('pagehide', onPageHide);
      window.removeEventListener('hashchange', onHash);
      window.removeEventListener('scroll', onScroll);
      window.removeEventListener('resize', onScroll);
      engine.close();
      chrome.destroy();
    },
  };
}
