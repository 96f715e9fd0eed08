//! Restoring a version (PROTOCOL §8) as ordinary ops: given the document as it is and the
//! state a version holds, the ops that bring the document back to that state. They are
//! applied by the document's actor through the same rules as anyone's ops, so a bullet
//! leased by someone else gets a conflict copy instead of being overwritten, and a move that
//! would break the tree is rejected.
//!
//! The ops come in phases, each computed on a copy of the state the previous phases left
//! (simulated with the real rules, no leases): deleted bullets are restored, bullets gone for
//! good are inserted again under new IDs, every bullet moved back to its parent and place
//! (parents first, so a tree turned upside down is rebuilt without cycles), texts and
//! properties set, and — for a whole-document restore — every bullet the version did not have
//! deleted, topmost first. Restoring chosen bullets does the first four for those only.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::block::{Author, Block};
use super::document::DocState;
use super::lease::LeaseTable;
use super::op::{Op, OpKind, Props};
use super::rules::{apply_op, OpContext, DEFAULT_MAX_DEPTH};

/// What to restore and how to name what it makes.
pub struct RestoreInput<'a> {
    pub title: &'a str,
    /// The version's live bullets.
    pub blocks: &'a [Arc<Block>],
    /// Only these bullets (and nothing is deleted); `None`: the whole document.
    pub only: Option<&'a HashSet<String>>,
    /// Op IDs are `{prefix}:{n}`.
    pub op_prefix: &'a str,
}

/// The ops that restore `input` onto `current`. `new_id` names a bullet that must come back
/// under a new ID (it was purged), given its old one.
pub fn plan(
    current: &DocState,
    input: &RestoreInput,
    new_id: &mut dyn FnMut(&str) -> String,
) -> Vec<Op> {
    let mut sim = current.clone();
    let mut ops: Vec<Op> = Vec::new();
    let wanted = |id: &str| input.only.is_none_or(|o| o.contains(id));
    let order = parents_first(input.blocks);
    let in_version: HashMap<&str, &Arc<Block>> =
        input.blocks.iter().map(|b| (b.id.as_str(), b)).collect();

    let emit = |sim: &mut DocState, ops: &mut Vec<Op>, kind: OpKind| {
        let op = Op {
            op_id: format!("{}:{}", input.op_prefix, ops.len()),
            kind,
        };
        simulate(sim, &op);
        ops.push(op);
    };

    // 1. Deleted bullets come back (with what the same delete removed; extras go in 5).
    for b in &order {
        if !wanted(&b.id) {
            continue;
        }
        if sim.get(&b.id).is_some_and(|c| c.deleted) {
            emit(
                &mut sim,
                &mut ops,
                OpKind::Restore {
                    block_id: b.id.clone(),
                },
            );
        }
    }

    // 2. Bullets the document no longer has at all come back under new IDs.
    let mut renamed: HashMap<String, String> = HashMap::new();
    for b in &order {
        if !wanted(&b.id) || sim.get(&b.id).is_some() {
            continue;
        }
        let id = new_id(&b.id);
        renamed.insert(b.id.clone(), id.clone());
        let parent = place(&sim, &renamed, &in_version, b);
        emit(
            &mut sim,
            &mut ops,
            OpKind::Insert {
                block_id: id,
                parent_id: parent,
                order_key: b.order_key.clone(),
                content: b.content.clone(),
                block_type: Some(b.block_type),
                checked: Some(b.checked),
                language: b.language.clone(),
            },
        );
    }
    let now_id = |id: &str| renamed.get(id).cloned().unwrap_or_else(|| id.to_string());

    // 3. Every bullet back to its parent and place, parents first.
    for b in &order {
        if !wanted(&b.id) || renamed.contains_key(&b.id) {
            continue;
        }
        let Some(cur) = sim.get(&b.id).cloned() else {
            continue;
        };
        let parent = place(&sim, &renamed, &in_version, b);
        if cur.deleted || (cur.parent_id == parent && cur.order_key == b.order_key) {
            continue;
        }
        emit(
            &mut sim,
            &mut ops,
            OpKind::Move {
                block_id: b.id.clone(),
                parent_id: parent,
                order_key: b.order_key.clone(),
            },
        );
    }

    // 4. Texts and properties.
    for b in &order {
        if !wanted(&b.id) {
            continue;
        }
        let id = now_id(&b.id);
        let Some(cur) = sim.get(&id).cloned() else {
            continue;
        };
        if cur.deleted {
            continue;
        }
        if cur.content != b.content {
            emit(
                &mut sim,
                &mut ops,
                OpKind::SetContent {
                    block_id: id.clone(),
                    content: b.content.clone(),
                    base_version: cur.version,
                },
            );
        }
        let props = Props {
            block_type: (cur.block_type != b.block_type).then_some(b.block_type),
            checked: (cur.checked != b.checked).then_some(b.checked),
            collapsed: (cur.collapsed != b.collapsed).then_some(b.collapsed),
            language: (cur.language != b.language).then(|| b.language.clone()),
            conflict_resolved: None,
        };
        if props != Props::default() {
            emit(
                &mut sim,
                &mut ops,
                OpKind::SetProps {
                    block_id: id,
                    props,
                },
            );
        }
    }

    if input.only.is_some() {
        return ops;
    }

    // 5. What the version did not have goes, topmost first (a delete takes its subtree).
    let keep: HashSet<String> = input.blocks.iter().map(|b| now_id(&b.id)).collect();
    let mut extra: Vec<String> = sim
        .ordered()
        .into_iter()
        .filter(|(_, b)| !b.deleted && !keep.contains(&b.id))
        .map(|(_, b)| b.id.clone())
        .collect();
    extra.retain(|id| {
        sim.get(id)
            .and_then(|b| b.parent_id.clone())
            .is_none_or(|p| keep.contains(&p))
    });
    for id in extra {
        emit(&mut sim, &mut ops, OpKind::Delete { block_id: id });
    }

    // 6. The title.
    if sim.title != input.title {
        let base = sim.title_version;
        emit(
            &mut sim,
            &mut ops,
            OpKind::SetTitle {
                title: input.title.to_string(),
                base_version: base,
            },
        );
    }
    ops
}

