// @ts-check
// @vitest-environment happy-dom
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fromHtml, fromMarkdown, fromOpml, fromPlainText, inlineHtmlToMarkdown, toHtml, toMarkdown, toOpml, toPlainText } from '../../static/app/editor/outline-io.js';

const fixture = (/** @type {string} */ name) => readFileSync(resolve('tests/app/fixtures', name), 'utf8');
/** @param {import('../../static/app/editor/outline-io.js').Item[]} items */
const sketch = (items) => items.map((i) => `${'  '.repeat(i.depth)}${i.type === 'todo' ? (i.checked ? '[x] ' : '[ ] ') : i.type === 'bullet' ? '' : `${i.type}: `}${i.content}`).join('\n');

describe('Markdown', () => {
  const md = [
    '# Trip',
    '',
    '- Pack #travel',
    '  - [ ] passport',
    '  - [x] tickets',
    '  - # Checklist',
    '- > a quote',
    '- ```python',
    '  print(1)',
    '',
    '  print(2)',
    '  ```',
    '- two lines',
    '  second line',
    '- ',
    '',
  ].join('\n').replace('- \n', '-\n');

  it('reads a nested list with todos, headings, quotes, code and line breaks', () => {
    const { title, items } = fromMarkdown(md);
    expect(title).toBe('Trip');
    expect(sketch(items)).toBe(
      ['Pack #travel', '  [ ] passport', '  [x] tickets', '  h1: Checklist', 'quote: a quote', 'code: print(1)\n\nprint(2)', 'two lines\nsecond line', ''].join('\n'),
    );
    expect(items[5].language).toBe('python');
  });

  it('round trip: Markdown → import → export gives the same text', () => {
    const { title, items } = fromMarkdown(md);
    expect(toMarkdown(items, { title: title ?? undefined })).toBe(md);
  });

  it('reads other writers\' lists: *, +, 1., tabs, 4-space indents; no depth jumps', () => {
    expect(sketch(fromMarkdown('* a\n    * b\n\t\t* c\n+ d\n1. e').items)).toBe('a\n  b\n    c\nd\ne');
    expect(fromMarkdown('- a\n      - b').items.map((i) => i.depth)).toEqual([0, 1]);
  });

  it('plain text: one bullet per line, indentation kept', () => {
    expect(sketch(fromPlainText('a\n\tb\n\t\tc\n\n[x] d'))).toBe('a\n  b\n    c\n[x] d');
    expect(toPlainText(fromPlainText('a\n\tb'))).toBe('a\n\tb\n');
  });
});

describe('OPML', () => {
  it('reads a Workflowy export: nesting, completed items, notes, its inline HTML', () => {
    const { title, items } = fromOpml(fixture('workflowy-export.opml'), new DOMParser());
    expect(title).toBeNull();
    expect(sketch(items)).toBe(
      ['Launch plan #q3', '  [x] Write the **announcement**', '  Check the [docs](https://example.com/docs)\nask Lin first', '    Screenshots', 'Ideas'].join('\n'),
    );
  });

  it('reads a Dynalist export: title, checkboxes, Markdown kept as written', () => {
    const { title, items } = fromOpml(fixture('dynalist-export.opml'), new DOMParser());
    expect(title).toBe('Reading list');
    expect(sketch(items)).toBe(['Books', '  [x] Dune', '  [ ] Middlemarch', '  __Essays__ by **Montaigne**'].join('\n'));
  });

  it('writes OPML that reads back the same (escaped text, types, depth)', () => {
    const rows = fromMarkdown('- a & <b> "q"\n  - [x] done\n    - deep\n- ## head\n').items;
    const xml = toOpml('T & co', rows);
    expect(xml).toContain('<title>T &amp; co</title>');
    const back = fromOpml(xml, new DOMParser());
    expect(back.title).toBe('T & co');
    expect(sketch(back.items)).toBe(sketch(rows));
  });

  it('refuses what is not OPML', () => {
    expect(() => fromOpml('<html><p>hi</p></html>', new DOMParser())).toThrow(/not OPML/);
  });

  it('Workflowy inline HTML becomes Markdown, unknown tags drop, entities decode', () => {
    expect(inlineHtmlToMarkdown('<i>x</i> <s>y</s> <span class="c">z</span> &amp; 1 &lt; 2')).toBe('*x* ~~y~~ z & 1 < 2');
  });
});

describe('HTML lists', () => {
  it('writes nested lists that read back the same', () => {
    const items = fromMarkdown('- a\n  - [ ] b\n    - c <i>\n- d\n').items;
    const html = toHtml(items);
    expect(html).toBe('<ul><li>a<ul><li><input type="checkbox"> b<ul><li>c &lt;i&gt;</li></ul></li></ul></li><li>d</li></ul>');
    expect(sketch(fromHtml(html, new DOMParser()))).toBe(sketch(items));
  });

  it('reads Workflowy / Logseq style nesting (a list inside the item)', () => {
    const html = '<meta charset="utf-8"><ul><li><span class="name">Project</span><ul><li><span class="name">Step <b>one</b></span></li></ul></li><li>Next</li></ul>';
    expect(sketch(fromHtml(html, new DOMParser()))).toBe('Project\n  Step one\nNext');
  });

  it('reads Google Docs lists (flat items with aria-level)', () => {
    const html =
      '<meta charset="utf-8"><b style="font-weight:normal;" id="docs-internal-guid-1"><ul style="margin-top:0;margin-bottom:0;">' +
      '<li dir="ltr" aria-level="1"><p dir="ltr" role="presentation"><span>Top</span></p></li>' +
      '<li dir="ltr" aria-level="2"><p dir="ltr" role="presentation"><span>Child</span></p></li>' +
      '<li dir="ltr" aria-level="3"><p dir="ltr" role="presentation"><span>Grandchild</span></p></li>' +
      '<li dir="ltr" aria-level="1"><p dir="ltr" role="presentation"><span>Second</span></p></li></ul></b>';
    expect(sketch(fromHtml(html, new DOMParser()))).toBe('Top\n  Child\n    Grandchild\nSecond');
  });

  it('no list: nothing', () => {
    expect(fromHtml('<p>just text</p>', new DOMParser())).toEqual([]);
  });
});
