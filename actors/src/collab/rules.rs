//! The server rules of PROTOCOL §2.1 as one pure function: document state + lease table +
//! op + author + time → result and effects. No I/O, no clock, no actors. The caller assigns
//! `seq` to ops that return effects and persists them; everything here is deterministic.

use std::collections::HashSet;
use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::block::{Author, Block};
use super::document::DocState;
use super::lease::{LeaseTable, TITLE_LEASE};
use super::op::{Effect, Op, OpKind, OpResult, Props, RejectReason};

/// Who sends an op, from where, and when.
pub struct OpContext<'a> {
    pub client_id: &'a str,
    pub author: &'a Author,
    pub now: i64,
    /// Block IDs named by the request that belong to another document (found by storage).
    pub foreign: &'a HashSet<String>,
    /// False in private mode: no leases are handed out (PROTOCOL §5).
    pub leases_enabled: bool,
    /// Most levels a tree may have (`limits.max_depth`): every block's depth (0 = top
    /// level) stays below it. Too-deep inserts land at the deepest level allowed; too-deep
    /// moves are rejected (`too_deep`).
    pub max_depth: usize,
}

/// `limits.max_depth` unless configured otherwise.
pub const DEFAULT_MAX_DEPTH: usize = 1000;

/// What one op did. Non-empty `effects` means the state changed and the op needs a `seq`.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub result: OpResult,
    pub effects: Vec<Effect>,
    /// Blocks now leased to the author's client (new blocks, conflict copies).
    pub lease_grants: Vec<String>,
}

impl Applied {
    fn nothing(result: OpResult) -> Applied {
        Applied {
            result,
            effects: Vec::new(),
            lease_grants: Vec::new(),
        }
    }
}

/// `prefix` + the first 20 hex digits of SHA-256(docId ":" opId): IDs the server mints for
/// an op are the same on every retry, so a repeated request never makes a second block.
pub fn derived_block_id(prefix: &str, doc_id: &str, op_id: &str) -> String {
    let mut h = Sha256::new();
    h.update(doc_id.as_bytes());
    h.update(b":");
    h.update(op_id.as_bytes());
    let hex = hex::encode(h.finalize());
    format!("{prefix}{}", &hex[..20])
}

pub fn conflict_copy_id(doc_id: &str, op_id: &str) -> String {
    derived_block_id("blk_cf_", doc_id, op_id)
}

/// ID of the block that receives text sent to a purged or unknown block.
pub fn rescue_block_id(doc_id: &str, op_id: &str) -> String {
    derived_block_id("blk_rs_", doc_id, op_id)
}

pub fn apply_op(doc: &mut DocState, leases: &LeaseTable, ctx: &OpContext, op: &Op) -> Applied {
    match &op.kind {
        OpKind::Insert {
            block_id,
            parent_id,
            order_key,
            content,
            block_type,
            checked,
            language,
        } => {
            let mut applied = insert(
                doc,
                ctx,
                op,
                block_id,
                parent_id.as_deref(),
                order_key,
                content,
            );
            if let Some(Effect::Block { block }) = applied.effects.first_mut() {
                let b = Arc::make_mut(block);
                if let Some(t) = block_type {
                    b.block_type = *t;
                }
                b.checked = checked.unwrap_or(false);
                b.language = language.clone();
                doc.put(block.clone());
            }
            applied
        }
        OpKind::SetContent {
            block_id,
            content,
            base_version,
        } => set_content(doc, leases, ctx, op, block_id, content, *base_version),
        OpKind::SetProps { block_id, props } => set_props(doc, leases, ctx, op, block_id, props),
        OpKind::Move {
            block_id,
            parent_id,
            order_key,
        } => move_block(
            doc,
            leases,
            ctx,
            op,
            block_id,
            parent_id.as_deref(),
            order_key,
        ),
        OpKind::Delete { block_id } => delete(doc, leases, ctx, op, block_id),
        OpKind::Restore { block_id } => restore(doc, ctx, op, block_id),
        OpKind::SetTitle {
            title,
            base_version,
        } => set_title(doc, leases, ctx, op, title, *base_version),
    }
}

fn touch(b: &mut Block, ctx: &OpContext) {
    b.updated_at = ctx.now;
    b.updated_by = ctx.author.user_id.clone();
}

