// Whole workspaces from other tools, read into one `POST /import` body (the server links the
// documents to each other and makes them in one operation; see src/workspace/import_plan.rs):
// - a Logseq graph folder: every page (`pages/`) and journal (`journals/`) a document, named
//   by `title::` or its file name (Logseq's `___` / `%2F` namespaces as `/`), journals in a
//   `journals` folder and titled in the graph's own date format (`logseq/config.edn`, else
//   Logseq's default "Mar 5th, 2024") with the ISO date as an alias; `alias::` names too;
//   page properties other than title and alias kept as the page's first bullet (where Logseq
//   itself keeps them); files it cannot read are counted, not guessed at.
// - a Workflowy or Dynalist backup: one OPML file, its top-level bullets each a document or
//   all of it one document, as the person chooses; or a folder of OPML/Markdown exports
//   (Dynalist's backup), each file a document in folders as on disk.
// Pure (files come in as {path, text}), so Node tests read real-shaped graphs.

import { fromLogseq } from './logseq.js';
import { readOutlineFile } from './import-file.js';

/** @typedef {import('./outline-io.js').Item} Item */
/** @typedef {{depth: number, content: string, type?: string, checked?: boolean, language?: string|null, ref?: string}} ImportItem */
/** @typedef {{file: string, title: string, aliases?: string[], folder?: string, items: ImportItem[], notes?: string[]}} ImportDoc */
/** @typedef {{documents: ImportDoc[], skipped: {file: string, why: string}[]}} WorkspaceRead */
/** @typedef {{path: string, text: string}} TextFile */

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
/** Logseq's journal title when the graph names none. */
export const LOGSEQ_DEFAULT_DATE = 'MMM do, yyyy';
/** Logseq's own files inside a graph: its config and backups of pages, never pages. */
const INTERNAL = /(^|\/)(logseq\/(bak|version-files|\.recycle)\/|\.recycle\/|\.git\/|logseq\/[^/]+$)/;
/** Page properties that are not kept as text: the name, and Logseq's own. */
const PAGE_SYSTEM = /^(title|alias|filters|public|icon|exclude-from-graph-view|collapsed|id)$/;

/** `1st`, `2nd`, `3rd`, `4th` … `11th`, `21st`. @param {number} n */
function ordinal(n) {
  const teen = n % 100 >= 11 && n % 100 <= 13;
  const suffix = teen ? 'th' : n % 10 === 1 ? 'st' : n % 10 === 2 ? 'nd' : n % 10 === 3 ? 'rd' : 'th';
  return `${n}${suffix}`;
}

/**
 * A date in a Logseq (date-fns) title format: yyyy, yy, MMMM, MMM, MM, M, do, dd, d, EEEE,
 * EEE, EE, E; text in single quotes is literal.
 * @param {number} y @param {number} m 1–12 @param {number} d @param {string} format
 */
export function formatJournalDate(y, m, d, format) {
  const weekday = new Date(Date.UTC(y, m - 1, d)).getUTCDay();
  /** @type {Record<string, string>} */
  const parts = {
    yyyy: String(y), yy: String(y % 100).padStart(2, '0'),
    MMMM: MONTHS[m - 1], MMM: MONTHS[m - 1].slice(0, 3), MM: String(m).padStart(2, '0'), M: String(m),
    do: ordinal(d), dd: String(d).padStart(2, '0'), d: String(d),
    EEEE: DAYS[weekday], EEE: DAYS[weekday].slice(0, 3), EE: DAYS[weekday].slice(0, 3), E: DAYS[weekday].slice(0, 3),
  };
  return format.replace(/'([^']*)'|yyyy|yy|MMMM|MMM|MM|M|do|dd|d|EEEE|EEE|EE|E/g, (tok, literal) => literal ?? parts[tok]);
}

/** A page file's name as Logseq titles it. @param {string} stem without `.md` */
export function logseqPageName(stem) {
  let name = stem.replace(/___/g, '/');
  try {
    name = decodeURIComponent(name);
  } catch {
    // a lone `%` is part of the name
  }
  return name;
}

/**
 * A Logseq graph: `files` with paths relative to the folder picked (the graph's own folder
 * or any folder above it: the part before `pages/` / `journals/` is ignored).
 * @param {TextFile[]} files
 * @returns {WorkspaceRead}
 */
