// Markdown pages as Logseq (and tools like it: Obsidian's front matter, org-style markers)
// write them, read as what they mean rather than as text: YAML front matter and page
// properties (`key:: value` lines before the first bullet) are the page's, not bullets —
// `title::` names the document; block properties (`collapsed:: true`, `id:: …` under a bullet)
// are dropped from the bullet's text; `TODO` / `DOING` / `NOW` / `LATER` / `WAIT` make an open
// todo, `DONE` (and `CANCELED`) a completed one; `[[Page]]` becomes a link to the document of
// that title when the reader knows one, else stays as written. `((block refs))` stay as text
// here; a bullet's `id::` is its `ref`, which a whole-graph import links them to. Logseq's own
// block properties (`collapsed::`, `id::`, `heading::`, timestamps…) leave the text; a
// person's own (`type:: book`) stay in it as a line, where Logseq would read them again.
// Pure, so Node tests read real-shaped pages.

import { fromMarkdown } from './outline-io.js';

/** @typedef {import('./outline-io.js').Item} Item */

const PROPERTY = /^([A-Za-z][\w-]*):: ?(.*)$/;
const MARKER = /^(TODO|DOING|NOW|LATER|WAIT|WAITING|IN-PROGRESS|DONE|CANCELED|CANCELLED) +/;
const DONE = new Set(['DONE', 'CANCELED', 'CANCELLED']);
/** Properties Logseq writes for itself: they mean nothing as text. */
const SYSTEM = /^(id|collapsed|heading|background-color|background-image|created-at|updated-at|last-modified-at|card-.*|query-.*|logseq\..*|hl-.*|ls-type|template-including-parent)$/;

/** @typedef {Item & {ref?: string}} LogseqItem */

/**
 * @param {string} text a page's Markdown
 * @param {{linkTo?: (title: string) => string|null}} [opts] the document ID of a title, if any
 * @returns {{title: string|null, items: LogseqItem[], properties: Record<string, string>, aliases: string[]}}
 */
export function fromLogseq(text, opts = {}) {
  const lines = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n').split('\n');
  /** @type {Record<string, string>} */
  const properties = {};
  let i = 0;
  // YAML front matter: `---` … `---` at the very top (simple `key: value` lines kept).
  if (lines[0]?.trim() === '---') {
    const end = lines.findIndex((l, k) => k > 0 && l.trim() === '---');
    if (end > 0) {
      for (const l of lines.slice(1, end)) {
        const m = /^([A-Za-z][\w-]*):\s*(.*)$/.exec(l.trim());
        if (m) properties[m[1].toLowerCase()] = unquote(m[2]);
      }
      i = end + 1;
    }
  }
  // Page properties: `key:: value` lines (or one first bullet of only those) before the rest.
  for (; i < lines.length; i++) {
    const t = lines[i].trim();
    if (t === '') continue;
    const m = PROPERTY.exec(t);
    if (!m) break;
    properties[m[1].toLowerCase()] = m[2].trim();
  }
  const read = fromMarkdown(lines.slice(i).join('\n'));
  /** @type {LogseqItem[]} */
  const items = [];
  for (let k = 0; k < read.items.length; k++) {
    /** @type {LogseqItem} */
    const it = read.items[k];
    const hasChildren = read.items[k + 1]?.depth > it.depth;
    const kept = [];
    /** @type {Record<string, string>} */
    const own = {};
    for (const line of it.content.split('\n')) {
      const m = it.type === 'code' ? null : PROPERTY.exec(line.trim());
      if (m) own[m[1].toLowerCase()] = m[2].trim();
      // a person's property on a bullet with text stays as its line
      if (m && (SYSTEM.test(m[1].toLowerCase()) || kept.join('') === '')) continue;
      kept.push(line);
    }
    if (own.id) it.ref = own.id.toLowerCase();
    it.content = kept.join('\n');
    if (kept.join('') === '' && Object.keys(own).length) {
      // A bullet of properties alone: the page's when it opens the page, else nothing to show.
      if (!hasChildren) {
        if (items.length === 0 && it.depth === 0) Object.assign(properties, own);
        continue;
      }
    }
    if (it.type === 'bullet') {
      const m = MARKER.exec(it.content);
      if (m) {
        it.type = 'todo';
        it.checked = DONE.has(m[1]);
        it.content = it.content.slice(m[0].length);
      }
    }
    if (it.type !== 'code' && opts.linkTo) it.content = linkPages(it.content, opts.linkTo);
    items.push(it);
  }
  // Depths stay contiguous after dropped bullets (they had no children).
  let prev = -1;
  for (const it of items) {
    it.depth = Math.max(0, Math.min(it.depth, prev + 1));
    prev = it.depth;
  }
  const title = properties.title || read.title || null;
  const aliases = (properties.alias ?? '')
    .split(',')
    .map((a) => a.trim().replace(/^\[\[(.*)\]\]$/, '$1').trim())
    .filter((a) => a !== '');
  return { title, items, properties, aliases };
}

/** `[[Page]]` → `[[doc_…]]` where a document of that title exists. @param {string} s @param {(title: string) => string|null} linkTo */
function linkPages(s, linkTo) {
  return s.replace(/\[\[([^\[\]]+)\]\]/g, (whole, name) => {
    if (/^doc_[0-9a-f]+$/.test(name)) return whole;
    const id = linkTo(name.trim());
    return id ? `[[${id}]]` : whole;
  });
}

/** @param {string} s */
function unquote(s) {
  const t = s.trim();
  return /^(["']).*\1$/.test(t) ? t.slice(1, -1) : t;
}
