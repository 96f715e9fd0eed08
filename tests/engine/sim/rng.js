// @ts-check
// A small seeded PRNG for the simulation: every random choice of a run comes from one of
// these, so a seed replays the same choices. (32-bit state mixing, written for this test.)

export class Rng {
  /** @param {number} seed */
  constructor(seed) {
    // Spread the seed over four 32-bit words with a Weyl sequence and a mix.
    let x = (seed * 0x9e3779b1) >>> 0;
    const next = () => {
      x = (x + 0x6d2b79f5) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    /** @type {number[]} the four state words */
    this.s = [next(), next(), next(), next()];
    if (!this.s.some((w) => w !== 0)) this.s[0] = 1;
  }

  /** xoshiro128** step: a uniformly distributed 32-bit unsigned integer. */
  u32() {
    const s = this.s;
    const r = Math.imul(rotl(Math.imul(s[1], 5) >>> 0, 7), 9) >>> 0;
    const t = (s[1] << 9) >>> 0;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    for (let i = 0; i < 4; i++) s[i] >>>= 0;
    return r;
  }

  /** A float in [0, 1). */
  f() {
    return this.u32() / 4294967296;
  }

  /** An integer in [0, n). */
  below(n) {
    if (!(n > 0)) throw new Error(`Rng.below(${n})`);
    return Math.floor(this.f() * n);
  }

  /** An integer in [lo, hi]. */
  range(lo, hi) {
    return lo + this.below(hi - lo + 1);
  }

  chance(p) {
    return this.f() < p;
  }

  /** @template T @param {T[]} list @returns {T|undefined} */
  pick(list) {
    return list.length ? list[this.below(list.length)] : undefined;
  }

  /** A UUID v4 string (hyphens removed) drawn from this generator. */
  uuid() {
    const hex = [];
    for (let i = 0; i < 4; i++) hex.push(this.u32().toString(16).padStart(8, '0'));
    const h = hex.join('').split('');
    h[12] = '4';
    h[16] = '89ab'[parseInt(h[16], 16) & 3];
    return h.join('');
  }

  /** A child generator with its own stream (so one part's choices do not shift another's). */
  fork(tag) {
    return new Rng((this.u32() ^ hashString(String(tag))) >>> 0);
  }
}

function rotl(x, k) {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}

export function hashString(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}