fn effect(b: Arc<Block>) -> Effect {
    Effect::Block { block: b }
}

fn lease_for(ctx: &OpContext, id: &str) -> Vec<String> {
    if ctx.leases_enabled {
        vec![id.to_string()]
    } else {
        Vec::new()
    }
}

/// Rule 7. Text is never dropped: a deleted parent means the nearest live ancestor, an
/// unknown, purged or foreign parent means top level at the end.
fn insert(
    doc: &mut DocState,
    ctx: &OpContext,
    op: &Op,
    block_id: &str,
    parent_id: Option<&str>,
    order_key: &str,
    content: &str,
) -> Applied {
    // Block IDs are unique across documents: one taken by another document is taken, and
    // answered exactly like one taken here.
    if ctx.foreign.contains(block_id) || doc.get(block_id).is_some() || doc.is_purged(block_id) {
        return Applied::nothing(OpResult::rejected(
            &op.op_id,
            Some(block_id),
            RejectReason::DuplicateBlock,
        ));
    }
    let (parent, key) = match parent_id {
        None => (None, order_key.to_string()),
        Some(p) if ctx.foreign.contains(p) => (None, doc.key_at_end(None)),
        Some(p) => match doc.get(p) {
            Some(pb) if !pb.deleted => (Some(p.to_string()), order_key.to_string()),
            Some(_) => {
                let (anc, key) = doc.live_placement(Some(p));
                let key = key.unwrap_or_else(|| doc.key_at_end(anc.as_deref()));
                (anc, key)
            }
            None => (None, doc.key_at_end(None)),
        },
    };
    let (parent, key) = within_depth(doc, parent, key, ctx.max_depth);
    let block = Block::new(
        block_id.to_string(),
        parent,
        key,
        content.to_string(),
        ctx.now,
        &ctx.author.user_id,
    );
    let block = doc.put(Arc::new(block));
    Applied {
        result: OpResult::applied(&op.op_id, Some(block_id)),
        effects: vec![effect(block)],
        lease_grants: lease_for(ctx, block_id),
    }
}

/// Where an insert under `parent` lands so the new block's depth stays below `max_depth`:
/// unchanged if it fits, otherwise last among the children of the ancestor of `parent` at
/// the deepest level that still has room (text never dropped). Last, not right after the
/// branch leading down to `parent`, so that several lines typed there keep their order.
fn within_depth(
    doc: &DocState,
    parent: Option<String>,
    key: String,
    max_depth: usize,
) -> (Option<String>, String) {
    let Some(p) = parent else {
        return (None, key);
    };
    let chain = doc.ancestry(&p); // [parent, …, top level]; the new block's depth = len
    if chain.len() < max_depth.max(1) {
        return (Some(p), key);
    }
    // The ancestor at depth max_depth - 1 is the branch; its parent the new block's parent.
    let parent = chain[chain.len() - max_depth.max(1)].parent_id.clone();
    let key = doc.key_at_end(parent.as_deref());
    (parent, key)
}

/// Brings a tombstone back to life where it can live (nearest live ancestor).
fn revive(doc: &mut DocState, ctx: &OpContext, id: &str) -> Arc<Block> {
    let old = doc.get(id).expect("revive of a known block").clone();
    let parent_live = match &old.parent_id {
        None => true,
        Some(p) => doc.get(p).is_some_and(|pb| !pb.deleted),
    };
    let mut b = (*old).clone();
    if !parent_live {
        let (anc, key) = doc.live_placement(old.parent_id.as_deref());
        b.order_key = key.unwrap_or_else(|| doc.key_at_end(anc.as_deref()));
        b.parent_id = anc;
    }
    b.deleted = false;
    b.deleted_at = None;
    b.deleted_by = None;
    touch(&mut b, ctx);
    doc.put(Arc::new(b))
}

