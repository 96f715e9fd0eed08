// @ts-check
// order-key.js against the shared vectors (the same file the Rust tests read) and against the
// npm `fractional-indexing` package as an oracle over thousands of seeded random chains.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { generateKeyBetween, generateNKeysBetween } from 'fractional-indexing';
import { keyBetween, nKeysBetween, validateOrderKey } from '../../static/engine/order-key.js';
import { mulberry32, helpers } from './prng.js';

const vectors = JSON.parse(readFileSync(new URL('../vectors/order-keys.json', import.meta.url), 'utf8'));

/** @param {() => any} f */
function attempt(f) {
  try {
    return f();
  } catch {
    return null;
  }
}

describe('order-keys.json vectors', () => {
  it('keyBetween matches every case', () => {
    expect(vectors.between.length).toBeGreaterThan(100);
    for (const [a, b, want] of vectors.between) {
      expect([a, b, attempt(() => keyBetween(a, b))]).toEqual([a, b, want]);
    }
  });
  it('nKeysBetween matches every case', () => {
    for (const [a, b, n, want] of vectors.nBetween) {
      expect([a, b, n, attempt(() => nKeysBetween(a, b, n))]).toEqual([a, b, n, want]);
    }
  });
  it('rejects every invalid key', () => {
    for (const key of vectors.invalid) {
      expect(validateOrderKey(key), key).toBe(false);
      expect(() => keyBetween(key, null)).toThrow();
      expect(() => keyBetween(null, key)).toThrow();
    }
  });
  it('documented examples and stricter alphabet', () => {
    expect(keyBetween(null, null)).toBe('a0');
    expect(keyBetween('a0', null)).toBe('a1');
    expect(keyBetween('a0', 'a1')).toBe('a0V');
    expect(keyBetween(null, 'a0')).toBe('Zz');
    for (const key of ['a0 ', 'a!', 'a0é', 'a0~', '\u0000a0']) expect(validateOrderKey(key)).toBe(false);
    expect(() => keyBetween('a1', 'a0')).toThrow(/out of order/);
  });
  it('long runs of z do not overflow the stack', () => {
    const a = 'z'.repeat(27) + 'z'.repeat(200000);
    const k = keyBetween(a, null);
    expect(k > a).toBe(true);
    expect(k.length).toBe(a.length + 1);
  });
});

describe('oracle: fractional-indexing over random chains', () => {
  it('5,000 seeded steps of insert-anywhere chains agree key for key', () => {
    const rng = mulberry32(20261203);
    const { int, chance } = helpers(rng);
    let compared = 0;
    for (let chain = 0; chain < 50; chain++) {
      /** @type {string[]} */
      const list = [];
      for (let step = 0; step < 100; step++) {
        // Bias towards the ends and towards one hot spot so keys grow deep, as real editing does.
        const r = rng();
        const i = r < 0.25 ? 0 : r < 0.5 ? list.length : chance(0.5) ? Math.min(1, list.length) : int(list.length + 1);
        const a = i > 0 ? list[i - 1] : null;
        const b = i < list.length ? list[i] : null;
        const got = keyBetween(a, b);
        expect(got).toBe(generateKeyBetween(a, b));
        expect(validateOrderKey(got)).toBe(true);
        list.splice(i, 0, got);
        compared++;
      }
      const sorted = [...list].sort();
      expect(list).toEqual(sorted);
    }
    expect(compared).toBe(5000);
  });
  it('nKeysBetween agrees for random ranges and counts', () => {
    const rng = mulberry32(7);
    const { int } = helpers(rng);
    let keys = nKeysBetween(null, null, 40);
    expect(keys).toEqual(generateNKeysBetween(null, null, 40));
    for (let i = 0; i < 1000; i++) {
      const x = int(keys.length + 1);
      const a = x > 0 ? keys[x - 1] : null;
      const b = x < keys.length ? keys[x] : null;
      const n = int(12);
      const got = nKeysBetween(a, b, n);
      expect(got).toEqual(generateNKeysBetween(a, b, n));
      keys = [...keys.slice(0, x), ...got, ...keys.slice(x)].slice(0, 400);
    }
  });
});
