// "Import…" on the home page: one file as a new document (doc-actions.js), or a whole
// workspace in one operation — a Logseq graph folder, a Workflowy backup (one OPML file) or a
// Dynalist backup folder — read here (editor/workspace-import.js), sent as one `POST /import`,
// and answered with a report: what each file became, the links that were connected, and what
// could not be carried over. The files stay where they are: a refusal or a lost connection
// costs nothing but a retry.

import { describeError } from '../api.js';
import { h, replaceChildren } from '../ui/dom.js';
import { openModal } from '../ui/dialog.js';
import { icon } from '../ui/icons.js';

/** @typedef {import('../api.js').Api} Api */
/** @typedef {import('../editor/workspace-import.js').WorkspaceRead} WorkspaceRead */
/**
 * @typedef {{file: string, docId: string, title: string, bullets: number, links: number,
 *   blockRefs: number, unresolvedLinks: string[], unresolvedLinkCount: number,
 *   unresolvedRefs: number, notes: string[]}} DocReport
 * @typedef {{folderId: string|null, documents: DocReport[], bullets: number, links: number,
 *   blockRefs: number, unresolvedLinks: number, unresolvedRefs: number}} ImportReport
 */

/** Files the readers take as text; anything else is only named in the report. */
const TEXT_FILE = /\.(md|markdown|opml|xml|txt|edn)$/i;

/**
 * @param {{api: Api, folderId: string|null, importOneFile: () => void,
 *   onImported: (folderId: string|null) => void}} opts
 */