/// Rule 4: the block keeps its text; the rejected text becomes a copy right after it.
fn conflict_copy(
    doc: &mut DocState,
    ctx: &OpContext,
    op: &Op,
    original: Option<&str>,
    text: &str,
) -> (String, Option<Arc<Block>>) {
    let copy_id = conflict_copy_id(&doc.doc_id, &op.op_id);
    if doc.get(&copy_id).is_some() {
        return (copy_id, None);
    }
    let (parent, key) = match original {
        Some(orig) => {
            let ob = doc.get(orig).expect("conflict on a known block").clone();
            let key = doc
                .key_right_after(orig)
                .unwrap_or_else(|| doc.key_at_end(ob.parent_id.as_deref()));
            (ob.parent_id.clone(), key)
        }
        None => (None, doc.key_at_start(None)),
    };
    let mut b = Block::new(
        copy_id.clone(),
        parent,
        key,
        text.to_string(),
        ctx.now,
        &ctx.author.user_id,
    );
    b.conflict_of = Some(original.unwrap_or(TITLE_LEASE).to_string());
    b.conflict_author = Some(ctx.author.clone());
    let b = doc.put(Arc::new(b));
    (copy_id, Some(b))
}

/// Rule 3 (and 4 through `conflict_copy`).
fn set_content(
    doc: &mut DocState,
    leases: &LeaseTable,
    ctx: &OpContext,
    op: &Op,
    block_id: &str,
    content: &str,
    base_version: i64,
) -> Applied {
    // A block of another document is never touched, and is not told apart from a block
    // that does not exist: it is simply not in `doc`.
    let Some(current) = doc.get(block_id).cloned() else {
        // Purged, never seen (e.g. its insert was lost) or another document's: the text
        // becomes a new block at the end of the document rather than being dropped.
        let id = rescue_block_id(&doc.doc_id, &op.op_id);
        if doc.get(&id).is_some() {
            return Applied::nothing(OpResult::applied(&op.op_id, Some(&id)));
        }
        let key = doc.key_at_end(None);
        let b = doc.put(Arc::new(Block::new(
            id.clone(),
            None,
            key,
            content.to_string(),
            ctx.now,
            &ctx.author.user_id,
        )));
        return Applied {
            result: OpResult::applied(&op.op_id, Some(&id)),
            effects: vec![effect(b)],
            lease_grants: lease_for(ctx, &id),
        };
    };
    let mut effects = Vec::new();
    let current = if current.deleted {
        let revived = revive(doc, ctx, block_id);
        effects.push(effect(revived.clone()));
        revived
    } else {
        current
    };
    if current.content == content {
        return Applied {
            result: OpResult::applied(&op.op_id, Some(block_id)),
            effects,
            lease_grants: Vec::new(),
        };
    }
    let locked = leases
        .held_by_other(block_id, ctx.client_id, &ctx.author.user_id, ctx.now)
        .is_some();
    if locked || current.version != base_version {
        let (copy_id, copy) = conflict_copy(doc, ctx, op, Some(block_id), content);
        effects.extend(copy.map(effect));
        return Applied {
            result: OpResult::conflict(&op.op_id, block_id, &copy_id),
            effects,
            lease_grants: lease_for(ctx, &copy_id),
        };
    }
    let mut b = (*current).clone();
    b.content = content.to_string();
    b.version += 1;
    touch(&mut b, ctx);
    effects.push(effect(doc.put(Arc::new(b))));
    Applied {
        result: OpResult::applied(&op.op_id, Some(block_id)),
        effects: dedupe_block_effects(effects),
        lease_grants: Vec::new(),
    }
}

/// Several effects on the same block within one op collapse into the last one, since effects
/// carry whole resulting blocks.
fn dedupe_block_effects(effects: Vec<Effect>) -> Vec<Effect> {
    let mut out: Vec<Effect> = Vec::with_capacity(effects.len());
    for e in effects {
        if let Effect::Block { block } = &e {
            if let Some(pos) = out
                .iter()
                .position(|x| matches!(x, Effect::Block { block: o } if o.id == block.id))
            {
                out[pos] = e;
                continue;
            }
        }
        out.push(e);
    }
    out
}

