// A word diff for people: which words of a bullet's text were removed and which added,
// everything else kept. The same algorithm as the server's diff (`collab/diff.rs`): words
// (letters, digits, `_`), runs of spaces and each other character are tokens (so "nights,"
// changed to "nights, 2 rooms" marks only the addition), the common beginning and end are cut off, the
// middle is compared by longest common subsequence, and texts too long to compare cheaply
// are shown as one replacement. Pure (no DOM); unit-tested.

/** @typedef {{op: 'same'|'add'|'del', text: string}} Piece */

/** Most token pairs compared word by word. */
const MAX_CELLS = 250_000;

/** @param {string} s @returns {string[]} */
export function tokens(s) {
  return s.match(/\s+|[\p{L}\p{N}\p{M}_]+|[^\s\p{L}\p{N}\p{M}_]/gu) ?? [];
}

/** @param {Piece[]} out @param {Piece['op']} op @param {string} text */
function push(out, op, text) {
  if (!text) return;
  const last = out[out.length - 1];
  if (last && last.op === op) last.text += text;
  else out.push({ op, text });
}

/**
 * @param {string} before
 * @param {string} after
 * @returns {Piece[]}
 */
export function wordDiff(before, after) {
  const a = tokens(before);
  const b = tokens(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const am = a.slice(head, a.length - tail);
  const bm = b.slice(head, b.length - tail);
  /** @type {Piece[]} */
  const out = [];
  push(out, 'same', a.slice(0, head).join(''));
  if (am.length * bm.length > MAX_CELLS) {
    push(out, 'del', am.join(''));
    push(out, 'add', bm.join(''));
  } else {
    const n = am.length;
    const m = bm.length;
    // lcs[i][j]: longest common subsequence of am[i..] and bm[j..]
    const lcs = new Uint32Array((n + 1) * (m + 1));
    const at = (/** @type {number} */ i, /** @type {number} */ j) => i * (m + 1) + j;
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[at(i, j)] = am[i] === bm[j] ? lcs[at(i + 1, j + 1)] + 1 : Math.max(lcs[at(i + 1, j)], lcs[at(i, j + 1)]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && am[i] === bm[j]) {
        push(out, 'same', am[i]);
        i++;
        j++;
      } else if (i < n && (j === m || lcs[at(i + 1, j)] >= lcs[at(i, j + 1)])) {
        // removals before additions: "old new" reads as a replacement
        push(out, 'del', am[i]);
        i++;
      } else {
        push(out, 'add', bm[j]);
        j++;
      }
    }
  }
  push(out, 'same', a.slice(a.length - tail).join(''));
  return out;
}
