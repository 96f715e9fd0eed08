//! `limits.max_depth` and deep trees: the rules' walks (document order, depth, subtree,
//! delete, restore, cycle check, placement) are iterative, so a 100,000-level chain built
//! directly in a `DocState` (as an older server or a raised limit could leave it) neither
//! overflows the stack nor takes long; the limit holds for inserts and moves.

use std::collections::HashSet;
use std::sync::Arc;

use super::block::{Author, Block};
use super::document::DocState;
use super::lease::LeaseTable;
use super::op::{Effect, Op, OpKind, OpStatus, RejectReason};
use super::replay::apply_effect;
use super::rules::{apply_op, Applied, OpContext, DEFAULT_MAX_DEPTH};

const DOC: &str = "doc_depth";
const NOW: i64 = 1_000_000;

fn id(i: usize) -> String {
    format!("blk_{i:06}")
}

/// blk_000000 → blk_000001 → … → blk_{n-1}, plus a top-level `blk_side` after it.
fn chain(n: usize) -> DocState {
    let mut doc = DocState::new(DOC, "Deep");
    for i in 0..n {
        let parent = i.checked_sub(1).map(id);
        doc.put(Arc::new(Block::new(
            id(i),
            parent,
            "a0".into(),
            format!("level {i}"),
            1,
            "usr_seed",
        )));
    }
    doc.put(Arc::new(Block::new(
        "blk_side".into(),
        None,
        "a1".into(),
        "side".into(),
        1,
        "usr_seed",
    )));
    doc
}

fn apply(doc: &mut DocState, op_id: &str, kind: OpKind, max_depth: usize) -> Applied {
    let author = Author {
        user_id: "usr_me".into(),
        name: "Me".into(),
    };
    let foreign = HashSet::new();
    let ctx = OpContext {
        client_id: "cl_me",
        author: &author,
        now: NOW,
        foreign: &foreign,
        leases_enabled: true,
        max_depth,
    };
    let op = Op {
        op_id: op_id.into(),
        kind,
    };
    apply_op(doc, &LeaseTable::new(20_000), &ctx, &op)
}

fn insert(block_id: &str, parent: &str) -> OpKind {
    OpKind::Insert {
        block_id: block_id.into(),
        parent_id: Some(parent.into()),
        order_key: "a0".into(),
        content: format!("text of {block_id}"),
        block_type: None,
        checked: None,
        language: None,
    }
}

fn mv(block_id: &str, parent: Option<&str>, key: &str) -> OpKind {
    OpKind::Move {
        block_id: block_id.into(),
        parent_id: parent.map(Into::into),
        order_key: key.into(),
    }
}

