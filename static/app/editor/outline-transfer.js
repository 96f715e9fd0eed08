// Bullets in and out of the editor: export of what is shown (the zoomed bullet's subtree, or
// the document) as Markdown, OPML or plain text, a copy as Markdown, and import of a file's
// bullets at the end of what is shown, as one edit through the controller. Refusals and
// results are said in the editor's notice line; an import that cannot be applied changes
// nothing.

import { indexOfId, insertItemsAfter, subtreeEnd } from './outline-ops.js';
import { toMarkdown, toOpml, toPlainText } from './outline-io.js';
import { readOutlineFile, decodeOutlineFile } from './import-file.js';

/** @typedef {import('../../engine/types.js').Row} Row */
/** @typedef {import('./outline-io.js').Item} Item */

export class OutlineTransfer {
  /**
   * @param {{
   *   rows: () => Row[], title: () => string, zoomed: () => string|null,
   *   zoomTitle: () => string|null, canEdit: () => boolean, newId: () => string,
   *   controller: import('./input-controller.js').InputController,
   *   notice: (text: string) => void,
   * }} o
   */
  constructor(o) {
    this.o = o;
  }

  /** The rows to export: the zoomed bullet's subtree, or the whole document. */
  rows() {
    const all = this.o.rows();
    const zoomed = this.o.zoomed();
    if (!zoomed) return all;
    const i = indexOfId(all, zoomed);
    return i < 0 ? [] : all.slice(i + 1, subtreeEnd(all, i));
  }

  title() {
    return this.o.zoomTitle() ?? (this.o.title() || 'Untitled');
  }

  /** Downloads what is shown as a file. @param {'md'|'opml'|'txt'} kind */
  exportAs(kind) {
    const rows = this.rows();
    const title = this.title();
    const text = kind === 'md' ? toMarkdown(rows, { title }) : kind === 'opml' ? toOpml(title, rows) : toPlainText(rows);
    const type = kind === 'opml' ? 'text/x-opml' : kind === 'md' ? 'text/markdown' : 'text/plain';
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([text], { type: `${type};charset=utf-8` }));
    a.download = `${fileName(title)}.${kind}`;
    a.dataset.external = '';
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  }

  async copyAsText() {
    try {
      await navigator.clipboard.writeText(toMarkdown(this.rows(), { title: this.title() }));
      this.o.notice('The document is on the clipboard as Markdown.');
    } catch {
      this.o.notice('The clipboard refused: use Export as Markdown instead.');
    }
  }

  /** Asks for a file and imports its bullets. */
  pickImport() {
    if (!this.o.canEdit()) {
      this.o.notice('You can only read this document — import into a document you can edit.');
      return;
    }
    const input = document.createElement('input');
    input.type = 'file';
    input.accept = '.md,.markdown,.opml,.xml,.txt,text/markdown,text/plain,text/x-opml';
    input.id = 'import-file';
    input.hidden = true;
    input.addEventListener('change', async () => {
      const file = input.files?.[0];
      input.remove();
      if (!file) return;
      try {
        const { items } = readOutlineFile(file.name, decodeOutlineFile(await file.arrayBuffer()), new DOMParser());
        this.importItems(items);
      } catch (e) {
        this.o.notice(`Nothing was imported: ${e instanceof Error ? e.message : String(e)}`);
      }
    });
    document.body.append(input);
    input.click();
  }

  /**
   * Puts bullets at the end of what is shown (the zoomed bullet's last children, or the
   * document's last bullets) as one edit; false when nothing was applied.
   * @param {Item[]} items
   */
  importItems(items) {
    if (!items.length) {
      this.o.notice('Nothing was imported: the file holds no bullets.');
      return false;
    }
    const { controller } = this.o;
    const all = controller.rows();
    const zoomed = this.o.zoomed();
    const newId = this.o.newId;
    const r = zoomed
      ? insertItemsAfter(all, zoomed, items, { newId, asChildren: true })
      : insertItemsAfter(all, null, items, { newId });
    if (r && r.ok && zoomed) {
      // as the zoomed bullet's last children: after its existing ones
      const z = indexOfId(all, zoomed);
      const end = subtreeEnd(all, z);
      const added = r.rows.filter((x) => indexOfId(all, x.id) < 0);
      r.rows = [...all.slice(0, end), ...added, ...all.slice(end)];
    }
    const ok = controller.commit(r);
    if (ok) this.o.notice(`Imported ${items.length} ${items.length === 1 ? 'bullet' : 'bullets'}.`);
    return ok;
  }
}

/** A file name from a title (no separators or control characters). @param {string} title */
export function fileName(title) {
  return (title.replace(/[\\/:*?"<>|\u0000-\u001f]+/g, ' ').trim() || 'Untitled').slice(0, 80);
}