/// The parent a restored bullet goes under: its parent in the version (under its new ID if
/// it came back as a new bullet) when that is alive now, else the nearest ancestor in the
/// version that is, else the top level.
fn place(
    sim: &DocState,
    renamed: &HashMap<String, String>,
    in_version: &HashMap<&str, &Arc<Block>>,
    b: &Block,
) -> Option<String> {
    let mut parent = b.parent_id.clone();
    let mut hops = 0;
    while let Some(p) = parent {
        let id = renamed.get(&p).cloned().unwrap_or_else(|| p.clone());
        if sim.get(&id).is_some_and(|x| !x.deleted) {
            return Some(id);
        }
        hops += 1;
        if hops > DEFAULT_MAX_DEPTH {
            return None;
        }
        parent = in_version.get(p.as_str()).and_then(|x| x.parent_id.clone());
    }
    None
}

/// The version's bullets with every parent before its children (siblings by order key).
fn parents_first(blocks: &[Arc<Block>]) -> Vec<Arc<Block>> {
    let ids: HashSet<&str> = blocks.iter().map(|b| b.id.as_str()).collect();
    let mut children: HashMap<Option<&str>, Vec<&Arc<Block>>> = HashMap::new();
    for b in blocks {
        // A parent missing from the version makes the bullet a root of this walk.
        let p = b.parent_id.as_deref().filter(|p| ids.contains(p));
        children.entry(p).or_default().push(b);
    }
    for list in children.values_mut() {
        list.sort_by(|a, b| a.order_key.cmp(&b.order_key).then(a.id.cmp(&b.id)));
    }
    let mut out = Vec::with_capacity(blocks.len());
    let mut stack: Vec<&Arc<Block>> = children.get(&None).cloned().unwrap_or_default();
    stack.reverse();
    let mut seen: HashSet<&str> = HashSet::new();
    while let Some(b) = stack.pop() {
        if !seen.insert(b.id.as_str()) {
            continue;
        }
        out.push(b.clone());
        if let Some(kids) = children.get(&Some(b.id.as_str())) {
            stack.extend(kids.iter().rev());
        }
    }
    out
}

/// Applies an op to the copy the plan is computed on, as the rules would with no leases.
fn simulate(sim: &mut DocState, op: &Op) {
    let author = Author {
        user_id: String::new(),
        name: String::new(),
    };
    let foreign = HashSet::new();
    let ctx = OpContext {
        client_id: "",
        author: &author,
        now: 0,
        foreign: &foreign,
        leases_enabled: false,
        max_depth: DEFAULT_MAX_DEPTH,
    };
    let leases = LeaseTable::new(0);
    let applied = apply_op(sim, &leases, &ctx, op);
    if !applied.effects.is_empty() {
        sim.head_seq += 1;
    }
}

#[cfg(test)]
#[path = "restore_plan_tests.rs"]
mod tests;