export function readLogseqGraph(files) {
  /** @type {WorkspaceRead} */
  const out = { documents: [], skipped: [] };
  const config = files.find((f) => /(^|\/)logseq\/config\.edn$/.test(f.path));
  const format = (config && /:journal\/page-title-format\s+"([^"]+)"/.exec(config.text)?.[1]) || LOGSEQ_DEFAULT_DATE;
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const f of sorted) {
    const m = /(?:^|\/)(pages|journals)\/((?:[^/]+\/)*)([^/]+)$/.exec(f.path);
    // Logseq's own files (config, backups, old versions, the recycle bin) and hidden files
    if (INTERNAL.test(f.path) || /(^|\/)\.[^/]*$/.test(f.path)) continue;
    if (!m) {
      out.skipped.push({ file: f.path, why: /\.(png|jpe?g|gif|svg|webp|pdf|mp4|mp3)$/i.test(f.path) ? 'an asset (images and attachments are not carried over)' : 'not a page or journal' });
      continue;
    }
    const [, kind, , fileName] = m;
    if (/\.org$/i.test(fileName)) {
      out.skipped.push({ file: f.path, why: 'an Org-mode page (only Markdown pages are read)' });
      continue;
    }
    if (!/\.(md|markdown)$/i.test(fileName)) {
      out.skipped.push({ file: f.path, why: 'not a Markdown page' });
      continue;
    }
    const stem = fileName.replace(/\.(md|markdown)$/i, '');
    const page = fromLogseq(f.text);
    /** @type {string[]} */
    const notes = [];
    let title = page.title ?? logseqPageName(stem);
    const aliases = [...page.aliases];
    let folder;
    if (kind === 'journals') {
      folder = 'journals';
      const date = /^(\d{4})_(\d{2})_(\d{2})$/.exec(stem);
      if (date && !page.properties.title) {
        const [y, mo, d] = [Number(date[1]), Number(date[2]), Number(date[3])];
        title = formatJournalDate(y, mo, d, format);
        aliases.push(`${date[1]}-${date[2]}-${date[3]}`, stem);
      }
    }
    /** @type {ImportItem[]} */
    const items = page.items.map(toImportItem);
    const kept = Object.entries(page.properties).filter(([k]) => !PAGE_SYSTEM.test(k));
    if (kept.length) {
      // Logseq keeps a page's properties in its first block; so do we, as text
      items.unshift({ depth: 0, content: kept.map(([k, v]) => `${k}:: ${v}`).join('\n') });
      notes.push(`page properties kept as the first bullet: ${kept.map(([k]) => k).join(', ')}`);
    }
    if (!items.length) notes.push('an empty page');
    out.documents.push({ file: f.path, title: title.slice(0, 1000), aliases, folder, items, notes });
  }
  return out;
}

/** @param {Item & {ref?: string}} it @returns {ImportItem} */
function toImportItem(it) {
  /** @type {ImportItem} */
  const out = { depth: it.depth, content: it.content, type: it.type, checked: it.checked };
  if (it.type === 'code' && it.language) out.language = it.language;
  if (it.ref) out.ref = it.ref;
  return out;
}

/**
 * A Workflowy or Dynalist backup as one OPML file: each top-level bullet a document (its
 * text the title, a note below the title its first bullet), or the whole file one document.
 * @param {string} fileName @param {string} text @param {DOMParser} parser
 * @param {'documents'|'one'} mode
 * @returns {WorkspaceRead}
 */
export function readOutlineBackup(fileName, text, parser, mode) {
  const { title, items } = readOutlineFile(fileName, text, parser);
  const base = title || fileName.replace(/\.(opml|xml|txt|md)$/i, '');
  if (mode === 'one') {
    return { documents: [{ file: fileName, title: base.slice(0, 1000), items: items.map(toImportItem) }], skipped: [] };
  }
  /** @type {ImportDoc[]} */
  const documents = [];
  for (const it of items) {
    if (it.depth === 0) {
      const [first, ...rest] = it.content.split('\n');
      /** @type {ImportDoc} */
      const doc = { file: `${fileName} › ${first.slice(0, 60)}`, title: (first.trim() || 'Untitled').slice(0, 1000), items: [] };
      if (rest.join('').trim() !== '') doc.items.push({ depth: 0, content: rest.join('\n') });
      if (it.type === 'todo') doc.notes = [it.checked ? 'the top-level bullet was a completed todo' : 'the top-level bullet was a todo'];
      documents.push(doc);
      continue;
    }
    const doc = documents[documents.length - 1];
    doc.items.push({ ...toImportItem(it), depth: it.depth - 1 });
  }
  return { documents, skipped: [] };
}

/**
 * A folder of exports (Dynalist's backup: one OPML or Markdown file per document, in
 * folders as in Dynalist): each file a document, its folders kept.
 * @param {TextFile[]} files @param {DOMParser} parser
 * @returns {WorkspaceRead}
 */
export function readExportFolder(files, parser) {
  /** @type {WorkspaceRead} */
  const out = { documents: [], skipped: [] };
  const sorted = [...files].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  // the folder picked is the import's; its own name is not a folder inside it
  const top = sorted.length && sorted.every((f) => f.path.includes('/')) ? sorted[0].path.split('/')[0] : null;
  for (const f of sorted) {
    const rel = top && f.path.startsWith(`${top}/`) ? f.path.slice(top.length + 1) : f.path;
    if (/(^|\/)\./.test(rel)) continue;
    if (!/\.(opml|xml|md|markdown|txt)$/i.test(rel)) {
      out.skipped.push({ file: f.path, why: 'not an outline file (OPML, Markdown or text)' });
      continue;
    }
    try {
      const { title, items } = readOutlineFile(rel, f.text, parser);
      const parts = rel.split('/');
      const stem = parts.pop()?.replace(/\.(opml|xml|md|markdown|txt)$/i, '') ?? 'Untitled';
      /** @type {ImportDoc} */
      const doc = { file: f.path, title: (title || stem).slice(0, 1000), items: items.map(toImportItem) };
      if (parts.length) doc.folder = parts.join('/');
      out.documents.push(doc);
    } catch (e) {
      out.skipped.push({ file: f.path, why: e instanceof Error ? e.message : String(e) });
    }
  }
  return out;
}

/** Bullets in a read workspace. @param {WorkspaceRead} w */
export function bulletCount(w) {
  return w.documents.reduce((n, d) => n + d.items.length, 0);
}
