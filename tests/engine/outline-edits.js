// @ts-check
// Random outliner edits on a flat list (what an editor can hand the engine), shared by the
// diff and undo property tests. Each edit returns the new flat list; the input is not changed.
import { helpers } from './prng.js';
import { DocModel } from '../../static/engine/model.js';
import { nKeysBetween } from '../../static/engine/order-key.js';

/** @typedef {import('../../static/engine/types.js').FlatRow} FlatRow */

const CTX = { clientId: 'cl_me', userId: 'usr_me', name: 'Me', now: 1, heldByOthers: () => false, leasesEnabled: true };

/**
 * A model holding a random tree of `size` live blocks (plus a few tombstones).
 * @param {() => number} rng @param {number} size @param {() => string} newOpId
 */
export function randomModel(rng, size, newOpId) {
  const { int, chance } = helpers(rng);
  const m = DocModel.empty('doc_t');
  /** @type {string[]} */
  const ids = [];
  for (let i = 0; i < size; i++) {
    const parent = ids.length > 0 && chance(0.6) ? ids[int(ids.length)] : null;
    const last = m.childIds(parent).at(-1);
    // Sometimes the same key as the last sibling, as two clients inserting at once produce
    // (siblings then order by id).
    const lastKey = last ? /** @type {any} */ (m.get(last)).orderKey : null;
    const key = lastKey !== null && chance(0.15) ? lastKey : nKeysBetween(lastKey, null, 1)[0];
    const id = `blk_${i}`;
    m.applyOp({ opId: newOpId(), kind: 'insert', blockId: id, parentId: parent, orderKey: key, content: `text ${i}` }, CTX);
    ids.push(id);
  }
  for (let i = 0; i < Math.floor(size / 10); i++) m.applyOp({ opId: newOpId(), kind: 'delete', blockId: ids[int(ids.length)] }, CTX);
  return m;
}

/** @param {DocModel} m @returns {FlatRow[]} */
export function flat(m) {
  return m.rows().map((r) => ({ id: r.id, depth: r.depth, content: r.content, type: r.type, checked: r.checked, collapsed: r.collapsed, language: r.language, conflictResolved: r.conflictResolved }));
}

/** End (exclusive) of the subtree starting at row i. @param {FlatRow[]} rows @param {number} i */
function subtreeEnd(rows, i) {
  let e = i + 1;
  while (e < rows.length && rows[e].depth > rows[i].depth) e++;
  return e;
}

/**
 * One random editor action on a flat list (what an outliner can do).
 * @param {() => number} rng @param {FlatRow[]} rows @param {{n: number, graveyard: FlatRow[], exclude?: string[]}} st
 * @returns {[string, FlatRow[]]}
 */
export function randomEdit(rng, rows, st) {
  const { int, pick, chance } = helpers(rng);
  const next = rows.map((r) => ({ ...r }));
  const fresh = (/** @type {number} */ depth, /** @type {string} */ content) => ({ id: `blk_new${st.n++}`, depth, content });
  const i = int(Math.max(next.length, 1));
  const kinds = ['type', 'split', 'merge', 'indent', 'outdent', 'move', 'delete', 'deleteOne', 'insert', 'paste', 'props', 'revive', 'wild'];
  const allowed = st.exclude ? kinds.filter((k) => !st.exclude?.includes(k)) : kinds;
  const kind = next.length === 0 ? 'insert' : pick(allowed);
  switch (kind) {
    case 'type':
      next[i].content += pick(['a', ' ', 'é', '#tag', '😀']);
      break;
    case 'split': {
      const c = next[i].content;
      const at = int(c.length + 1);
      next[i].content = c.slice(0, at);
      next.splice(i + 1, 0, fresh(next[i].depth, c.slice(at)));
      break;
    }
    case 'merge':
      if (i + 1 < next.length) {
        next[i].content += next[i + 1].content;
        st.graveyard.push(next[i + 1]);
        next.splice(i + 1, 1);
      }
      break;
    case 'indent': {
      if (i === 0 || next[i - 1].depth < next[i].depth) break;
      const e = subtreeEnd(next, i);
      for (let k = i; k < e; k++) next[k].depth++;
      break;
    }
    case 'outdent': {
      if (next[i].depth === 0) break;
      const e = subtreeEnd(next, i);
      for (let k = i; k < e; k++) next[k].depth--;
      break;
    }
    case 'move': {
      const e = subtreeEnd(next, i);
      const cut = next.splice(i, e - i);
      const at = int(next.length + 1);
      const maxDepth = at === 0 ? 0 : next[at - 1].depth + 1;
      const depth = int(maxDepth + 1);
      const shift = depth - cut[0].depth;
      next.splice(at, 0, ...cut.map((r) => ({ ...r, depth: r.depth + shift })));
      break;
    }
    case 'delete': {
      const e = subtreeEnd(next, i);
      st.graveyard.push(...next.splice(i, e - i));
      break;
    }
    case 'deleteOne':
      st.graveyard.push(...next.splice(i, 1));
      break;
    case 'insert': {
      const at = int(next.length + 1);
      const depth = at === 0 ? 0 : int(next[at - 1].depth + 2);
      next.splice(at, 0, { ...fresh(depth, 'new'), type: chance(0.3) ? 'todo' : undefined, checked: chance(0.2) ? true : undefined });
      break;
    }
    case 'paste': {
      const at = int(next.length + 1);
      let depth = at === 0 ? 0 : int(next[at - 1].depth + 2);
      const many = [];
      for (let k = 0; k < 1 + int(12); k++) {
        many.push(fresh(depth, `pasted ${k}`));
        depth = Math.max(0, depth + int(3) - 1);
      }
      next.splice(at, 0, ...many);
      break;
    }
    case 'props': {
      const r = next[i];
      const p = pick(['checked', 'collapsed', 'type', 'language']);
      if (p === 'checked') r.checked = !r.checked;
      else if (p === 'collapsed') r.collapsed = !r.collapsed;
      else if (p === 'type') r.type = pick(['bullet', 'todo', 'h1', 'code', 'quote']);
      else r.language = pick(['rust', 'js', null]);
      break;
    }
    case 'revive': {
      // Bring back a row deleted earlier (as an undo of a delete might look to the diff).
      const g = st.graveyard.pop();
      if (g && !next.some((r) => r.id === g.id)) {
        const at = int(next.length + 1);
        next.splice(at, 0, { ...g, depth: at === 0 ? 0 : int(next[at - 1].depth + 2) });
      }
      break;
    }
    case 'wild':
      // An editor bug: a row far too deep; diffRows clamps it.
      next[i].depth += 3;
      break;
  }
  return [kind, next];
}