#[test]
fn a_100_000_level_chain_is_walked_without_recursion() {
    const N: usize = 100_000;
    let mut doc = chain(N);
    let last = id(N - 1);

    let ordered = doc.ordered();
    assert_eq!(ordered.len(), N + 1);
    assert_eq!(ordered[N - 1].0 as usize, N - 1);
    assert_eq!(ordered[N].1.id, "blk_side");
    assert_eq!(doc.depth_of(&last), Some(N - 1));
    assert_eq!(doc.subtree_height(&id(0)), N - 1);
    assert_eq!(doc.subtree(&id(0)).len(), N);
    assert!(doc.is_in_subtree(&last, &id(0)));
    assert!(!doc.is_in_subtree("blk_side", &id(0)));

    // Cycle check over the whole chain.
    let a = apply(&mut doc, "op_cycle", mv(&id(0), Some(&last), "a0"), N + 10);
    assert_eq!(a.result.reason, Some(RejectReason::Cycle));
    // Too deep under the default limit: the whole chain may not go one level down.
    let a = apply(
        &mut doc,
        "op_deeper",
        mv(&id(0), Some("blk_side"), "a0"),
        DEFAULT_MAX_DEPTH,
    );
    assert_eq!(a.result.reason, Some(RejectReason::TooDeep));
    // Outdenting part of an over-deep chain is allowed even though it is still too deep.
    let a = apply(
        &mut doc,
        "op_out",
        mv(&id(5), None, "a2"),
        DEFAULT_MAX_DEPTH,
    );
    assert_eq!(a.result.status, OpStatus::Applied);
    let a = apply(&mut doc, "op_back", mv(&id(5), Some(&id(4)), "a0"), N + 10);
    assert_eq!(a.result.status, OpStatus::Applied);

    // An insert below the bottom lands last at the deepest allowed level.
    let a = apply(
        &mut doc,
        "op_ins",
        insert("blk_new", &last),
        DEFAULT_MAX_DEPTH,
    );
    assert_eq!(a.result.status, OpStatus::Applied);
    let new = doc.get("blk_new").unwrap().clone();
    assert_eq!(new.parent_id, Some(id(DEFAULT_MAX_DEPTH - 2)));
    assert_eq!(doc.depth_of("blk_new"), Some(DEFAULT_MAX_DEPTH - 1));
    assert!(
        new.order_key.as_str() > "a0",
        "after the branch it came from"
    );
    assert_eq!(doc.children_of(Some(&id(DEFAULT_MAX_DEPTH - 2))).len(), 2);
    assert_eq!(new.content, "text of blk_new");

    // Delete the whole chain, restore it: one effect per block each way.
    let before = doc.clone();
    let a = apply(
        &mut doc,
        "op_del",
        OpKind::Delete { block_id: id(0) },
        DEFAULT_MAX_DEPTH,
    );
    assert_eq!(a.effects.len(), N + 1);
    assert!(doc.get(&last).unwrap().deleted);
    let mut replayed = before;
    for e in &a.effects {
        apply_effect(&mut replayed, e);
    }
    assert!(replayed.get(&last).unwrap().deleted);
    let a = apply(
        &mut doc,
        "op_res",
        OpKind::Restore { block_id: id(0) },
        DEFAULT_MAX_DEPTH,
    );
    assert_eq!(a.effects.len(), N + 1);
    assert!(doc.blocks().all(|b| !b.deleted));
    assert!(matches!(&a.effects[0], Effect::Block { block } if block.id == id(0)));

    // Typing into the deleted bottom block revives it under its nearest live ancestor.
    apply(
        &mut doc,
        "op_del2",
        OpKind::Delete { block_id: id(1) },
        DEFAULT_MAX_DEPTH,
    );
    let a = apply(
        &mut doc,
        "op_type",
        OpKind::SetContent {
            block_id: last.clone(),
            content: "still here".into(),
            base_version: 1,
        },
        DEFAULT_MAX_DEPTH,
    );
    assert_eq!(a.result.status, OpStatus::Applied);
    assert_eq!(doc.depth_of(&last), Some(1));
}

#[test]
fn inserts_never_go_below_the_limit_and_keep_their_text() {
    let mut doc = chain(3);
    // max_depth 3: depths 0..=2 allowed; blk_000002 is at depth 2.
    for i in 0..5 {
        let a = apply(
            &mut doc,
            &format!("op_{i}"),
            insert(&format!("blk_n{i}"), &id(2)),
            3,
        );
        assert_eq!(a.result.status, OpStatus::Applied);
        assert_eq!(doc.depth_of(&format!("blk_n{i}")), Some(2));
    }
    // Appended at the deepest level allowed, in the order they came.
    let kids: Vec<&String> = doc.children_of(Some(&id(1))).iter().collect();
    assert_eq!(
        kids,
        [
            "blk_000002",
            "blk_n0",
            "blk_n1",
            "blk_n2",
            "blk_n3",
            "blk_n4"
        ]
    );
    // A chain of inserts, each under the previous one, flattens at the last level.
    let mut parent = id(2);
    for i in 0..4 {
        let bid = format!("blk_c{i}");
        apply(&mut doc, &format!("op_c{i}"), insert(&bid, &parent), 3);
        assert!(doc.depth_of(&bid).unwrap() < 3);
        parent = bid;
    }
    assert!(doc.ordered().iter().all(|(d, _)| *d < 3));
    // max_depth 1: top level only, right after the top-level branch.
    let a = apply(&mut doc, "op_flat", insert("blk_flat", &id(2)), 1);
    assert_eq!(a.result.status, OpStatus::Applied);
    let flat = doc.get("blk_flat").unwrap();
    assert_eq!(flat.parent_id, None);
    assert!(flat.order_key.as_str() > "a1", "last at top level");
}
