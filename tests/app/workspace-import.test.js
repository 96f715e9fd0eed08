// @ts-check
// @vitest-environment happy-dom
// Whole workspaces read as the import sends them: a Logseq graph folder written in Logseq's
// own layout (config.edn, pages with namespaces, journals, backups, assets, an Org page), a
// Workflowy full backup (one OPML file: top-level bullets as documents, or one document) and
// a Dynalist backup folder (a file per document, in folders).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatJournalDate, logseqPageName, readExportFolder, readLogseqGraph, readOutlineBackup, bulletCount } from '../../static/app/editor/workspace-import.js';
import { decodeOutlineFile } from '../../static/app/editor/import-file.js';

const FIXTURES = resolve('tests/app/fixtures');

/** Every file below `dir`, with paths as a folder picker gives them (the folder's name first). @param {string} dir */
function pick(dir) {
  const root = resolve(FIXTURES, dir);
  /** @type {{path: string, text: string}[]} */
  const out = [];
  /** @param {string} d */
  const walk = (d) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.push({ path: `${dir.split('/').pop()}/${relative(root, p)}`, text: decodeOutlineFile(readFileSync(p)) });
    }
  };
  walk(root);
  return out;
}

/** @param {import('../../static/app/editor/workspace-import.js').ImportItem[]} items */
const sketch = (items) => items.map((i) => `${'  '.repeat(i.depth)}${i.type === 'todo' ? (i.checked ? '[x] ' : '[ ] ') : ''}${i.content}${i.ref ? ` {ref ${i.ref}}` : ''}`).join('\n');

describe('a Logseq graph folder', () => {
  const read = readLogseqGraph(pick('logseq-graph'));
  const byFile = new Map(read.documents.map((d) => [d.file.replace(/^logseq-graph\//, ''), d]));

  it('every page and journal a document; Logseq\'s own files left out, the rest reported', () => {
    expect([...byFile.keys()]).toEqual(['journals/2024_03_04.md', 'journals/2024_03_05.md', 'pages/Meeting Notes.md', 'pages/Project Alpha.md', 'pages/work___plans.md']);
    expect(read.skipped).toEqual([
      { file: 'logseq-graph/assets/diagram.png', why: 'an asset (images and attachments are not carried over)' },
      { file: 'logseq-graph/pages/old.org', why: 'an Org-mode page (only Markdown pages are read)' },
    ]);
  });

  it('titles from title::, namespaces and the journal date format; aliases for links', () => {
    const alpha = byFile.get('pages/Project Alpha.md');
    expect(alpha?.title).toBe('Project Alpha');
    expect(alpha?.aliases).toEqual(['alpha', 'Project A']);
    expect(byFile.get('pages/work___plans.md')?.title).toBe('work/plans');
    const journal = byFile.get('journals/2024_03_05.md');
    expect(journal?.title).toBe('Mar 5th, 2024');
    expect(journal?.aliases).toEqual(['2024-03-05', '2024_03_05']);
    expect(journal?.folder).toBe('journals');
  });

  it('page properties kept as the first bullet, block properties of Logseq dropped, a person\'s kept, id:: as the ref', () => {
    const alpha = byFile.get('pages/Project Alpha.md');
    expect(sketch(alpha?.items ?? [])).toBe([
      'tags:: project, work',
      'Kickoff meeting with [[Meeting Notes]] and [[Nobody Knows This Page]]',
      '  [ ] Book the room',
      '  [x] Send the agenda {ref 6512a3f1-0c4e-4a55-9d0b-1f2e3d4c5b6a}',
      '  Read [[work/plans]]\ntype:: reading',
      'Notes',
      '  [ ] Draft the plan',
    ].join('\n'));
    expect(alpha?.notes).toEqual(['page properties kept as the first bullet: tags']);
    // links stay as written: the server resolves them across the whole import
    expect(sketch(byFile.get('journals/2024_03_05.md')?.items ?? [])).toBe([
      'Met the [[Project A]] team, see ((6512a3f1-0c4e-4a55-9d0b-1f2e3d4c5b6a))',
      'Continued from [[Mar 4th, 2024]]',
      '  [ ] Reply to legal',
    ].join('\n'));
    expect(bulletCount(read)).toBe(7 + 2 + 1 + 3 + 1);
  });

  it('journal title formats as Logseq writes them', () => {
    expect(formatJournalDate(2024, 3, 1, 'MMM do, yyyy')).toBe('Mar 1st, 2024');
    expect(formatJournalDate(2024, 3, 2, 'MMM do, yyyy')).toBe('Mar 2nd, 2024');
    expect(formatJournalDate(2024, 3, 3, 'MMM do, yyyy')).toBe('Mar 3rd, 2024');
    expect(formatJournalDate(2024, 3, 11, 'MMM do, yyyy')).toBe('Mar 11th, 2024');
    expect(formatJournalDate(2024, 3, 22, 'MMM do, yyyy')).toBe('Mar 22nd, 2024');
    expect(formatJournalDate(2024, 3, 5, 'yyyy-MM-dd EEEE')).toBe('2024-03-05 Tuesday');
    expect(formatJournalDate(2024, 12, 9, "dd.MM.yy 'week'")).toBe('09.12.24 week');
    expect(formatJournalDate(2024, 7, 4, 'EEE, MMMM d')).toBe('Thu, July 4');
    expect(logseqPageName('a%3Fb___c')).toBe('a?b/c');
    expect(logseqPageName('100%')).toBe('100%');
  });
});

describe('a Workflowy backup (one OPML file)', () => {
  const text = decodeOutlineFile(readFileSync(resolve(FIXTURES, 'workflowy-backup.opml')));

  it('top-level bullets as documents: the title, the note as the first bullet, the rest one level up', () => {
    const read = readOutlineBackup('workflowy-backup.opml', text, new DOMParser(), 'documents');
    expect(read.documents.map((d) => d.title)).toEqual(['Home', 'Work', 'Empty top bullet']);
    expect(sketch(read.documents[0].items)).toBe([
      'Everything about the flat',
      '[x] Fix the **tap**',
      'Paint the hall',
      '  Pick a colour\nask Lin first',
    ].join('\n'));
    expect(read.documents[2].items).toEqual([]);
  });

  it('or the whole file as one document', () => {
    const read = readOutlineBackup('workflowy-backup.opml', text, new DOMParser(), 'one');
    expect(read.documents.length).toBe(1);
    expect(read.documents[0].title).toBe('workflowy-backup');
    expect(read.documents[0].items.length).toBe(7);
  });
});

describe('a Dynalist backup folder', () => {
  it('each file a document in its folders; other files reported', () => {
    const read = readExportFolder(pick('dynalist-backup/Dynalist'), new DOMParser());
    expect(read.documents.map((d) => [d.title, d.folder ?? null])).toEqual([
      ['Reading list', null],
      ['Plans', 'Work'],
    ]);
    expect(sketch(read.documents[1].items)).toBe(['Q1', '  [ ] Hire\ntwo people'].join('\n'));
    expect(read.skipped).toEqual([{ file: 'Dynalist/Work/notes.pdf', why: 'not an outline file (OPML, Markdown or text)' }]);
  });
});
