// @ts-check
// @vitest-environment happy-dom
// Imports of real-shaped exports (fixtures written in each tool's own format): a Logseq page
// and journal, Markdown with YAML front matter and CRLF, Workflowy's plain-text export with its
// quoted notes, an ISO-8859-1 OPML file with entities and an empty bullet.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readOutlineFile, decodeOutlineFile } from '../../static/app/editor/import-file.js';

const bytes = (/** @type {string} */ name) => readFileSync(resolve('tests/app/fixtures', name));
const read = (/** @type {string} */ name, /** @type {any} */ opts = {}) => readOutlineFile(name, decodeOutlineFile(bytes(name)), new DOMParser(), opts);
/** @param {import('../../static/app/editor/outline-io.js').Item[]} items */
const sketch = (items) => items.map((i) => `${'  '.repeat(i.depth)}${i.type === 'todo' ? (i.checked ? '[x] ' : '[ ] ') : i.type === 'bullet' ? '' : `${i.type}: `}${i.content}`).join('\n');

describe('Logseq pages', () => {
  it('page properties name the page and are no bullets; block properties leave the text; markers make todos; [[links]] find documents', () => {
    const docs = new Map([['meeting notes', 'doc_0123456789abcdef'], ['bob', 'doc_fedcba9876543210']]);
    const { title, items } = read('logseq-page.md', { linkTo: (/** @type {string} */ t) => docs.get(t.toLowerCase()) ?? null });
    expect(title).toBe('Project Alpha');
    expect(sketch(items)).toBe([
      'Kickoff meeting with [[doc_0123456789abcdef]] and [[Nobody Knows This Page]]',
      '  [ ] Book the room',
      '  [x] Send the agenda',
      '  [ ] Ask [[doc_fedcba9876543210]] about the budget',
      'Notes',
      '  [ ] Draft the plan ((6512a3f1-0c4e-4a55-9d0b-1f2e3d4c5b6a))',
      '  [ ] Collect the numbers',
      '    [x] The old spreadsheet',
      '  A line\nthat goes on',
      'code: const x = 1; // key:: not a property in code',
    ].join('\n'));
    expect(items.length).toBe(10);
  });

  it('a journal whose page properties are its first bullet', () => {
    const { title, items } = read('logseq-journal.md');
    expect(title).toBe('2024-03-05');
    expect(sketch(items)).toBe(['Met [[Project Alpha]] team #meeting', '  [ ] Reply from legal', '[x] Water the plants'].join('\n'));
  });

  it('YAML front matter and CRLF line ends (Obsidian and others)', () => {
    const { title, items } = read('frontmatter-crlf.md');
    expect(title).toBe('Reading list');
    expect(sketch(items)).toBe(['[ ] Dune', '  [x] Part one', 'Stoner'].join('\n'));
  });
});

describe('Workflowy plain-text export', () => {
  it('quoted lines are the bullet\'s note (its second line), also over several lines', () => {
    const { items } = read('workflowy-export.txt');
    expect(sketch(items)).toBe([
      'Trip to Lisbon\nDates still open',
      '  Flights',
      '    Book the return\nCheck the luggage rules:\none bag each',
      '  Hotel',
      'Work',
      '  Finish the report',
    ].join('\n'));
  });
});

describe('encodings', () => {
  it('an ISO-8859-1 OPML file keeps its accents; entities and an empty bullet come through', () => {
    const { title, items } = read('latin1.opml');
    expect(title).toBe('Café plans');
    expect(sketch(items)).toBe(['Menü & drinks\nEspresso <3', '  [x] Crème brûlée', '  '].join('\n'));
  });

  it('UTF-8 with a byte-order mark, and bytes that are not UTF-8 at all', () => {
    expect(decodeOutlineFile(new Uint8Array([0xef, 0xbb, 0xbf, 0x2d, 0x20, 0xc3, 0xa9]))).toBe('- é');
    expect(decodeOutlineFile(new Uint8Array([0x2d, 0x20, 0xe9]))).toBe('- é');
  });
});
