// An outline file, read by its kind: OPML (`.opml`, or XML that starts with `<opml`) from
// Workflowy, Dynalist and most outliners; Markdown (`.md`) as Logseq and friends write it
// (logseq.js: front matter, properties, TODO/DONE, [[links]]); anything else as plain
// indented text (Workflowy's text export with its quoted notes among it).

import { fromMarkdown, fromOpml } from './outline-io.js';
import { fromLogseq } from './logseq.js';

/** @typedef {import('./outline-io.js').Item} Item */

/**
 * @param {string} name @param {string} text @param {DOMParser} parser
 * @param {{linkTo?: (title: string) => string|null}} [opts] a document ID for a `[[Page]]` title
 * @returns {{title: string|null, items: Item[]}}
 */
export function readOutlineFile(name, text, parser, opts = {}) {
  if (/\.(opml|xml)$/i.test(name) || /^\s*(<\?xml[^>]*>\s*)?<opml[\s>]/i.test(text)) return fromOpml(text, parser);
  if (/\.(md|markdown)$/i.test(name)) {
    const { title, items } = fromLogseq(text, opts);
    return { title, items };
  }
  // Text: a list with markers (Workflowy's text export) or plain indented lines.
  return { title: null, items: fromMarkdown(text.replace(/^\uFEFF/, '')).items };
}

/**
 * A file's bytes as text: a byte-order mark, else the encoding an XML declaration names
 * (`ISO-8859-1` OPML files exist), else UTF-8 — and text that is not valid UTF-8 is read as
 * Windows-1252, the usual encoding of old exports, instead of turning into `�`.
 * @param {ArrayBuffer|Uint8Array} data
 * @returns {string}
 */
export function decodeOutlineFile(data) {
  const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return new TextDecoder('utf-8').decode(bytes.subarray(3));
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes.subarray(2));
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2));
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, 200));
  const declared = /^\s*<\?xml[^>]*encoding=["']([A-Za-z0-9._-]+)["']/.exec(head)?.[1];
  if (declared && !/^utf-?8$/i.test(declared)) {
    try {
      return new TextDecoder(declared.toLowerCase()).decode(bytes);
    } catch {
      // an encoding this browser does not know: try UTF-8 below
    }
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return new TextDecoder('windows-1252').decode(bytes);
  }
}
