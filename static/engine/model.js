// A document's state (title, block tree with tombstones, purged IDs) and the server's rules
// for applying an op to it: a function-for-function mirror of actors/src/collab/{document,
// rules,replay,lease,block,op}.rs, proven equal by tests/vectors/rules.json (model.test.js).
// Invariants: blocks are immutable objects, replaced on change (so clones share them); each
// sibling list is sorted by (orderKey, id) and includes tombstones, as on the server.

import { keyBetween } from './order-key.js';
import { sha256Hex } from './sha256.js';

/** @typedef {import('./types.js').Block} Block */
/** @typedef {import('./types.js').Row} Row */
/** @typedef {import('./types.js').Op} Op */
/** @typedef {import('./types.js').OpResult} OpResult */
/** @typedef {import('./types.js').Effect} Effect */
/** @typedef {import('./types.js').LogEntry} LogEntry */
/** @typedef {import('./types.js').Snapshot} Snapshot */
/** @typedef {import('./types.js').BlockProps} BlockProps */

/**
 * Who applies an op, from where and when. `heldByOthers(id)` answers the lease question of
 * lease.rs `held_by_other` (a live lease of another client; id `'title'` for the title).
 * `isForeign` (optional) names IDs of other documents; only the server can know them.
 * `maxDepth` (optional, default DEFAULT_MAX_DEPTH): the server's `limits.max_depth`.
 * @typedef {{clientId: string, userId: string, name: string, now: number,
 *   heldByOthers: (blockId: string) => boolean, leasesEnabled: boolean,
 *   isForeign?: (blockId: string) => boolean, maxDepth?: number}} OpContext
 */

/** @typedef {{result: OpResult, effects: Effect[], leaseGrants: string[]}} Applied */

/** The pseudo block ID under which the title is leased (lease.rs `TITLE_LEASE`). */
export const TITLE_LEASE = 'title';

/** Most levels a tree may have unless the server says otherwise (rules.rs `DEFAULT_MAX_DEPTH`). */
export const DEFAULT_MAX_DEPTH = 1000;

/**
 * `prefix` + first 20 hex digits of SHA-256(docId ':' opId). Mirrors rules.rs `derived_block_id`.
 * @param {string} prefix @param {string} docId @param {string} opId
 */
export function derivedBlockId(prefix, docId, opId) {
  return prefix + sha256Hex(docId + ':' + opId).slice(0, 20);
}

/** Mirrors rules.rs `conflict_copy_id`. @param {string} docId @param {string} opId */
export function conflictCopyId(docId, opId) {
  return derivedBlockId('blk_cf_', docId, opId);
}

/** Block receiving text sent to a purged or unknown block. Mirrors rules.rs `rescue_block_id`. @param {string} docId @param {string} opId */
export function rescueBlockId(docId, opId) {
  return derivedBlockId('blk_rs_', docId, opId);
}

/**
 * A fresh live block at version 1. Mirrors block.rs `Block::new`.
 * @param {string} id @param {string|null} parentId @param {string} orderKey
 * @param {string} content @param {number} at @param {string} by
 * @returns {Block}
 */
export function newBlock(id, parentId, orderKey, content, at, by) {
  return {
    id, parentId, orderKey, content, type: 'bullet', checked: false, collapsed: false,
    language: null, conflictOf: null, conflictAuthor: null, conflictResolved: false,
    version: 1, deleted: false, deletedAt: null, updatedAt: at, updatedBy: by,
  };
}

/**
 * The block without snapshot-only fields (`depth`), so effects equal the server's exactly.
 * @param {Block} b @returns {Block}
 */
function normalize(b) {
  return {
    id: b.id, parentId: b.parentId ?? null, orderKey: b.orderKey, content: b.content,
    type: b.type ?? 'bullet', checked: !!b.checked, collapsed: !!b.collapsed,
    language: b.language ?? null, conflictOf: b.conflictOf ?? null,
    conflictAuthor: b.conflictAuthor ?? null, conflictResolved: !!b.conflictResolved,
    version: b.version, deleted: !!b.deleted, deletedAt: b.deletedAt ?? null,
    ...(b.deletedBy != null ? { deletedBy: b.deletedBy } : {}),
    updatedAt: b.updatedAt, updatedBy: b.updatedBy,
  };
}

