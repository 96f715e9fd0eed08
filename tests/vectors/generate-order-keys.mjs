// @ts-check
// Generates tests/vectors/order-keys.json: input/output vectors recorded from
// the npm `fractional-indexing` package, so that our Rust implementation
// (actors/src/collab/order_key.rs) and the browser can be checked against it.
// Output is deterministic (seeded PRNG), so re-running it must give no diff
// unless the package version changes.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  generateKeyBetween,
  generateNKeysBetween,
} from "fractional-indexing";

// The package's "exports" hides its package.json, so read it by path.
const pkgVersion = JSON.parse(
  readFileSync(
    new URL(
      "../../node_modules/fractional-indexing/package.json",
      import.meta.url,
    ),
    "utf8",
  ),
).version;

const DIGITS =
  "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const SMALLEST_INT = "A" + "0".repeat(26);
const LARGEST_INT = "z" + "z".repeat(26);

// mulberry32: tiny, well-known and stable across Node versions, which matters
// more here than statistical quality.
function mulberry32(seed) {
  let t = seed >>> 0;
  return () => {
    t = (t + 0x6d2b79f5) >>> 0;
    let r = Math.imul(t ^ (t >>> 15), 1 | t);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}
const rng = mulberry32(0x0d0c5c);
const randInt = (n) => Math.floor(rng() * n);
const pick = (xs) => xs[randInt(xs.length)];

// null means "the package threw"; the message is deliberately not recorded,
// as it is not part of the contract.
function between(a, b) {
  try {
    return generateKeyBetween(a, b);
  } catch {
    return null;
  }
}
function nBetween(a, b, n) {
  try {
    return generateNKeysBetween(a, b, n);
  } catch {
    return null;
  }
}
function isValid(key) {
  return between(key, null) !== null && between(null, key) !== null;
}
function intLength(head) {
  if (head >= "a" && head <= "z") return head.charCodeAt(0) - 97 + 2;
  return 90 - head.charCodeAt(0) + 2;
}

// Digits biased towards 0 and z so that carries, borrows and head changes
// actually happen instead of being a 2-in-62 event.
function randDigit() {
  const r = rng();
  if (r < 0.3) return "0";
  if (r < 0.6) return "z";
  return DIGITS[randInt(62)];
}
function randHead() {
  if (rng() < 0.6) return pick(["Z", "Y", "a", "b", "c"]);
  return DIGITS[10 + randInt(52)];
}
function randomKey() {
  for (;;) {
    const head = randHead();
    let key = head;
    for (let i = 1; i < intLength(head); i++) key += randDigit();
    const fracLen = rng() < 0.4 ? 0 : 1 + randInt(6);
    for (let i = 0; i < fracLen; i++) {
      key += i === fracLen - 1 ? DIGITS[1 + randInt(61)] : randDigit();
    }
    if (isValid(key)) return key;
  }
}

const betweenCases = [];
const seen = new Set();
function addBetween(a, b) {
  const id = JSON.stringify([a, b]);
  if (seen.has(id)) return;
  seen.add(id);
  betweenCases.push([a, b, between(a, b)]);
}

// The documented basics.
addBetween(null, null);
addBetween("a0", null);
addBetween("a0", "a1");
addBetween(null, "a0");

// Append chains: each new key goes after the previous one. Starting points sit
// just below head changes ("Zz" -> "a0", "az" -> "b00", ...) and at the top of
// the integer range, where the package falls back to fractions.
const appendStarts = [
  null,
  "Zz",
  "Yzz",
  "az",
  "bzz",
  "czzy",
  "x" + "z".repeat(24),
  "y" + "z".repeat(25),
  LARGEST_INT.slice(0, -1) + "x",
  LARGEST_INT,
  LARGEST_INT + "zzy",
  "A" + "z".repeat(26),
];
for (const start of appendStarts) {
  let k = start;
  for (let i = 0; i < 6; i++) {
    const next = between(k, null);
    addBetween(k, null);
    k = next;
  }
}
// One long chain from the start, as an app appending to a list would do.
{
  let k = null;
  for (let i = 0; i < 70; i++) {
    addBetween(k, null);
    k = between(k, null);
  }
}

// Prepend chains, mirroring the append ones; this includes walking down to the
// smallest integer, where keys must become fractions of "A000...".
const prependStarts = [
  "a0",
  "a1",
  "b00",
  "Z0",
  "Y00",
  "B" + "0".repeat(25),
  "A" + "0".repeat(25) + "2",
  SMALLEST_INT + "1",
  SMALLEST_INT + "01",
  "a0V",
];
for (const start of prependStarts) {
  let k = start;
  for (let i = 0; i < 6 && k !== null; i++) {
    const next = between(null, k);
    addBetween(null, k);
    k = isValid(next) ? next : null;
  }
}
{
  let k = null;
  for (let i = 0; i < 70; i++) {
    addBetween(null, k);
    k = between(null, k);
  }
}

// Close neighbours: repeatedly insert right after the lower bound or right
// before the upper bound, which drives fractions deep.
const neighbourPairs = [
  ["a0", "a1"],
  ["a0", "a0V"],
  ["Zz", "a0"],
  ["az", "b00"],
  ["a0z", "a1"],
  ["a01", "a02"],
  [SMALLEST_INT + "1", SMALLEST_INT + "2"],
  [LARGEST_INT, LARGEST_INT + "1"],
];
for (const [lo, hi] of neighbourPairs) {
  let b = hi;
  for (let i = 0; i < 20; i++) {
    addBetween(lo, b);
    b = between(lo, b);
  }
  let a = lo;
  for (let i = 0; i < 20; i++) {
    addBetween(a, hi);
    a = between(a, hi);
  }
}

// Random pairs, both from synthetic keys and from keys the package produced.
const pool = [];
for (let i = 0; i < 120; i++) pool.push(randomKey());
for (let i = 0; i < 40; i++) {
  const a = pick(pool);
  const b = pick(pool);
  const lo = a < b ? a : b;
  const hi = a < b ? b : a;
  if (lo !== hi) pool.push(between(lo, hi));
}
for (let i = 0; i < 150; i++) {
  const a = pick(pool);
  const b = pick(pool);
  if (a === b) continue;
  addBetween(a < b ? a : b, a < b ? b : a);
}
for (let i = 0; i < 20; i++) {
  addBetween(pick(pool), null);
  addBetween(null, pick(pool));
}

// Keys sharing an integer part, so the fraction midpoint does the work.
function randFraction() {
  let f = "";
  const len = 1 + randInt(5);
  for (let i = 0; i < len - 1; i++) f += randDigit();
  return f + DIGITS[1 + randInt(61)];
}
for (let i = 0; i < 40; i++) {
  const a = pick(pool);
  const int = a.slice(0, intLength(a[0]));
  const b = rng() < 0.5 ? a + randFraction() : int + randFraction();
  if (a !== b && int !== SMALLEST_INT) addBetween(a < b ? a : b, a < b ? b : a);
}

// Out-of-order and equal bounds must be rejected.
for (const [a, b] of [
  ["a1", "a0"],
  ["a0", "a0"],
  ["b00", "az"],
  ["a0V", "a0"],
  ["a0", "Zz"],
]) {
  addBetween(a, b);
}
for (let i = 0; i < 15; i++) {
  const a = pick(pool);
  const b = pick(pool);
  addBetween(a > b ? a : b, a > b ? b : a);
}

// Invalid keys: hand-picked candidates plus mutations of valid ones. Only
// what the package actually rejects is kept, so nothing here is guessed.
// Candidates stay inside the base-62 alphabet: the package does not check the
// alphabet at all (our Rust side rejects such keys, deliberately stricter).
const invalidCandidates = [
  "",
  "a",
  "A",
  "z",
  "Z",
  "0",
  "00",
  "9",
  "0a0",
  "a00",
  "a0V0",
  "a10",
  "b0",
  "b000",
  "Zz0",
  "Y0",
  "zz",
  LARGEST_INT.slice(0, -1),
  LARGEST_INT + "0",
  SMALLEST_INT,
  SMALLEST_INT + "0",
  "A" + "0".repeat(25),
  "a0a0",
  "a1V0",
];
for (let i = 0; i < 30; i++) {
  const k = pick(pool);
  const r = randInt(3);
  if (r === 0) invalidCandidates.push(k + "0");
  else if (r === 1) invalidCandidates.push(k.slice(0, intLength(k[0]) - 1));
  else invalidCandidates.push(DIGITS[randInt(10)] + k.slice(1));
}
const invalid = [];
for (const k of invalidCandidates) {
  if (!isValid(k) && !invalid.includes(k)) invalid.push(k);
}
for (const k of invalid.slice(0, 12)) {
  addBetween(k, null);
  addBetween(null, k);
  addBetween(k, "a0");
  addBetween("a0", k);
}

// n keys at once, including the degenerate counts.
const nCases = [];
const nSeen = new Set();
function addN(a, b, n) {
  const id = JSON.stringify([a, b, n]);
  if (nSeen.has(id)) return;
  nSeen.add(id);
  nCases.push([a, b, n, nBetween(a, b, n)]);
}
for (const n of [0, 1, 2, 3, 5, 10, 64]) {
  addN(null, null, n);
  addN("a0", null, n);
  addN(null, "a0", n);
  addN("a0", "a1", n);
  addN("Zz", "a0", n);
}
addN("az", null, 3);
addN(null, "b00", 3);
addN(LARGEST_INT, null, 4);
addN(null, SMALLEST_INT + "2", 4);
addN(null, "A" + "0".repeat(25) + "3", 4);
for (let i = 0; i < 40; i++) {
  const a = pick(pool);
  const b = pick(pool);
  const n = randInt(20);
  if (a === b) continue;
  const r = randInt(4);
  if (r === 0) addN(a, null, n);
  else if (r === 1) addN(null, b, n);
  else addN(a < b ? a : b, a < b ? b : a, n);
}
// n = 0 returns [] before any validation, so even these succeed.
addN("", null, 0);
addN("a1", "a0", 0);
addN("a1", "a0", 1);
addN("a1", "a0", 2);
addN("a0", "a0", 3);
addN(invalid[1], null, 1);
addN(null, invalid[2], 2);
addN("a0", invalid[3], 5);

// One vector per line keeps diffs of the data file reviewable.
const lines = (xs) => xs.map((x) => "    " + JSON.stringify(x)).join(",\n");
const out =
  "{\n" +
  `  "source": ${JSON.stringify(`fractional-indexing@${pkgVersion}`)},\n` +
  `  "between": [\n${lines(betweenCases)}\n  ],\n` +
  `  "nBetween": [\n${lines(nCases)}\n  ],\n` +
  `  "invalid": [\n${lines(invalid)}\n  ]\n` +
  "}\n";
const target = fileURLToPath(new URL("./order-keys.json", import.meta.url));
if (process.argv.includes("--check")) {
  // CI: the committed vectors must be exactly what the oracle produces today.
  const committed = readFileSync(target, "utf8");
  if (committed !== out) {
    console.error(`${target} differs from what ${pkgVersion} generates; run npm run vectors:order-keys`);
    process.exit(1);
  }
  console.log(`${target}: up to date with fractional-indexing@${pkgVersion}`);
  process.exit(0);
}
writeFileSync(target, out);
console.log(
  `wrote ${target}: ${betweenCases.length} between, ${nCases.length} nBetween, ${invalid.length} invalid`,
);
