// @ts-check
// Random edits an editor could hand the engine: each takes the engine's current rows and
// returns the next flat list (FlatRow[]) plus the `step` kind, or null if not applicable.
// Typing only ever appends a token (`a3x17`), splits cut at token boundaries, merges join:
// so a token disappears from the document only through a delete (tombstone, later purge),
// an undo of its own typist, or a bug.

/** @typedef {import('../../../static/engine/types.js').Row} Row */
/** @typedef {import('../../../static/engine/types.js').FlatRow} FlatRow */

/** @param {Row} r @returns {FlatRow} */
export function flat(r) {
  return {
    id: r.id, depth: r.depth, content: r.content, type: r.type, checked: r.checked,
    collapsed: r.collapsed, language: r.language, conflictResolved: r.conflictResolved,
  };
}

/** End (exclusive) of the subtree starting at row i. */
export function subtreeEnd(rows, i) {
  let j = i + 1;
  while (j < rows.length && rows[j].depth > rows[i].depth) j++;
  return j;
}

const appendToken = (content, token) => (content ? `${content} ${token}` : token);

/**
 * @param {import('./rng.js').Rng} rng
 * @param {Row[]} rowsIn
 * @param {{token: () => string, newId: () => string, locked?: Set<string>}} ctx
 *   `locked`: bullets shown with a lock (held by others); a user mostly leaves them alone,
 *   so they are avoided 85% of the time (the rest tests that the engine refuses).
 * @returns {{kind: string, step: string, rows: FlatRow[]}|null}
 */
export function randomEdit(rng, rowsIn, ctx) {
  const rows = rowsIn.map(flat);
  const n = rows.length;
  const locked = ctx.locked ?? new Set();
  /** A random index among rows[i] with pred(i), or undefined. @param {(i: number) => boolean} [pred] */
  const choose = (pred = (/** @type {number} */ _i) => true) => {
    let c = [];
    for (let i = 0; i < n; i++) if (pred(i)) c.push(i);
    const free = c.filter((i) => !locked.has(rows[i].id));
    if (free.length && rng.chance(0.85)) c = free;
    return rng.pick(c);
  };
  const roll = rng.f();
  if (n === 0 || roll < 0.14) {
    // New bullet (Enter at the end of a row, or the first one), then its first word.
    const i = n ? rng.below(n + 1) : 0;
    let depth = 0;
    if (i > 0) {
      const prev = rows[i - 1];
      const next = rows[i];
      const lo = next ? next.depth : 0;
      depth = rng.range(Math.min(lo, prev.depth + 1), prev.depth + 1);
    }
    const row = { id: ctx.newId(), depth, content: ctx.token(), type: /** @type {const} */ ('bullet'), checked: false, collapsed: false, language: null, conflictResolved: false };
    rows.splice(i, 0, row);
    return { kind: 'insert', step: 'insert', rows };
  }
  if (roll < 0.52) {
    const i = /** @type {number} */ (choose());
    rows[i] = { ...rows[i], content: appendToken(rows[i].content, ctx.token()) };
    return { kind: 'type', step: 'typing', rows };
  }
  if (roll < 0.62) {
    // Split (Enter inside the text) at a word boundary: the tail becomes a new bullet below;
    // with children, it becomes the first child (as outliners do).
    const i = choose((j) => rows[j].content.split(' ').length >= 2);
    if (i === undefined) return null;
    const words = rows[i].content.split(' ');
    const cut = rng.range(1, words.length - 1);
    const hasKids = i + 1 < n && rows[i + 1].depth > rows[i].depth;
    const tail = { ...rows[i], id: ctx.newId(), content: words.slice(cut).join(' '), depth: rows[i].depth + (hasKids ? 1 : 0), conflictResolved: false };
    rows[i] = { ...rows[i], content: words.slice(0, cut).join(' ') };
    rows.splice(i + 1, 0, tail);
    return { kind: 'split', step: 'split', rows };
  }
  if (roll < 0.70) {
    // Indent a row with its subtree (Tab): it must have a previous sibling.
    const i = choose((j) => j > 0 && rows[j - 1].depth >= rows[j].depth);
    if (i === undefined) return null;
    const end = subtreeEnd(rows, i);
    for (let j = i; j < end; j++) rows[j] = { ...rows[j], depth: rows[j].depth + 1 };
    return { kind: 'indent', step: 'indent', rows };
  }
  if (roll < 0.76) {
    // Outdent a row with its subtree (Shift+Tab).
    const i = choose((j) => rows[j].depth > 0);
    if (i === undefined) return null;
    const end = subtreeEnd(rows, i);
    for (let j = i; j < end; j++) rows[j] = { ...rows[j], depth: rows[j].depth - 1 };
    return { kind: 'outdent', step: 'outdent', rows };
  }
  if (roll < 0.84) {
    // Move a subtree elsewhere (drag and drop).
    const i = /** @type {number} */ (choose());
    const end = subtreeEnd(rows, i);
    const moved = rows.splice(i, end - i);
    const rest = rows;
    const at = rng.below(rest.length + 1);
    const prevDepth = at > 0 ? rest[at - 1].depth : -1;
    const nextDepth = at < rest.length ? rest[at].depth : 0;
    const lo = Math.min(nextDepth, prevDepth + 1);
    const depth = rng.range(Math.max(0, lo), prevDepth + 1);
    const shift = depth - moved[0].depth;
    rest.splice(at, 0, ...moved.map((r) => ({ ...r, depth: r.depth + shift })));
    if (at === i && shift === 0) return null;
    return { kind: 'move', step: 'move', rows: rest };
  }
  if (roll < 0.90) {
    // Delete a bullet with its subtree.
    const i = /** @type {number} */ (choose());
    rows.splice(i, subtreeEnd(rows, i) - i);
    return { kind: 'delete', step: 'delete', rows };
  }
  if (roll < 0.95) {
    // Merge (Backspace at the start): a bullet without children joins the one above.
    const i = choose((j) => j > 0 && subtreeEnd(rows, j) === j + 1 && !locked.has(rows[j - 1].id));
    if (i === undefined) return null;
    const prev = rows[i - 1];
    rows[i - 1] = { ...prev, content: prev.content && rows[i].content ? `${prev.content} ${rows[i].content}` : prev.content + rows[i].content };
    rows.splice(i, 1);
    return { kind: 'merge', step: 'merge', rows };
  }
  // Check a todo, or change the type.
  const i = /** @type {number} */ (choose());
  if (rng.chance(0.5)) {
    rows[i] = { ...rows[i], type: 'todo', checked: !rows[i].checked };
    return { kind: 'check', step: 'check', rows };
  }
  /** @type {import('../../../static/engine/types.js').BlockType[]} */
  const types = ['bullet', 'todo', 'h1', 'h2', 'quote'];
  rows[i] = { ...rows[i], type: rng.pick(types) };
  return { kind: 'props', step: 'props', rows };
}