/** Sibling order of PROTOCOL §1: orderKey, then id (ASCII, so code-unit order = byte order). */
/** @param {Block} a @param {Block} b */
function compareBlocks(a, b) {
  if (a.orderKey !== b.orderKey) return a.orderKey < b.orderKey ? -1 : 1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Whether the siblings are in sibling order already. @param {Block[]} list */
function inOrder(list) {
  for (let i = 1; i < list.length; i++) if (compareBlocks(list[i - 1], list[i]) > 0) return false;
  return true;
}

/** @param {string} opId @param {string|null} blockId @returns {OpResult} op.rs `OpResult::applied` */
function applied(opId, blockId) {
  /** @type {OpResult} */
  const r = { opId, status: 'applied', seq: null };
  if (blockId !== null) r.blockId = blockId;
  return r;
}
/** @param {string} opId @param {string} blockId @param {string} reason @returns {OpResult} op.rs `OpResult::rejected` */
function rejected(opId, blockId, reason) {
  return { opId, status: 'rejected', seq: null, blockId, reason };
}
/** @param {string} opId @param {string} blockId @param {string} copyId @returns {OpResult} op.rs `OpResult::conflict` */
function conflict(opId, blockId, copyId) {
  return { opId, status: 'conflict', seq: null, blockId, conflictBlockId: copyId };
}
/** @param {OpResult} result @returns {Applied} rules.rs `Applied::nothing` */
function nothing(result) {
  return { result, effects: [], leaseGrants: [] };
}
/** @param {Block} block @returns {Effect} rules.rs `effect` */
function effect(block) {
  return { e: 'block', block };
}
/** @param {OpContext} ctx @param {string} id rules.rs `lease_for` */
function leaseFor(ctx, id) {
  return ctx.leasesEnabled ? [id] : [];
}
/** @param {OpContext} ctx */
function maxDepthOf(ctx) {
  return Math.max(1, ctx.maxDepth ?? DEFAULT_MAX_DEPTH);
}
/** @param {OpContext} ctx @param {string} id */
function isForeign(ctx, id) {
  return ctx.isForeign ? ctx.isForeign(id) : false;
}
/** @param {Block} b @param {OpContext} ctx @returns {Block} rules.rs `touch` (on a copy) */
function touched(b, ctx) {
  return { ...b, updatedAt: ctx.now, updatedBy: ctx.userId };
}

export class DocModel {
  /** @param {string} docId */
  constructor(docId) {
    this.docId = docId;
    this.title = '';
    this.titleVersion = 1;
    /** @type {string|null} */
    this.icon = null;
    /** The log seq this state reflects (the server's headSeq for a snapshot). */
    this.lastSeq = 0;
    /** @type {Map<string, Block>} */
    this._blocks = new Map();
    /** Parent ID (null = top level) → child IDs sorted by (orderKey, id), tombstones included. @type {Map<string|null, string[]>} */
    this._children = new Map();
    /** @type {Set<string>} */
    this._purged = new Set();
    /** Child arrays this instance created and may mutate; others are shared with a clone. @type {Set<string[]>} */
    this._owned = new Set();
    /** @type {Row[]|null} */
    this._rows = null;
  }

  /** @param {string} docId */
  static empty(docId) {
    return new DocModel(docId);
  }

  /**
   * Confirmed state from a snapshot (headSeq kept as lastSeq). Mirrors document.rs
   * `DocState::from_parts`. `purged`: IDs remembered from earlier purge entries (optional).
   * @param {Pick<Snapshot, 'docId'|'title'|'titleVersion'|'icon'|'headSeq'|'blocks'>} snapshot
   * @param {Iterable<string>} [purged]
   */
  static fromSnapshot(snapshot, purged = []) {
    const m = new DocModel(snapshot.docId);
    m.title = snapshot.title;
    m.titleVersion = snapshot.titleVersion;
    m.icon = snapshot.icon ?? null;
    m.lastSeq = snapshot.headSeq;
    // Bulk load: group the blocks by parent, then sort each sibling list once (cheaper than
    // 50,000 sorted inserts). The blocks themselves are sorted, not their IDs (no map lookup
    // per comparison), and a list already in order — a server snapshot is in document
    // order — is not sorted at all.
    /** @type {Map<string|null, Block[]>} */
    const groups = new Map();
    let repeated = false;
    for (const raw of snapshot.blocks) {
      const b = normalize(raw);
      if (m._blocks.has(b.id)) repeated = true;
      m._blocks.set(b.id, b);
      const group = groups.get(b.parentId);
      if (group) group.push(b);
      else groups.set(b.parentId, [b]);
    }
    for (const [parent, group] of groups) {
      // A block listed twice counts as its last listing (where that put it).
      const live = repeated ? group.filter((b) => m._blocks.get(b.id) === b) : group;
      if (live.length === 0) continue;
      if (!inOrder(live)) live.sort(compareBlocks);
      const ids = live.map((b) => b.id);
      m._children.set(parent, ids);
      m._owned.add(ids);
    }
    for (const id of purged) m._purged.add(id);
    return m;
  }

  /** A copy sharing the immutable blocks; sibling arrays are copied on first write by either side. */
  clone() {
    const c = new DocModel(this.docId);
    c.title = this.title;
    c.titleVersion = this.titleVersion;
    c.icon = this.icon;
    c.lastSeq = this.lastSeq;
    c._blocks = new Map(this._blocks);
    c._children = new Map(this._children);
    c._purged = new Set(this._purged);
    // From now on neither side may mutate an array it shared.
    this._owned = new Set();
    c._rows = this._rows;
    return c;
  }

  /** @param {string} id @returns {Block|undefined} tombstones included. document.rs `get` */
  get(id) {
    return this._blocks.get(id);
  }

  /** @param {string} id document.rs `is_purged` */
  isPurged(id) {
    return this._purged.has(id);
  }

  /** @returns {string[]} IDs removed for good (to persist next to the snapshot blocks). */
  purgedIds() {
    return [...this._purged];
  }

  get blockCount() {
    return this._blocks.size;
  }

  /** @param {string|null} parent @returns {string[]} */
  _mutableChildren(parent) {
    let ids = this._children.get(parent);
    if (!ids) {
      ids = [];
      this._children.set(parent, ids);
      this._owned.add(ids);
    } else if (!this._owned.has(ids)) {
      ids = ids.slice();
      this._children.set(parent, ids);
      this._owned.add(ids);
    }
    return ids;
  }

  /**
   * Sets a block's version without an op: the view's own bookkeeping of keystrokes merged
   * into one queued op (local-view.js `settle`). @param {string} id @param {number} version
   */
  setVersion(id, version) {
    const b = this._blocks.get(id);
    if (b && b.version !== version) this._put({ ...b, version });
  }

  /**
   * Inserts or replaces a block, keeping the sibling list sorted. Mirrors document.rs `put`.
   * @param {Block} block @returns {Block}
   */
  _put(block) {
    this._rows = null;
    const old = this._blocks.get(block.id);
    if (old) {
      if (old.parentId === block.parentId && old.orderKey === block.orderKey) {
        this._blocks.set(block.id, block);
        return block;
      }
      this._unlink(old);
    }
    this._blocks.set(block.id, block);
    const siblings = this._mutableChildren(block.parentId);
    let lo = 0;
    let hi = siblings.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareBlocks(/** @type {Block} */ (this._blocks.get(siblings[mid])), block) < 0) lo = mid + 1;
      else hi = mid;
    }
    siblings.splice(lo, 0, block.id);
    return block;
  }

  /** @param {Block} old document.rs `unlink` */
  _unlink(old) {
    const current = this._children.get(old.parentId);
    if (!current) return;
    const i = current.indexOf(old.id);
    if (i < 0) return;
    if (current.length === 1) {
      this._children.delete(old.parentId);
      return;
    }
    this._mutableChildren(old.parentId).splice(i, 1);
  }

  /** Removes blocks for good and remembers their IDs. Mirrors document.rs `purge`. @param {string[]} ids */
  purge(ids) {
    this._rows = null;
    for (const id of ids) {
      const old = this._blocks.get(id);
      if (old) {
        this._blocks.delete(id);
        this._unlink(old);
      }
      this._purged.add(id);
    }
  }

  /** @param {string|null} parent @returns {readonly string[]} sorted, tombstones included. document.rs `children_of` */
  childIds(parent) {
    return this._children.get(parent) ?? [];
  }

  /** @param {string|null} parentId @returns {Block[]} live children, sorted by orderKey then id */
  children(parentId) {
    /** @type {Block[]} */
    const out = [];
    for (const id of this.childIds(parentId)) {
      const b = /** @type {Block} */ (this._blocks.get(id));
      if (!b.deleted) out.push(b);
    }
    return out;
  }

  /** True when `candidate` is `root` or inside its subtree. Mirrors document.rs `is_in_subtree`. @param {string} candidate @param {string} root */
  isInSubtree(candidate, root) {
    /** @type {string|null} */
    let cur = candidate;
    let steps = 0;
    while (cur !== null) {
      if (cur === root) return true;
      steps++;
      if (steps > this._blocks.size + 1) return false; // a corrupt cycle must not hang
      cur = this._blocks.get(cur)?.parentId ?? null;
    }
    return false;
  }

  /**
   * `id` and its ancestors, nearest first; stops at a missing parent. Mirrors document.rs `ancestry`.
   * @param {string} id @returns {Block[]}
   */
  ancestry(id) {
    /** @type {Block[]} */
    const out = [];
    let b = this._blocks.get(id);
    while (b) {
      out.push(b);
      if (out.length > this._blocks.size) break; // a corrupt cycle must not hang
      b = b.parentId === null ? undefined : this._blocks.get(b.parentId);
    }
    return out;
  }

  /** Depth of `id` (0 = top level), or null if unknown. Mirrors document.rs `depth_of`. @param {string} id */
  depthOf(id) {
    const n = this.ancestry(id).length;
    return n > 0 ? n - 1 : null;
  }

  /** Levels below `id` (0 for a leaf), tombstones included. Mirrors document.rs `subtree_height`. @param {string} id */
  subtreeHeight(id) {
    let height = 0;
    /** @type {[number, string][]} */
    const stack = [[0, id]];
    let steps = 0;
    while (stack.length > 0) {
      const [depth, cur] = /** @type {[number, string]} */ (stack.pop());
      if (depth > height) height = depth;
      if (++steps > this._blocks.size + 1) break; // a corrupt cycle must not hang
      for (const k of this.childIds(cur)) stack.push([depth + 1, k]);
    }
    return height;
  }

  /** The subtree at `id`, pre-order, root first, tombstones included. Mirrors document.rs `subtree`. @param {string} id @returns {Block[]} */
  subtree(id) {
    /** @type {Block[]} */
    const out = [];
    const stack = [id];
    while (stack.length > 0) {
      const cur = /** @type {string} */ (stack.pop());
      const b = this._blocks.get(cur);
      if (!b) continue;
      out.push(b);
      const kids = this.childIds(cur);
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
    }
    return out;
  }

  /**
   * Nearest live ancestor (null = top level) and a key right after the deleted branch the
   * block came from, or null (caller appends at the end). Mirrors document.rs `live_placement`.
   * @param {string|null} parent @returns {[string|null, string|null]}
   */
  livePlacement(parent) {
    /** @type {Block|null} */
    let branch = null;
    let cur = parent;
    while (cur !== null) {
      const b = this._blocks.get(cur);
      if (!b) break;
      if (!b.deleted) return [cur, this._keyAfter(branch)];
      branch = b;
      cur = b.parentId;
    }
    if (branch !== null && branch.parentId === null) return [null, this._keyAfter(branch)];
    return [null, null];
  }

  /** Key right after `after` among its siblings, or null. Mirrors document.rs `key_after`. @param {Block|null} after @returns {string|null} */
  _keyAfter(after) {
    if (after === null) return null;
    const sibs = this.childIds(after.parentId);
    // Siblings are sorted by key, so the first greater key is found by binary search.
    let lo = 0;
    let hi = sibs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (/** @type {Block} */ (this._blocks.get(sibs[mid])).orderKey <= after.orderKey) lo = mid + 1;
      else hi = mid;
    }
    const next = lo < sibs.length ? /** @type {Block} */ (this._blocks.get(sibs[lo])).orderKey : null;
    try {
      return keyBetween(after.orderKey, next);
    } catch {
      return null;
    }
  }

  /** Mirrors document.rs `key_right_after`. @param {string} id @returns {string|null} */
  keyRightAfter(id) {
    const b = this._blocks.get(id);
    return b ? this._keyAfter(b) : null;
  }

  /** A key after every child of `parent`. Mirrors document.rs `key_at_end`. @param {string|null} parent */
  keyAtEnd(parent) {
    const ids = this.childIds(parent);
    const last = ids.length > 0 ? /** @type {Block} */ (this._blocks.get(ids[ids.length - 1])).orderKey : null;
    try {
      return keyBetween(last, null);
    } catch {
      return 'a0';
    }
  }

  /** A key before every child of `parent`. Mirrors document.rs `key_at_start`. @param {string|null} parent */
  keyAtStart(parent) {
    const ids = this.childIds(parent);
    const first = ids.length > 0 ? /** @type {Block} */ (this._blocks.get(ids[0])).orderKey : null;
    try {
      return keyBetween(null, first);
    } catch {
      return 'a0';
    }
  }

  /**
   * All blocks in document order with depth, tombstones included; blocks whose parent is
   * missing go last at depth 0, by id. Mirrors document.rs `ordered`.
   * @returns {{depth: number, block: Block}[]}
   */
  ordered() {
    /** @type {{depth: number, block: Block}[]} */
    const out = [];
    /** @type {[number, string][]} */
    const stack = [];
    const top = this.childIds(null);
    for (let i = top.length - 1; i >= 0; i--) stack.push([0, top[i]]);
    const seen = new Set();
    while (stack.length > 0) {
      const [depth, id] = /** @type {[number, string]} */ (stack.pop());
      const b = this._blocks.get(id);
      if (!b) continue;
      out.push({ depth, block: b });
      seen.add(id);
      const kids = this.childIds(id);
      for (let i = kids.length - 1; i >= 0; i--) stack.push([depth + 1, kids[i]]);
    }
    if (out.length < this._blocks.size) {
      const orphans = [...this._blocks.values()].filter((b) => !seen.has(b.id));
      orphans.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      for (const b of orphans) out.push({ depth: 0, block: b });
    }
    return out;
  }

  /**
   * Live blocks in document order with depth and hasChildren (live ones); cached until the
   * next change. A live block with no live path to the top (cannot arise from the rules) is
   * shown last at depth 0 rather than hidden, as `ordered` does for orphans.
   * @returns {Row[]}
   */
  rows() {
    if (this._rows) return this._rows;
    /** @type {Row[]} */
    const out = [];
    /** @type {[number, string][]} */
    const stack = [];
    /** @param {string|null} parent @param {number} depth @returns {boolean} */
    const pushLive = (parent, depth) => {
      const kids = this.childIds(parent);
      let any = false;
      for (let i = kids.length - 1; i >= 0; i--) {
        if (!(/** @type {Block} */ (this._blocks.get(kids[i])).deleted)) {
          stack.push([depth, kids[i]]);
          any = true;
        }
      }
      return any;
    };
    pushLive(null, 0);
    while (stack.length > 0) {
      const [depth, id] = /** @type {[number, string]} */ (stack.pop());
      const b = /** @type {Block} */ (this._blocks.get(id));
      const row = toRow(b, depth, false);
      out.push(row);
      row.hasChildren = pushLive(id, depth + 1);
    }
    let live = 0;
    for (const b of this._blocks.values()) if (!b.deleted) live++;
    if (out.length < live) {
      const seen = new Set(out.map((r) => r.id));
      const orphans = [...this._blocks.values()].filter((b) => !b.deleted && !seen.has(b.id));
      orphans.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      for (const b of orphans) out.push(toRow(b, 0, this.children(b.id).length > 0));
    }
    this._rows = out;
    return out;
  }

  /** Every block (tombstones included) in document order, without depth (for IndexedDB). @returns {Block[]} */
  toSnapshotBlocks() {
    return this.ordered().map((x) => x.block);
  }

  /** Mirrors replay.rs `apply_effect`. @param {Effect} e */
  applyEffect(e) {
    if (e.e === 'block') {
      // Back from a purge: a bullet guest's view purges what leaves it (PROTOCOL §10) and
      // sends it again when it comes back.
      this._purged.delete(e.block.id);
      this._put(normalize(e.block));
    }
    else if (e.e === 'title') {
      this.title = e.title;
      this.titleVersion = e.titleVersion;
    } else if (e.e === 'purge') this.purge(e.blockIds);
  }

  /** Replays a log entry's effects exactly; lastSeq = entry.seq. Mirrors replay.rs `apply_entry`. @param {LogEntry} entry */
  applyEntry(entry) {
    for (const e of entry.effects) this.applyEffect(e);
    this.lastSeq = entry.seq;
  }

  /**
   * The server's rules for one op. Mirrors rules.rs `apply_op`; `seq` stays null and
   * `lastSeq` is untouched (the server assigns seqs). `leaseGrants`: blocks now leased to
   * the author's client (new blocks and conflict copies), as rules.rs `Applied` reports.
   * @param {Op} op @param {OpContext} ctx @returns {Applied}
   */
  applyOp(op, ctx) {
    const s = /** @type {any} */ (op);
    switch (op.kind) {
      case 'insert': {
        const a = this._insert(ctx, op, s.blockId, s.parentId ?? null, s.orderKey, s.content);
        const first = a.effects[0];
        if (first && first.e === 'block') {
          const b = { ...first.block };
          if (s.type != null) b.type = s.type;
          b.checked = s.checked ?? false;
          b.language = s.language ?? null;
          first.block = this._put(b);
        }
        return a;
      }
      case 'set_content':
        return this._setContent(ctx, op, s.blockId, s.content, s.baseVersion);
      case 'set_props':
        return this._setProps(ctx, op, s.blockId, s.props ?? {});
      case 'move':
        return this._move(ctx, op, s.blockId, s.parentId ?? null, s.orderKey);
      case 'delete':
        return this._delete(ctx, op, s.blockId);
      case 'restore':
        return this._restore(ctx, op, s.blockId);
      case 'set_title':
        return this._setTitle(ctx, op, s.title, s.baseVersion);
      default:
        // A kind the protocol does not know (ops from disk or the wire are data, not types).
        return nothing(rejected(s.opId, s.blockId ?? '', 'invalid'));
    }
  }

  /**
   * Rule 7: a deleted parent means the nearest live ancestor; an unknown, purged or foreign
   * parent means top level at the end. Mirrors rules.rs `insert`.
   * @param {OpContext} ctx @param {Op} op @param {string} blockId @param {string|null} parentId
   * @param {string} orderKey @param {string} content @returns {Applied}
   */
  _insert(ctx, op, blockId, parentId, orderKey, content) {
    // Block IDs are unique across documents: another document's is taken like one here.
    if (isForeign(ctx, blockId) || this._blocks.has(blockId) || this._purged.has(blockId)) {
      return nothing(rejected(op.opId, blockId, 'duplicate_block'));
    }
    /** @type {string|null} */
    let parent = null;
    let key = orderKey;
    if (parentId !== null) {
      const pb = this._blocks.get(parentId);
      if (isForeign(ctx, parentId) || !pb) {
        key = this.keyAtEnd(null);
      } else if (!pb.deleted) {
        parent = parentId;
      } else {
        const [anc, k] = this.livePlacement(parentId);
        key = k ?? this.keyAtEnd(anc);
        parent = anc;
      }
    }
    [parent, key] = this._withinDepth(parent, key, maxDepthOf(ctx));
    const block = this._put(newBlock(blockId, parent, key, content, ctx.now, ctx.userId));
    return { result: applied(op.opId, blockId), effects: [effect(block)], leaseGrants: leaseFor(ctx, blockId) };
  }

  /**
   * Where an insert under `parent` lands so its depth stays below `maxDepth`: unchanged if
   * it fits, else last among the children of the deepest ancestor with room. Mirrors
   * rules.rs `within_depth`.
   * @param {string|null} parent @param {string} key @param {number} maxDepth
   * @returns {[string|null, string]}
   */
  _withinDepth(parent, key, maxDepth) {
    if (parent === null) return [parent, key];
    const chain = this.ancestry(parent);
    if (chain.length < maxDepth) return [parent, key];
    const anc = chain[chain.length - maxDepth].parentId;
    return [anc, this.keyAtEnd(anc)];
  }

  /**
   * True when moving `blockId` under `parentId` puts part of its subtree (tombstones
   * included) at depth >= maxDepth and makes it deeper than now. Mirrors rules.rs `too_deep`.
   * @param {string} blockId @param {string|null} parentId @param {number} maxDepth
   */
  _tooDeep(blockId, parentId, maxDepth) {
    const newDepth = parentId === null ? 0 : this.ancestry(parentId).length;
    if (newDepth <= (this.depthOf(blockId) ?? 0)) return false;
    return newDepth + this.subtreeHeight(blockId) >= maxDepth;
  }

  /** Brings a tombstone back where it can live. Mirrors rules.rs `revive`. @param {OpContext} ctx @param {string} id */
  _revive(ctx, id) {
    const old = /** @type {Block} */ (this._blocks.get(id));
    const parentLive = old.parentId === null || this._blocks.get(old.parentId)?.deleted === false;
    let b = { ...old };
    if (!parentLive) {
      const [anc, key] = this.livePlacement(old.parentId);
      b.orderKey = key ?? this.keyAtEnd(anc);
      b.parentId = anc;
    }
    b.deleted = false;
    b.deletedAt = null;
    delete b.deletedBy;
    b = touched(b, ctx);
    return this._put(b);
  }

  /**
   * Rule 4: the original keeps its text; the rejected text becomes a copy right after it
   * (or first at top level for the title). Mirrors rules.rs `conflict_copy`.
   * @param {OpContext} ctx @param {Op} op @param {string|null} original @param {string} text
   * @returns {[string, Block|null]}
   */
  _conflictCopy(ctx, op, original, text) {
    const copyId = conflictCopyId(this.docId, op.opId);
    if (this._blocks.has(copyId)) return [copyId, null];
    /** @type {string|null} */
    let parent = null;
    let key;
    if (original !== null) {
      const ob = /** @type {Block} */ (this._blocks.get(original));
      key = this.keyRightAfter(original) ?? this.keyAtEnd(ob.parentId);
      parent = ob.parentId;
    } else {
      key = this.keyAtStart(null);
    }
    const b = newBlock(copyId, parent, key, text, ctx.now, ctx.userId);
    b.conflictOf = original ?? TITLE_LEASE;
    b.conflictAuthor = { userId: ctx.userId, name: ctx.name };
    return [copyId, this._put(b)];
  }

  /**
   * Rule 3 (and 4). Mirrors rules.rs `set_content`.
   * @param {OpContext} ctx @param {Op} op @param {string} blockId @param {string} content
   * @param {number} baseVersion @returns {Applied}
   */
  _setContent(ctx, op, blockId, content, baseVersion) {
    // Another document's block is simply not here: told apart from no unknown block.
    let current = this._blocks.get(blockId);
    if (!current) {
      // Purged or never seen: the text becomes a new block at the end, never dropped.
      const id = rescueBlockId(this.docId, op.opId);
      if (this._blocks.has(id)) return nothing(applied(op.opId, id));
      const b = this._put(newBlock(id, null, this.keyAtEnd(null), content, ctx.now, ctx.userId));
      return { result: applied(op.opId, id), effects: [effect(b)], leaseGrants: leaseFor(ctx, id) };
    }
    /** @type {Effect[]} */
    const effects = [];
    if (current.deleted) {
      current = this._revive(ctx, blockId);
      effects.push(effect(current));
    }
    if (current.content === content) {
      return { result: applied(op.opId, blockId), effects, leaseGrants: [] };
    }
    if (ctx.heldByOthers(blockId) || current.version !== baseVersion) {
      const [copyId, copy] = this._conflictCopy(ctx, op, blockId, content);
      if (copy) effects.push(effect(copy));
      return { result: conflict(op.opId, blockId, copyId), effects, leaseGrants: leaseFor(ctx, copyId) };
    }
    const b = touched({ ...current, content, version: current.version + 1 }, ctx);
    effects.push(effect(this._put(b)));
    return { result: applied(op.opId, blockId), effects: dedupeBlockEffects(effects), leaseGrants: [] };
  }

  /**
   * A block of this document, or the rejection naming why not. Mirrors rules.rs `lookup`.
   * @param {OpContext} ctx @param {Op} op @param {string} blockId @returns {Block|Applied}
   */
  _lookup(ctx, op, blockId) {
    const b = this._blocks.get(blockId);
    if (b) return b;
    if (this._purged.has(blockId)) return nothing(rejected(op.opId, blockId, 'purged'));
    return nothing(rejected(op.opId, blockId, 'unknown_block'));
  }

  /**
   * Rule 8, property by property. Mirrors rules.rs `set_props`.
   * @param {OpContext} ctx @param {Op} op @param {string} blockId @param {BlockProps} props @returns {Applied}
   */
  _setProps(ctx, op, blockId, props) {
    const current = this._lookup(ctx, op, blockId);
    if ('result' in current) return current;
    if (current.deleted) return nothing(rejected(op.opId, blockId, 'deleted'));
    if (ctx.heldByOthers(blockId)) return nothing(rejected(op.opId, blockId, 'locked'));
    const b = { ...current };
    if (props.type != null) b.type = props.type;
    if (props.checked != null) b.checked = props.checked;
    if (props.collapsed != null) b.collapsed = props.collapsed;
    // `language: null` explicitly clears it (serde double option); absent leaves it.
    if (props.language !== undefined) b.language = props.language;
    if (props.conflictResolved != null) b.conflictResolved = props.conflictResolved;
    if (
      b.type === current.type && b.checked === current.checked && b.collapsed === current.collapsed &&
      b.language === current.language && b.conflictResolved === current.conflictResolved
    ) {
      return nothing(applied(op.opId, blockId));
    }
    const put = this._put(touched(b, ctx));
    return { result: applied(op.opId, blockId), effects: [effect(put)], leaseGrants: [] };
  }

  /**
   * Rule 5; the subtree moves with the block. Mirrors rules.rs `move_block`.
   * @param {OpContext} ctx @param {Op} op @param {string} blockId @param {string|null} parentId
   * @param {string} orderKey @returns {Applied}
   */
  _move(ctx, op, blockId, parentId, orderKey) {
    const current = this._lookup(ctx, op, blockId);
    if ('result' in current) return current;
    const reject = (/** @type {string} */ r) => nothing(rejected(op.opId, blockId, r));
    if (current.deleted) return reject('deleted');
    if (parentId !== null) {
      if (this.isInSubtree(parentId, blockId)) return reject('cycle');
      const pb = this._blocks.get(parentId);
      if (!pb || pb.deleted) return reject('parent_deleted');
    }
    if (this._tooDeep(blockId, parentId, maxDepthOf(ctx))) return reject('too_deep');
    if (ctx.heldByOthers(blockId)) return reject('locked');
    if (current.parentId === parentId && current.orderKey === orderKey) {
      return nothing(applied(op.opId, blockId));
    }
    const b = this._put(touched({ ...current, parentId, orderKey }, ctx));
    return { result: applied(op.opId, blockId), effects: [effect(b)], leaseGrants: [] };
  }

  /**
   * Rule 6: the live subtree becomes tombstones with one deletedAt and deletedBy (the opId). Mirrors rules.rs `delete`.
   * @param {OpContext} ctx @param {Op} op @param {string} blockId @returns {Applied}
   */
  _delete(ctx, op, blockId) {
    if (!isForeign(ctx, blockId) && this._purged.has(blockId)) return nothing(applied(op.opId, blockId));
    const current = this._lookup(ctx, op, blockId);
    if ('result' in current) return current;
    if (current.deleted) return nothing(applied(op.opId, blockId));
    const live = this.subtree(blockId).filter((b) => !b.deleted);
    if (live.some((b) => ctx.heldByOthers(b.id))) return nothing(rejected(op.opId, blockId, 'locked'));
    const effects = live.map((old) =>
      effect(this._put(touched({ ...old, deleted: true, deletedAt: ctx.now, deletedBy: op.opId }, ctx))),
    );
    return { result: applied(op.opId, blockId), effects, leaseGrants: [] };
  }

  /**
   * Rule 9: the block and what the same delete removed with it (same deletedBy and
   * deletedAt; deletedAt alone for tombstones without deletedBy), each only when its own
   * parent is alive again. Mirrors rules.rs `restore`.
   * @param {OpContext} ctx @param {Op} op @param {string} blockId @returns {Applied}
   */
  _restore(ctx, op, blockId) {
    const current = this._lookup(ctx, op, blockId);
    if ('result' in current) return current;
    if (!current.deleted) return nothing(applied(op.opId, blockId));
    const stamp = current.deletedAt;
    const by = current.deletedBy ?? null;
    const withIt = this.subtree(blockId)
      .slice(1)
      .filter((b) => b.deleted && b.deletedAt === stamp && (b.deletedBy ?? null) === by)
      .map((b) => b.id);
    const effects = [effect(this._revive(ctx, blockId))];
    for (const id of withIt) {
      const parentId = this._blocks.get(id)?.parentId ?? null;
      const parentAlive = parentId !== null && this._blocks.get(parentId)?.deleted === false;
      if (parentAlive) effects.push(effect(this._revive(ctx, id)));
    }
    return { result: applied(op.opId, blockId), effects, leaseGrants: [] };
  }

  /**
   * Rule 4 for the title, with titleVersion and the 'title' lease. Mirrors rules.rs `set_title`.
   * @param {OpContext} ctx @param {Op} op @param {string} title @param {number} baseVersion @returns {Applied}
   */
  _setTitle(ctx, op, title, baseVersion) {
    if (this.title === title) return nothing(applied(op.opId, null));
    if (ctx.heldByOthers(TITLE_LEASE) || this.titleVersion !== baseVersion) {
      const [copyId, copy] = this._conflictCopy(ctx, op, null, title);
      return {
        result: conflict(op.opId, TITLE_LEASE, copyId),
        effects: copy ? [effect(copy)] : [],
        leaseGrants: leaseFor(ctx, copyId),
      };
    }
    this.title = title;
    this.titleVersion += 1;
    return {
      result: applied(op.opId, null),
      effects: [{ e: 'title', title: this.title, titleVersion: this.titleVersion }],
      leaseGrants: [],
    };
  }
}

/**
 * Several effects on one block within an op collapse into the last, in the first's place.
 * Mirrors rules.rs `dedupe_block_effects`.
 * @param {Effect[]} effects @returns {Effect[]}
 */
function dedupeBlockEffects(effects) {
  /** @type {Effect[]} */
  const out = [];
  for (const e of effects) {
    if (e.e === 'block') {
      const id = e.block.id;
      const pos = out.findIndex((x) => x.e === 'block' && x.block.id === id);
      if (pos >= 0) {
        out[pos] = e;
        continue;
      }
    }
    out.push(e);
  }
  return out;
}

/** The Row of a block (as `rows()` builds it). @param {Block} b @param {number} depth @param {boolean} hasChildren @returns {Row} */
export function toRow(b, depth, hasChildren) {
  return {
    id: b.id, parentId: b.parentId, depth, content: b.content, type: b.type, checked: b.checked,
    collapsed: b.collapsed, language: b.language, conflictOf: b.conflictOf,
    conflictAuthor: b.conflictAuthor, conflictResolved: b.conflictResolved, version: b.version,
    hasChildren,
  };
}
