// @ts-check
// Seeded PRNG (mulberry32) shared by the engine's property tests: deterministic across Node
// versions, so a failing seed reproduces exactly.

/** @param {number} seed */
export function mulberry32(seed) {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

/** @param {() => number} rng */
export function helpers(rng) {
  const int = (/** @type {number} */ n) => Math.floor(rng() * n);
  return { int, pick: (/** @type {any[]} */ xs) => xs[int(xs.length)], chance: (/** @type {number} */ p) => rng() < p };
}
