// @vitest-environment happy-dom
// @ts-check
import { describe, it, expect } from 'vitest';
import { HeldKeys, holdKeys } from '../../static/app/editor/type-ahead.js';
import { memoryStorage } from '../engine/memory-storage.js';

/** @param {string} key @param {string} [id] */
const k = (key, id = 'blk_1') => ({ id, key, shift: false, offset: null });

describe('keys held while the first screen is read-only', () => {
  it('are kept on this device as they come, and a page that takes them removes them', () => {
    const s = memoryStorage();
    const closed = new HeldKeys(s, 'usr_a', 'doc_1', 'page-1');
    closed.add(k('h'));
    closed.add(k('i'));
    // The tab closes here; the next page of the document types them again.
    const next = new HeldKeys(s, 'usr_a', 'doc_1', 'page-2');
    next.add(k('!'));
    expect(next.take().map((x) => x.key)).toEqual(['h', 'i', '!']);
    expect(new HeldKeys(s, 'usr_a', 'doc_1', 'page-3').take()).toEqual([]);
    expect(s.getItem('docsync:typeahead:usr_a:doc_1')).toBeNull();
  });

  it('are typed once: a page whose keys another page took does not type them again', () => {
    const s = memoryStorage();
    const a = new HeldKeys(s, 'usr_a', 'doc_1', 'a');
    a.add(k('x'));
    expect(new HeldKeys(s, 'usr_a', 'doc_1', 'b').take().map((x) => x.key)).toEqual(['x']);
    expect(a.take()).toEqual([]);
  });

  it("stay with their person and document", () => {
    const s = memoryStorage();
    new HeldKeys(s, 'usr_a', 'doc_1', 'a').add(k('x'));
    expect(new HeldKeys(s, 'usr_b', 'doc_1', 'b').take()).toEqual([]);
    expect(new HeldKeys(s, 'usr_a', 'doc_2', 'b').take()).toEqual([]);
    expect(new HeldKeys(s, 'usr_a', 'doc_1', 'b').take()).toHaveLength(1);
  });

  it('are kept in memory where the device keeps nothing (no storage, storage full, garbage)', () => {
    const none = new HeldKeys(null, 'usr_a', 'doc_1', 'a');
    none.add(k('x'));
    expect(none.take().map((x) => x.key)).toEqual(['x']);
    const full = memoryStorage();
    full.setItem = () => {
      throw new Error('QuotaExceededError');
    };
    const f = new HeldKeys(full, 'usr_a', 'doc_1', 'a');
    f.add(k('y'));
    expect(f.take().map((x) => x.key)).toEqual(['y']);
    const junk = memoryStorage();
    junk.setItem('docsync:typeahead:usr_a:doc_1', '{"p":[{"id":1},{"id":"blk_1","key":"z","shift":false,"offset":null}],"q":7}');
    expect(new HeldKeys(junk, 'usr_a', 'doc_1', 'a').take().map((x) => x.key)).toEqual(['z']);
    junk.setItem('docsync:typeahead:usr_a:doc_1', 'not json');
    expect(new HeldKeys(junk, 'usr_a', 'doc_1', 'a').take()).toEqual([]);
  });
});

describe('holdKeys', () => {
  /** @returns {{outline: HTMLElement, field: HTMLElement}} */
  function rows() {
    const outline = document.createElement('div');
    outline.innerHTML = '<div class="row" data-block-id="blk_7"><div class="row-text" tabindex="-1">Plan</div></div>';
    document.body.append(outline);
    return { outline, field: /** @type {HTMLElement} */ (outline.querySelector('.row-text')) };
  }
  /** @param {HTMLElement} el @param {KeyboardEventInit} init */
  const press = (el, init) => {
    const e = new KeyboardEvent('keydown', { bubbles: true, cancelable: true, ...init });
    el.dispatchEvent(e);
    return e.defaultPrevented;
  };

  it('holds characters and editing keys typed into a read-only row, not shortcuts, and stops', () => {
    const { outline, field } = rows();
    const held = new HeldKeys(memoryStorage(), 'usr_a', 'doc_1', 'a');
    let heardBelow = 0;
    outline.addEventListener('keydown', () => heardBelow++);
    const stop = holdKeys(outline, held);
    expect(press(field, { key: 'a' })).toBe(true);
    expect(press(field, { key: 'Enter', shiftKey: true })).toBe(true);
    expect(press(field, { key: 'c', ctrlKey: true })).toBe(false);
    expect(press(field, { key: 'ArrowDown' })).toBe(false);
    // Tab moves the focus on (going through the page by keyboard), never held as an indent
    expect(press(field, { key: 'Tab' })).toBe(false);
    // the editor's own key handling does not also see a held key
    expect(heardBelow).toBe(3);
    stop();
    expect(press(field, { key: 'b' })).toBe(false);
    const keys = held.take();
    expect(keys.map((x) => [x.id, x.key, x.shift])).toEqual([['blk_7', 'a', false], ['blk_7', 'Enter', true]]);
    outline.remove();
  });

  it('leaves an editable row alone', () => {
    const { outline, field } = rows();
    field.setAttribute('contenteditable', 'true');
    const held = new HeldKeys(memoryStorage(), 'usr_a', 'doc_1', 'a');
    const stop = holdKeys(outline, held);
    expect(press(field, { key: 'a' })).toBe(false);
    expect(held.holding).toBe(false);
    stop();
    outline.remove();
  });
});
