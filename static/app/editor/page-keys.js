// The editor page's keys outside the outline's own: Ctrl+F (find), Alt+H / Alt+Shift+H (a
// bullet's / the document's history), Alt+S (share the bullet), `?` (the keys help) anywhere
// on the page but a dialog's field; and a viewer's typing, which goes nowhere, is answered
// once per key with why.

/**
 * @typedef {object} PageKeysDeps
 * @property {HTMLElement} editor the editor's element (keys from elsewhere are not ours)
 * @property {() => void} find
 * @property {(whole: boolean) => void} history
 * @property {() => void} shareBullet
 * @property {() => void} help
 * @property {() => boolean} viewer
 * @property {(text: string) => void} notice
 */

/** @param {PageKeysDeps} o @returns {(e: KeyboardEvent) => void} */
export function pageKeyHandler(o) {
  return (e) => {
    const t = /** @type {Node|null} */ (e.target);
    // the editor, or what holds it (the page's <main> takes focus after a click beside the text)
    const inPage = !t || o.editor.contains(t) || t.contains(o.editor);
    if (!inPage || e.defaultPrevented) return;
    const typingField = t instanceof HTMLElement && (t.isContentEditable || t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement);
    if ((e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 'f') {
      e.preventDefault();
      o.find();
      return;
    }
    // By the key's place (e.code), so a layout where Alt+H types a character still has it.
    if (e.altKey && !e.ctrlKey && !e.metaKey && e.code === 'KeyH') {
      e.preventDefault();
      o.history(e.shiftKey);
      return;
    }
    if (e.altKey && !e.ctrlKey && !e.metaKey && !e.shiftKey && e.code === 'KeyS') {
      e.preventDefault();
      o.shareBullet();
      return;
    }
    if (e.key === '?' && !typingField && !e.ctrlKey && !e.metaKey) {
      e.preventDefault();
      o.help();
      return;
    }
    if (!o.viewer() || e.key.length !== 1 || e.ctrlKey || e.metaKey || e.altKey || typingField) return;
    o.notice('You can only read this document — ask its owner for edit access to change it.');
  };
}

/**
 * Listens to each `[target, type, handler, options]` and returns the one call that stops them all.
 * @param {[EventTarget, string, EventListener, AddEventListenerOptions?][]} list
 * @returns {() => void}
 */
export function listenAll(list) {
  for (const [t, type, fn, opt] of list) t.addEventListener(type, fn, opt);
  return () => {
    for (const [t, type, fn] of list) t.removeEventListener(type, fn);
  };
}
