// @ts-check
// Scenario 15: markdown shortcuts typed at the start of a bullet, as a new user types them:
// "``` " makes a code block without a leading space, "```python " also names its language.

import assert from 'node:assert/strict';

import { scenario, waitFor } from './harness.js';
import { setup, focusEnd } from './fixtures.js';

scenario('15 shortcuts: a code fence takes its space and its language', async (h) => {
  const s = await setup(h, { seed: ['first'], open: ['alice'] });
  const { api, doc, ids, pages } = s;
  const page = pages.alice;
  for (const [fence, language] of [['``` ', null], ['```python ', 'python']]) {
    await focusEnd(page, ids[0]);
    await page.keyboard.press('Enter');
    await page.keyboard.type(`${fence}print(1)`, { delay: 10 });
    const block = await waitFor(async () => {
      const snap = await api.snapshot(doc);
      return snap.blocks.find((/** @type {any} */ b) => !b.deleted && b.type === 'code' && b.language === language && b.content === 'print(1)');
    }, { timeout: 15_000, message: `a code block with language ${language} and the text without the fence` });
    assert.equal(block.content, 'print(1)');
    await page.keyboard.press('Escape');
  }
});
