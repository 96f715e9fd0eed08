// @ts-check
import { describe, expect, it } from 'vitest';
import { hasMarkup, parseInline, renderedToRaw, safeHref, setLinkTitles, shownText } from '../../static/app/editor/markdown.js';
import { commandFor } from '../../static/app/editor/keys.js';

/** @param {string} s */
const kinds = (s) => parseInline(s).map((t) => `${t.kind}:${t.text}${t.href ? `→${t.href}` : ''}`);

describe('parseInline', () => {
  it('plain text is one token', () => {
    expect(kinds('just text')).toEqual(['text:just text']);
    expect(parseInline('')).toEqual([]);
  });
  it('bold, italic, strike, code', () => {
    expect(kinds('a **b** c')).toEqual(['text:a ', 'bold:b', 'text: c']);
    expect(kinds('*i* and _j_')).toEqual(['italic:i', 'text: and ', 'italic:j']);
    expect(kinds('~~gone~~ `x * y`')).toEqual(['strike:gone', 'text: ', 'code:x * y']);
  });
  it('does not take snake_case or lone stars for italics', () => {
    expect(kinds('snake_case_name')).toEqual(['text:snake_case_name']);
    expect(kinds('2 * 3 * 4')).toEqual(['text:2 * 3 * 4']);
  });
  it('links: markdown and bare, only safe schemes', () => {
    expect(kinds('see [docs](https://x.org/a) now')).toEqual(['text:see ', 'link:docs→https://x.org/a', 'text: now']);
    expect(kinds('go https://x.org/p.')).toEqual(['text:go ', 'link:https://x.org/p→https://x.org/p', 'text:.']);
    expect(kinds('[bad](javascript:alert(1))')[0]).toMatch(/^text:/);
    expect(safeHref('data:text/html,x')).toBeNull();
    expect(safeHref('//evil.com')).toBeNull();
    expect(safeHref('/d/doc_1#blk_2')).toBe('/d/doc_1#blk_2');
  });
  it('#tags link to the tag search, not inside words or headings', () => {
    expect(kinds('plan #q3-goals, then')).toEqual(['text:plan ', 'tag:#q3-goals→/?tag=q3-goals', 'text:, then']);
    expect(kinds('a#b')).toEqual(['text:a#b']);
    expect(kinds('#über')).toEqual(['tag:#über→/?tag=%C3%BCber']);
    expect(kinds('# heading')).toEqual(['text:# heading']);
  });
  it('markup is text, never HTML', () => {
    expect(kinds('<img src=x onerror=alert(1)>')).toEqual(['text:<img src=x onerror=alert(1)>']);
  });
});

describe('shownText', () => {
  it('is the text a reader sees: link texts, document titles, no markup', () => {
    setLinkTitles((id) => (id === 'doc_alpha' ? 'Project Alpha' : null));
    expect(shownText('Met the [[doc_alpha]] team, see [Send the agenda](/d/doc_alpha/b/blk_1) **now**')).toBe('Met the Project Alpha team, see Send the agenda now');
    expect(shownText('[[doc_gone]] and `code` ~~old~~')).toBe('Linked document and code old');
    setLinkTitles(() => null);
  });
});

describe('rendered → raw offsets', () => {
  it('maps clicks in rendered text back to the raw text', () => {
    const raw = 'a **bold** [l](https://x.org) z';
    const t = parseInline(raw);
    // rendered: "a bold l z"
    expect(renderedToRaw(t, 0)).toBe(0);
    expect(renderedToRaw(t, 3)).toBe(raw.indexOf('old'));
    expect(raw[renderedToRaw(t, 7)]).toBe('['); // at a boundary the caret goes before the syntax
    expect(raw[renderedToRaw(t, 8)]).toBe(']');
    expect(renderedToRaw(t, 10)).toBe(raw.length);
    expect(hasMarkup(t)).toBe(true);
    expect(hasMarkup(parseInline('a #tag https://x.org'))).toBe(false);
  });
});

describe('key map', () => {
  /** @param {string} key @param {Record<string, boolean>} [m] */
  const k = (key, m = {}) => commandFor({ key, ...m });
  it('maps the outliner keys', () => {
    expect(k('Enter')).toBe('split');
    expect(k('Enter', { shiftKey: true })).toBe('newline');
    expect(k('Enter', { ctrlKey: true })).toBe('toggleTodo');
    expect(k('Enter', { metaKey: true })).toBe('toggleTodo');
    expect(k('Tab')).toBe('indent');
    expect(k('Tab', { shiftKey: true })).toBe('outdent');
    expect(k('ArrowUp', { altKey: true, shiftKey: true })).toBe('moveUp');
    expect(k('ArrowDown', { altKey: true, shiftKey: true })).toBe('moveDown');
    expect(k('ArrowUp', { ctrlKey: true })).toBe('collapse');
    expect(k('ArrowDown', { metaKey: true })).toBe('expand');
    expect(k('ArrowUp')).toBe('up');
    // Shift+arrows: text selection stays native inside a bullet; the page turns it into a
    // selection of whole bullets at the bullet's first/last line
    expect(k('ArrowDown', { shiftKey: true })).toBe('selectDown');
    expect(k('ArrowUp', { shiftKey: true })).toBe('selectUp');
    expect(k('ArrowLeft', { shiftKey: true })).toBeNull();
    expect(k('ArrowRight', { altKey: true })).toBe('zoomIn');
    expect(k('ArrowLeft', { altKey: true })).toBe('zoomOut');
    expect(k('f', { ctrlKey: true })).toBe('find');
    expect(k('a', { metaKey: true })).toBe('selectAll');
    expect(k('ArrowDown', { ctrlKey: true, shiftKey: true })).toBe('expandAll');
    expect(k('ArrowUp', { ctrlKey: true, shiftKey: true })).toBe('collapseAll');
    expect(k('z', { ctrlKey: true })).toBe('undo');
    expect(k('Z', { ctrlKey: true, shiftKey: true })).toBe('redo');
    expect(k('y', { ctrlKey: true })).toBe('redo');
    expect(k('z', { metaKey: true, shiftKey: true })).toBe('redo');
    expect(k('Backspace')).toBe('backspace');
    expect(k('Backspace', { ctrlKey: true })).toBeNull(); // word delete stays native
    expect(k('a')).toBeNull();
  });
});
