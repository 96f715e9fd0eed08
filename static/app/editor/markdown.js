// Inline markdown of a bullet: **bold**, *italic* / _italic_, ~~strike~~, `code`,
// [text](url), bare https:// links, #tags and links to other documents ([[doc_…]], shown as
// the target's current title). `parseInline` is pure (unit-tested in Node);
// `fillInline` builds the DOM with createElement/textContent only — user text never passes
// through innerHTML, so nothing typed can become markup or script.

/**
 * One run of rendered text. `from`/`to`: its range in the raw text; `inner`: the raw index
 * where the shown text starts (after `**`, `[`, …), so a click can be mapped back to raw.
 * @typedef {{kind: 'text'|'bold'|'italic'|'strike'|'code'|'link'|'tag'|'doclink', text: string,
 *   href?: string, docId?: string, from: number, to: number, inner: number}} Token
 */

const RE = new RegExp(
  [
    '(`[^`\\n]+`)', // 1 code
    '(\\*\\*[^*\\n]+?\\*\\*|__[^_\\n]+?__)', // 2 bold
    '(~~[^~\\n]+?~~)', // 3 strike
    '(\\*[^*\\s](?:[^*\\n]*?[^*\\s])?\\*|(?<![\\p{L}\\p{N}_])_[^_\\s](?:[^_\\n]*?[^_\\s])?_(?![\\p{L}\\p{N}_]))', // 4 italic
    '(\\[[^\\]\\n]+\\]\\([^)\\s]+\\))', // 5 link
    '(https?:\\/\\/[^\\s<>]*[^\\s<>().,;:!?\'"\\]])', // 6 bare url
    '((?<![\\p{L}\\p{N}_&/#])#[\\p{L}\\p{N}_][\\p{L}\\p{N}_\\-/]*)', // 7 tag
    '(\\[\\[doc_[A-Za-z0-9_-]{1,60}\\]\\])', // 8 link to a document
  ].join('|'),
  'gu',
);

/**
 * Only web and mail links become links; anything else (javascript:, data:, …) stays text.
 * @param {string} href
 * @returns {string|null}
 */
export function safeHref(href) {
  if (/^(https?:\/\/|mailto:)/i.test(href)) return href;
  if (/^\/(?!\/)/.test(href) || href.startsWith('#')) return href;
  return null;
}

/** @type {(docId: string) => string|null} */
let titleOf = () => null;

/**
 * Where a document link's title comes from (the editor's list of readable documents); a link
 * whose target is unknown here (no access, or not loaded yet) reads "Linked document".
 * @param {(docId: string) => string|null} lookup
 */
export function setLinkTitles(lookup) {
  titleOf = lookup;
}

/** @param {string} tag without the # */
export function tagHref(tag) {
  return `/?tag=${encodeURIComponent(tag)}`;
}

/**
 * @param {string} text raw bullet text
 * @returns {Token[]}
 */
export function parseInline(text) {
  /** @type {Token[]} */
  const out = [];
  let last = 0;
  /** @param {number} to */
  const plain = (to) => {
    if (to > last) out.push({ kind: 'text', text: text.slice(last, to), from: last, to, inner: last });
  };
  RE.lastIndex = 0;
  for (let m = RE.exec(text); m; m = RE.exec(text)) {
    const s = m[0];
    const from = m.index;
    const to = from + s.length;
    /** @type {Token|null} */
    let t = null;
    if (m[1]) t = { kind: 'code', text: s.slice(1, -1), from, to, inner: from + 1 };
    else if (m[2]) t = { kind: 'bold', text: s.slice(2, -2), from, to, inner: from + 2 };
    else if (m[3]) t = { kind: 'strike', text: s.slice(2, -2), from, to, inner: from + 2 };
    else if (m[4]) t = { kind: 'italic', text: s.slice(1, -1), from, to, inner: from + 1 };
    else if (m[5]) {
      const close = s.indexOf('](');
      const href = safeHref(s.slice(close + 2, -1));
      if (href) t = { kind: 'link', text: s.slice(1, close), href, from, to, inner: from + 1 };
    } else if (m[6]) t = { kind: 'link', text: s, href: s, from, to, inner: from };
    else if (m[7]) t = { kind: 'tag', text: s, href: tagHref(s.slice(1)), from, to, inner: from };
    else if (m[8]) {
      const docId = s.slice(2, -2);
      const title = titleOf(docId);
      t = { kind: 'doclink', text: title == null ? 'Linked document' : title.trim() || 'Untitled', href: `/d/${encodeURIComponent(docId)}`, docId, from, to, inner: from };
    }
    if (!t) continue;
    plain(from);
    out.push(t);
    last = to;
  }
  plain(text.length);
  return out;
}

/**
 * A bullet's text as a reader sees it, without markup: a link as its text, a document link as
 * the document's title, `**`/`*`/`~~`/`` ` `` gone. For labels that are not the bullet itself
 * (breadcrumbs, the zoomed bullet's heading, "Linked from" previews).
 * @param {string} text
 */
export function shownText(text) {
  return parseInline(text).map((t) => t.text).join('');
}

/** True when the rendered text differs from the raw text. @param {Token[]} tokens */
export function hasMarkup(tokens) {
  return tokens.some((t) => t.kind !== 'text' && t.kind !== 'tag' && !(t.kind === 'link' && t.inner === t.from));
}

/**
 * Maps an offset in the rendered text to the offset in the raw text.
 * @param {Token[]} tokens @param {number} offset
 */
export function renderedToRaw(tokens, offset) {
  let acc = 0;
  for (const t of tokens) {
    if (offset <= acc + t.text.length) return Math.min(t.to, t.inner + (offset - acc));
    acc += t.text.length;
  }
  return tokens.length ? tokens[tokens.length - 1].to : 0;
}

/**
 * Replaces the children of `el` with the rendered tokens.
 * @param {HTMLElement} el @param {Token[]} tokens
 */
export function fillInline(el, tokens) {
  const last = tokens[tokens.length - 1];
  // a trailing line break is only drawn (and reachable by the caret) with a <br> after it
  const br = () => last && last.text.endsWith('\n') && el.append(el.ownerDocument.createElement('br'));
  if (tokens.length === 1 && last.kind === 'text') {
    el.textContent = last.text;
    br();
    return;
  }
  el.textContent = '';
  const doc = el.ownerDocument;
  for (const t of tokens) {
    if (t.kind === 'text') {
      el.append(t.text);
      continue;
    }
    /** @type {HTMLElement} */
    let node;
    if (t.kind === 'link' || t.kind === 'tag' || t.kind === 'doclink') {
      const a = doc.createElement('a');
      a.href = t.href ?? '#';
      if (t.kind === 'tag') a.className = 'md-tag';
      else if (t.kind === 'doclink') {
        a.className = 'md-doclink';
        a.dataset.docLink = t.docId ?? '';
      } else {
        a.rel = 'noopener noreferrer';
        a.target = '_blank';
      }
      node = a;
    } else {
      node = doc.createElement(t.kind === 'bold' ? 'strong' : t.kind === 'italic' ? 'em' : t.kind === 'strike' ? 's' : 'code');
    }
    node.textContent = t.text;
    el.append(node);
  }
  br();
}