export function openImportDialog(opts) {
  const status = h('p', { class: 'import-status', id: 'import-status', role: 'status', 'aria-live': 'polite' });
  const mode = h('select', { id: 'import-backup-mode', class: 'input', 'aria-label': 'What the top-level bullets become' },
    h('option', { value: 'documents' }, 'Each top-level bullet a document'),
    h('option', { value: 'one' }, 'All in one document'));
  const choice = (/** @type {string} */ id, /** @type {string} */ title, /** @type {string} */ text, /** @type {Parameters<typeof icon>[0]} */ ic) =>
    h('button', { type: 'button', id, class: 'import-choice' }, icon(ic, { size: 20 }), h('span', { class: 'import-choice-text' }, h('strong', null, title), h('span', { class: 'muted' }, text)));
  const one = choice('import-one-file', 'One file', 'Markdown, OPML or text: a new document.', 'plus');
  const graph = choice('import-logseq', 'A Logseq graph', 'Pick the graph’s folder: every page and journal becomes a document, linked as in Logseq.', 'folder');
  const backupFile = choice('import-backup-file', 'A Workflowy backup', 'An OPML file of everything (Export all → OPML).', 'folder');
  const backupFolder = choice('import-backup-folder', 'A Dynalist backup', 'Pick the backup’s folder: each file becomes a document, in its folders.', 'folder');
  const body = h('div', { class: 'import-body' },
    h('div', { class: 'import-choices' }, one, graph, backupFile, backupFolder),
    h('div', { class: 'field' }, h('label', { class: 'label', for: 'import-backup-mode' }, 'In a Workflowy backup'), mode),
    status);
  const { dialog, close } = openModal({ id: 'import-dialog', title: 'Import', wide: true, description: 'Bring your outlines from another tool. Nothing is changed there.', content: [body] });

  one.addEventListener('click', () => {
    close();
    opts.importOneFile();
  });
  graph.addEventListener('click', () => void pickFolder(async (files) => {
    const { readLogseqGraph } = await import('../editor/workspace-import.js');
    return { read: readLogseqGraph(files), name: topFolder(files) ?? 'Logseq graph' };
  }));
  backupFolder.addEventListener('click', () => void pickFolder(async (files) => {
    const { readExportFolder } = await import('../editor/workspace-import.js');
    return { read: readExportFolder(files, new DOMParser()), name: topFolder(files) ?? 'Dynalist backup' };
  }));
  backupFile.addEventListener('click', () => {
    const input = h('input', { type: 'file', id: 'import-backup-input', hidden: true, accept: '.opml,.xml,text/x-opml' });
    input.addEventListener('change', async () => {
      const file = input.files?.[0];
      input.remove();
      if (!file) return;
      await run(async () => {
        const [{ readOutlineBackup }, { decodeOutlineFile }] = await Promise.all([import('../editor/workspace-import.js'), import('../editor/import-file.js')]);
        const text = decodeOutlineFile(await file.arrayBuffer());
        const how = mode.value === 'one' ? 'one' : 'documents';
        return { read: readOutlineBackup(file.name, text, new DOMParser(), how), name: file.name.replace(/\.(opml|xml)$/i, '') };
      });
    });
    dialog.append(input);
    input.click();
  });

  /** @param {(files: {path: string, text: string}[]) => Promise<{read: WorkspaceRead, name: string}>} reader */
  async function pickFolder(reader) {
    const input = /** @type {HTMLInputElement} */ (h('input', { type: 'file', id: 'import-folder-input', hidden: true, multiple: true }));
    input.webkitdirectory = true;
    input.addEventListener('change', async () => {
      const picked = [...(input.files ?? [])];
      input.remove();
      if (!picked.length) return;
      await run(async () => {
        const { decodeOutlineFile } = await import('../editor/import-file.js');
        say(`Reading ${picked.length.toLocaleString()} files…`);
        const files = await Promise.all(picked.map(async (f) => ({
          path: f.webkitRelativePath || f.name,
          text: TEXT_FILE.test(f.name) ? decodeOutlineFile(await f.arrayBuffer()) : '',
        })));
        return reader(files);
      });
    });
    dialog.append(input);
    input.click();
  }

  /** @param {string} text @param {boolean} [error] */
  function say(text, error = false) {
    status.textContent = text;
    status.classList.toggle('form-error', error);
  }

  /** Reads, sends, reports; a failure says why and changes nothing. @param {() => Promise<{read: WorkspaceRead, name: string}>} reading */
  async function run(reading) {
    const buttons = [one, graph, backupFile, backupFolder];
    for (const b of buttons) b.disabled = true;
    try {
      const { read, name } = await reading();
      if (!read.documents.length) throw new Error(read.skipped.length ? 'none of these files is an outline this import reads' : 'the folder is empty');
      const bullets = read.documents.reduce((n, d) => n + d.items.length, 0);
      say(`Importing ${bullets.toLocaleString()} bullets in ${read.documents.length.toLocaleString()} documents…`);
      const whole = read.documents.length > 1;
      /** @type {ImportReport} */
      const report = await opts.api.post('/import', {
        ...(opts.folderId ? { folderId: opts.folderId } : {}),
        ...(whole ? { newFolder: name.slice(0, 200) || 'Import' } : {}),
        documents: read.documents,
      });
      showReport(report, read, whole ? name : null);
      opts.onImported(report.folderId);
    } catch (e) {
      say(`Nothing was imported: ${describeError(e)}`, true);
      for (const b of buttons) b.disabled = false;
    }
  }

  /** @param {ImportReport} report @param {WorkspaceRead} read @param {string|null} folderName */
  function showReport(report, read, folderName) {
    const docs = report.documents;
    const summary = `${count(docs.length, 'document')} with ${count(report.bullets, 'bullet')} imported${folderName ? ` into the folder “${folderName}”` : ''}.`;
    const linked = `${count(report.links, 'link')} and ${count(report.blockRefs, 'block reference')} connected.`;
    const open = h('button', { type: 'button', class: 'btn btn-primary', id: 'import-done' }, 'Done');
    open.addEventListener('click', close);
    const rows = docs.map((d) => {
      /** @type {string[]} */
      const issues = [...d.notes];
      if (d.unresolvedLinkCount) issues.push(`${d.unresolvedLinkCount} ${d.unresolvedLinkCount === 1 ? 'link' : 'links'} to pages not imported, kept as text: ${d.unresolvedLinks.join(', ')}${d.unresolvedLinkCount > d.unresolvedLinks.length ? ', …' : ''}`);
      if (d.unresolvedRefs) issues.push(`${d.unresolvedRefs} block ${d.unresolvedRefs === 1 ? 'reference' : 'references'} to bullets not imported, kept as text`);
      return h('li', { class: 'import-row' },
        h('div', { class: 'import-row-head' },
          h('a', { href: `/d/${d.docId}`, class: 'import-row-title' }, d.title || 'Untitled'),
          h('span', { class: 'muted import-row-count' }, `${count(d.bullets, 'bullet')}${d.links ? ` · ${count(d.links, 'link')}` : ''}`)),
        h('span', { class: 'muted import-row-file' }, d.file),
        issues.length ? h('ul', { class: 'import-issues' }, ...issues.map((t) => h('li', null, t))) : null);
    });
    const skipped = read.skipped.length
      ? h('details', { class: 'import-skipped' },
        h('summary', null, `${read.skipped.length.toLocaleString()} ${read.skipped.length === 1 ? 'file' : 'files'} not carried over`),
        h('ul', null, ...read.skipped.map((s) => h('li', null, h('span', { class: 'import-row-file' }, s.file), ` — ${s.why}`))))
      : null;
    replaceChildren(body,
      h('div', { class: 'import-report', id: 'import-report' },
        h('p', { class: 'import-summary' }, icon('check', { size: 18 }), h('span', null, summary)),
        h('p', { class: 'muted' }, linked),
        h('ul', { class: 'import-rows' }, ...rows),
        skipped,
        h('div', { class: 'dialog-actions' }, open)));
    open.focus();
  }
}

/** `1 bullet`, `2,686 bullets`. @param {number} n @param {string} noun */
function count(n, noun) {
  return `${n.toLocaleString()} ${noun}${n === 1 ? '' : 's'}`;
}

/** The folder the person picked (the first part of every path), if there is one. @param {{path: string}[]} files */
function topFolder(files) {
  const first = files[0]?.path.split('/')[0];
  return first && files.every((f) => f.path.startsWith(`${first}/`)) ? first : null;
}