/// Rule 8.
fn set_props(
    doc: &mut DocState,
    leases: &LeaseTable,
    ctx: &OpContext,
    op: &Op,
    block_id: &str,
    props: &Props,
) -> Applied {
    let current = match lookup(doc, op, block_id) {
        Ok(b) => b,
        Err(rejected) => return *rejected,
    };
    if current.deleted {
        return Applied::nothing(OpResult::rejected(
            &op.op_id,
            Some(block_id),
            RejectReason::Deleted,
        ));
    }
    if leases
        .held_by_other(block_id, ctx.client_id, &ctx.author.user_id, ctx.now)
        .is_some()
    {
        return Applied::nothing(OpResult::rejected(
            &op.op_id,
            Some(block_id),
            RejectReason::Locked,
        ));
    }
    let mut b = (*current).clone();
    if let Some(t) = props.block_type {
        b.block_type = t;
    }
    if let Some(c) = props.checked {
        b.checked = c;
    }
    if let Some(c) = props.collapsed {
        b.collapsed = c;
    }
    if let Some(l) = &props.language {
        b.language = l.clone();
    }
    if let Some(r) = props.conflict_resolved {
        b.conflict_resolved = r;
    }
    if b == *current {
        return Applied::nothing(OpResult::applied(&op.op_id, Some(block_id)));
    }
    touch(&mut b, ctx);
    let b = doc.put(Arc::new(b));
    Applied {
        result: OpResult::applied(&op.op_id, Some(block_id)),
        effects: vec![effect(b)],
        lease_grants: Vec::new(),
    }
}

/// A block of this document, or the rejection that names why not.
fn lookup(doc: &DocState, op: &Op, block_id: &str) -> Result<Arc<Block>, Box<Applied>> {
    // Another document's block is not in `doc`: `unknown_block`, as for one that never was,
    // so an answer never tells whether an ID exists elsewhere.
    match doc.get(block_id) {
        Some(b) => Ok(b.clone()),
        None if doc.is_purged(block_id) => Err(Box::new(Applied::nothing(OpResult::rejected(
            &op.op_id,
            Some(block_id),
            RejectReason::Purged,
        )))),
        None => Err(Box::new(Applied::nothing(OpResult::rejected(
            &op.op_id,
            Some(block_id),
            RejectReason::UnknownBlock,
        )))),
    }
}

/// Rule 5.
fn move_block(
    doc: &mut DocState,
    leases: &LeaseTable,
    ctx: &OpContext,
    op: &Op,
    block_id: &str,
    parent_id: Option<&str>,
    order_key: &str,
) -> Applied {
    let current = match lookup(doc, op, block_id) {
        Ok(b) => b,
        Err(rejected) => return *rejected,
    };
    let reject = |r| Applied::nothing(OpResult::rejected(&op.op_id, Some(block_id), r));
    if current.deleted {
        return reject(RejectReason::Deleted);
    }
    if let Some(p) = parent_id {
        if doc.is_in_subtree(p, block_id) {
            return reject(RejectReason::Cycle);
        }
        if doc.get(p).is_none_or(|pb| pb.deleted) {
            return reject(RejectReason::ParentDeleted);
        }
    }
    if too_deep(doc, block_id, parent_id, ctx.max_depth) {
        return reject(RejectReason::TooDeep);
    }
    if leases
        .held_by_other(block_id, ctx.client_id, &ctx.author.user_id, ctx.now)
        .is_some()
    {
        return reject(RejectReason::Locked);
    }
    if current.parent_id.as_deref() == parent_id && current.order_key == order_key {
        return Applied::nothing(OpResult::applied(&op.op_id, Some(block_id)));
    }
    let mut b = (*current).clone();
    b.parent_id = parent_id.map(str::to_string);
    b.order_key = order_key.to_string();
    touch(&mut b, ctx);
    let b = doc.put(Arc::new(b));
    Applied {
        result: OpResult::applied(&op.op_id, Some(block_id)),
        effects: vec![effect(b)],
        lease_grants: Vec::new(),
    }
}

/// True when moving `block_id` under `parent_id` would put a block of its subtree
/// (tombstones included, so a later restore cannot break the limit) at depth `max_depth` or
/// deeper, and the move makes the subtree deeper than it is now (reordering or outdenting a
/// tree that exceeds a lowered limit stays possible).
fn too_deep(doc: &DocState, block_id: &str, parent_id: Option<&str>, max_depth: usize) -> bool {
    let new_depth = parent_id.map_or(0, |p| doc.ancestry(p).len());
    if new_depth <= doc.depth_of(block_id).unwrap_or(0) {
        return false;
    }
    new_depth + doc.subtree_height(block_id) >= max_depth.max(1)
}

