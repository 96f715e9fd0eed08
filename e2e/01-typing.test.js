// @ts-check
// Scenario 1: alice and bob type at the same time in different bullets — several hundred
// keystrokes each, with Enter and Tab/Shift+Tab — and both browsers and the server end with
// the same outline, every character present, no conflict copy.

import assert from 'node:assert/strict';

import { scenario } from './harness.js';
import { setup, focusEnd, typeScript, converged, render, assertNoCopies } from './fixtures.js';

const WORDS = 'the quick brown fox jumps over the lazy dog while seven tired owls watch quietly'.split(' ');

/** Lines of about 55 characters, made only of letters, digits, spaces, commas and dots. */
function line(who, i) {
  const w = [];
  for (let k = 0; w.join(' ').length < 48; k++) w.push(WORDS[(i * 3 + k) % WORDS.length]);
  return `${who}${i} ${w.join(' ')}, ${i * 7}.`;
}

/**
 * The keystrokes and the rows they must produce below the start row (its text appended to).
 * Shape: line0 on the start row; Enter+Tab → line1 one level deeper; Enter → line2 same
 * level; Enter+Shift+Tab → line3 back at the start row's level; and so on.
 */
function plan(who, startText) {
  /** @type {(string|{press: string})[]} */
  const script = [];
  const rows = [];
  const moves = [null, 'Tab', null, 'Shift+Tab', null, 'Tab', 'Tab', null, 'Shift+Tab', 'Shift+Tab'];
  let depth = 0;
  for (let i = 0; i < moves.length; i++) {
    const text = line(who, i);
    if (i === 0) {
      script.push(' ' + text);
      rows.push({ depth: 0, text: `${startText} ${text}` });
      continue;
    }
    script.push({ press: 'Enter' });
    if (moves[i]) script.push({ press: moves[i] });
    if (moves[i] === 'Tab') depth++;
    if (moves[i] === 'Shift+Tab') depth--;
    script.push(text);
    rows.push({ depth, text });
  }
  const keys = script.reduce((n, s) => n + (typeof s === 'string' ? s.length : 1), 0);
  return { script, rows, keys };
}

scenario('1 typing together: hundreds of keystrokes each, Enter and Tab, converge with every character', async (h) => {
  const { api, doc, ids, pages } = await setup(h, { seed: ['Alice:', 'Bob:'] });
  const [aRow, bRow] = ids;
  const a = plan('a', 'Alice:');
  const b = plan('b', 'Bob:');
  h.log(`keystrokes: alice ${a.keys}, bob ${b.keys}`);
  assert.ok(a.keys >= 300 && b.keys >= 300);

  await focusEnd(pages.alice, aRow);
  await focusEnd(pages.bob, bRow);
  await Promise.all([typeScript(pages.alice, a.script), typeScript(pages.bob, b.script)]);

  const final = await converged(api, doc, [pages.alice, pages.bob], { timeout: 45_000 });
  const expected = [...a.rows, ...b.rows];
  assert.equal(
    render(final.map(({ depth, text }) => ({ depth, text }))),
    render(expected.map((r) => ({ ...r, conflictOf: null }))),
    'the outline holds every line, in order, at its depth',
  );
  assert.equal(final[0].id, aRow);
  assert.equal(final[a.rows.length].id, bRow);
  assertNoCopies(final);
  const chars = (rows) => rows.map((r) => r.text).join('').length;
  assert.equal(chars(final), chars(expected), 'every character typed is there');
});
