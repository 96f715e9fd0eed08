import { describe, expect, it } from 'vitest';
import { tokens, wordDiff } from '../../static/app/history/word-diff.js';

/** The older text from a diff (what was kept and removed) and the newer one. */
const sides = (/** @type {import('../../static/app/history/word-diff.js').Piece[]} */ d) => [
  d.filter((p) => p.op !== 'add').map((p) => p.text).join(''),
  d.filter((p) => p.op !== 'del').map((p) => p.text).join(''),
];

describe('wordDiff', () => {
  it('marks the words replaced and keeps the rest (as the server does)', () => {
    expect(wordDiff('buy milk and bread', 'buy oat milk and butter')).toEqual([
      { op: 'same', text: 'buy ' },
      { op: 'add', text: 'oat ' },
      { op: 'same', text: 'milk and ' },
      { op: 'del', text: 'bread' },
      { op: 'add', text: 'butter' },
    ]);
  });

  it('splits punctuation from words, as the server does', () => {
    expect(wordDiff('three nights', 'three nights, 2 rooms')).toEqual([
      { op: 'same', text: 'three nights' },
      { op: 'add', text: ', 2 rooms' },
    ]);
    expect(tokens('été, café!')).toEqual(['été', ',', ' ', 'café', '!']);
  });

  it('handles empty and equal texts', () => {
    expect(wordDiff('', 'new')).toEqual([{ op: 'add', text: 'new' }]);
    expect(wordDiff('old', '')).toEqual([{ op: 'del', text: 'old' }]);
    expect(wordDiff('same', 'same')).toEqual([{ op: 'same', text: 'same' }]);
    expect(wordDiff('', '')).toEqual([]);
  });

  it('always rebuilds both texts, whatever they are', () => {
    const words = ['a', 'b', 'milk', ' ', '  ', 'été', '😀', 'x\ny'];
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const text = () => Array.from({ length: Math.floor(rnd() * 12) }, () => words[Math.floor(rnd() * words.length)]).join(rnd() < 0.5 ? ' ' : '');
    for (let i = 0; i < 500; i++) {
      const a = text();
      const b = text();
      expect(sides(wordDiff(a, b))).toEqual([a, b]);
    }
  });

  it('shows very long texts as one replacement between their common ends', () => {
    const d = wordDiff('a '.repeat(600) + 'end', 'b '.repeat(600) + 'end');
    expect(d.map((p) => p.op)).toEqual(['del', 'add', 'same']);
    expect(d[2].text).toBe(' end');
  });

  it('splits words from spaces', () => {
    expect(tokens('two  words\n')).toEqual(['two', '  ', 'words', '\n']);
    expect(tokens('a...b')).toEqual(['a', '.', '.', '.', 'b']);
  });
});