/// Rule 6.
fn delete(
    doc: &mut DocState,
    leases: &LeaseTable,
    ctx: &OpContext,
    op: &Op,
    block_id: &str,
) -> Applied {
    if !ctx.foreign.contains(block_id) && doc.is_purged(block_id) {
        return Applied::nothing(OpResult::applied(&op.op_id, Some(block_id)));
    }
    let current = match lookup(doc, op, block_id) {
        Ok(b) => b,
        Err(rejected) => return *rejected,
    };
    if current.deleted {
        return Applied::nothing(OpResult::applied(&op.op_id, Some(block_id)));
    }
    let live: Vec<Arc<Block>> = doc
        .subtree(block_id)
        .into_iter()
        .filter(|b| !b.deleted)
        .collect();
    if live.iter().any(|b| {
        leases
            .held_by_other(&b.id, ctx.client_id, &ctx.author.user_id, ctx.now)
            .is_some()
    }) {
        return Applied::nothing(OpResult::rejected(
            &op.op_id,
            Some(block_id),
            RejectReason::Locked,
        ));
    }
    let effects = live
        .into_iter()
        .map(|old| {
            let mut b = (*old).clone();
            b.deleted = true;
            b.deleted_at = Some(ctx.now);
            b.deleted_by = Some(op.op_id.clone());
            touch(&mut b, ctx);
            effect(doc.put(Arc::new(b)))
        })
        .collect();
    Applied {
        result: OpResult::applied(&op.op_id, Some(block_id)),
        effects,
        lease_grants: Vec::new(),
    }
}

/// Rule 9: the block and what the same delete removed with it: same `deletedBy` (the delete's
/// opId) and same `deletedAt` — for tombstones older than `deletedBy`, `deletedAt` alone.
fn restore(doc: &mut DocState, ctx: &OpContext, op: &Op, block_id: &str) -> Applied {
    let current = match lookup(doc, op, block_id) {
        Ok(b) => b,
        Err(rejected) => return *rejected,
    };
    if !current.deleted {
        return Applied::nothing(OpResult::applied(&op.op_id, Some(block_id)));
    }
    let same_delete = |b: &Block| {
        b.deleted && b.deleted_at == current.deleted_at && b.deleted_by == current.deleted_by
    };
    let with_it: Vec<String> = doc
        .subtree(block_id)
        .into_iter()
        .skip(1)
        .filter(|b| same_delete(b))
        .map(|b| b.id.clone())
        .collect();
    let mut effects = vec![effect(revive(doc, ctx, block_id))];
    for id in with_it {
        // Only descendants whose own parent is alive again come back (a child deleted
        // earlier, on its own, keeps its grandchildren gone with it).
        let parent_alive = doc
            .get(&id)
            .and_then(|b| b.parent_id.clone())
            .and_then(|p| doc.get(&p).map(|pb| !pb.deleted))
            .unwrap_or(false);
        if parent_alive {
            effects.push(effect(revive(doc, ctx, &id)));
        }
    }
    Applied {
        result: OpResult::applied(&op.op_id, Some(block_id)),
        effects,
        lease_grants: Vec::new(),
    }
}

/// Rule 4 for the title, with `titleVersion` and the `"title"` lease.
fn set_title(
    doc: &mut DocState,
    leases: &LeaseTable,
    ctx: &OpContext,
    op: &Op,
    title: &str,
    base_version: i64,
) -> Applied {
    if doc.title == title {
        return Applied::nothing(OpResult::applied(&op.op_id, None));
    }
    let locked = leases
        .held_by_other(TITLE_LEASE, ctx.client_id, &ctx.author.user_id, ctx.now)
        .is_some();
    if locked || doc.title_version != base_version {
        let (copy_id, copy) = conflict_copy(doc, ctx, op, None, title);
        return Applied {
            result: OpResult::conflict(&op.op_id, TITLE_LEASE, &copy_id),
            effects: copy.into_iter().map(effect).collect(),
            lease_grants: lease_for(ctx, &copy_id),
        };
    }
    doc.title = title.to_string();
    doc.title_version += 1;
    Applied {
        result: OpResult::applied(&op.op_id, None),
        effects: vec![Effect::Title {
            title: doc.title.clone(),
            title_version: doc.title_version,
        }],
        lease_grants: Vec::new(),
    }
}
