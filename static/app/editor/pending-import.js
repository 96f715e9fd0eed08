// Bullets handed to a document that was just made for them: the home page's "Import…" and
// the editor's "Save my text as a new document" create the document, leave its bullets here
// (sessionStorage, this tab) and open it; the editor puts them in once the document is
// loaded and editable, exactly once (taken, then removed).

/** @typedef {import('./outline-io.js').Item} Item */

const PREFIX = 'docsync:import:';

/** @param {string} docId @param {{title: string|null, items: Item[]}} what */
export function handOver(docId, what) {
  sessionStorage.setItem(PREFIX + docId, JSON.stringify(what));
}

/**
 * The bullets waiting for this document, removed as they are taken (null when none).
 * @param {string} docId @returns {{title: string|null, items: Item[]}|null}
 */
export function takeOver(docId) {
  const raw = sessionStorage.getItem(PREFIX + docId);
  if (raw == null) return null;
  sessionStorage.removeItem(PREFIX + docId);
  try {
    const v = JSON.parse(raw);
    return { title: typeof v.title === 'string' ? v.title : null, items: Array.isArray(v.items) ? v.items : [] };
  } catch {
    return null;
  }
}
