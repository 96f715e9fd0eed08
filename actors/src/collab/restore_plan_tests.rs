//! The restore plan brings any document back to any earlier state: random edits (inserts,
//! moves, deletes, restores, text, purges) after a version, then the plan applied with the
//! real rules must give exactly the version's live bullets — under new IDs for purged ones.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use proptest::prelude::*;

use super::*;
use crate::collab::block::BlockType;
use crate::collab::op::OpStatus;

fn author() -> Author {
    Author {
        user_id: "usr_a".into(),
        name: "Ann".into(),
    }
}

fn apply(doc: &mut DocState, op: &Op) -> OpStatus {
    let a = author();
    let foreign = HashSet::new();
    let ctx = OpContext {
        client_id: "cl_a",
        author: &a,
        now: 1,
        foreign: &foreign,
        leases_enabled: false,
        max_depth: DEFAULT_MAX_DEPTH,
    };
    let applied = apply_op(doc, &LeaseTable::new(20_000), &ctx, op);
    if !applied.effects.is_empty() {
        doc.head_seq += 1;
    }
    applied.result.status
}

fn live(doc: &DocState) -> Vec<Arc<Block>> {
    doc.blocks().filter(|b| !b.deleted).cloned().collect()
}

/// What a person sees of a bullet: where it is and what it says.
type Seen = (
    Option<String>,
    String,
    String,
    BlockType,
    bool,
    bool,
    Option<String>,
);

fn seen(b: &Block, rename: &dyn Fn(&str) -> String) -> (String, Seen) {
    (
        rename(&b.id),
        (
            b.parent_id.as_deref().map(rename),
            b.order_key.clone(),
            b.content.clone(),
            b.block_type,
            b.checked,
            b.collapsed,
            b.language.clone(),
        ),
    )
}

/// Plans a restore of `version` onto `doc`, applies it and checks the result is the version.
fn restore_and_check(doc: &mut DocState, title: &str, version: &[Arc<Block>]) {
    let mut renamed: HashMap<String, String> = HashMap::new();
    let input = RestoreInput {
        title,
        blocks: version,
        only: None,
        op_prefix: "rs1",
    };
    let ops = plan(doc, &input, &mut |old| {
        let id = format!("blk_new_{old}");
        renamed.insert(old.to_string(), id.clone());
        id
    });
    for op in &ops {
        let status = apply(doc, op);
        assert_eq!(status, OpStatus::Applied, "{op:?}");
    }
    let rename = |id: &str| renamed.get(id).cloned().unwrap_or_else(|| id.to_string());
    let want: HashMap<String, Seen> = version.iter().map(|b| seen(b, &rename)).collect();
    let got: HashMap<String, Seen> = live(doc)
        .iter()
        .map(|b| seen(b, &|i| i.to_string()))
        .collect();
    assert_eq!(got, want);
    assert_eq!(doc.title, title);
}

#[derive(Debug, Clone)]
enum Step {
    Insert(u8, Option<u8>, u8, u8),
    Text(u8, u8),
    Move(u8, Option<u8>, u8),
    Delete(u8),
    Restore(u8),
    Purge(u8),
    Checked(u8),
    Title(u8),
}

fn step() -> impl Strategy<Value = Step> {
    let id = 0u8..8;
    prop_oneof![
        3 => (id.clone(), prop::option::of(0u8..8), 0u8..4, 0u8..5).prop_map(|(a, p, k, t)| Step::Insert(a, p, k, t)),
        2 => (id.clone(), 0u8..5).prop_map(|(a, t)| Step::Text(a, t)),
        2 => (id.clone(), prop::option::of(0u8..8), 0u8..4).prop_map(|(a, p, k)| Step::Move(a, p, k)),
        1 => id.clone().prop_map(Step::Delete),
        1 => id.clone().prop_map(Step::Restore),
        1 => id.clone().prop_map(Step::Purge),
        1 => id.clone().prop_map(Step::Checked),
        1 => (0u8..3).prop_map(Step::Title),
    ]
}

const KEYS: [&str; 4] = ["a0", "a1", "a2", "a3"];

fn run(doc: &mut DocState, steps: &[Step], salt: &str) {
    let bid = |n: u8| format!("blk_{n}");
    for (i, s) in steps.iter().enumerate() {
        let op_id = format!("{salt}{i}");
        let kind = match s {
            Step::Insert(a, p, k, t) => OpKind::Insert {
                block_id: bid(*a),
                parent_id: p.map(bid),
                order_key: KEYS[*k as usize].into(),
                content: format!("text {t}"),
                block_type: None,
                checked: None,
                language: None,
            },
            Step::Text(a, t) => OpKind::SetContent {
                block_id: bid(*a),
                content: format!("edit {t}"),
                base_version: doc.get(&bid(*a)).map_or(1, |b| b.version),
            },
            Step::Move(a, p, k) => OpKind::Move {
                block_id: bid(*a),
                parent_id: p.map(bid),
                order_key: KEYS[*k as usize].into(),
            },
            Step::Delete(a) => OpKind::Delete { block_id: bid(*a) },
            Step::Restore(a) => OpKind::Restore { block_id: bid(*a) },
            Step::Purge(a) => {
                // Compaction purges tombstones only.
                if doc.get(&bid(*a)).is_some_and(|b| b.deleted) {
                    doc.purge(&[bid(*a)]);
                }
                continue;
            }
            Step::Checked(a) => OpKind::SetProps {
                block_id: bid(*a),
                props: Props {
                    checked: Some(!doc.get(&bid(*a)).is_some_and(|b| b.checked)),
                    ..Props::default()
                },
            },
            Step::Title(t) => OpKind::SetTitle {
                title: format!("title {t}"),
                base_version: doc.title_version,
            },
        };
        apply(doc, &Op { op_id, kind });
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn a_restore_brings_back_exactly_the_version(
        before in prop::collection::vec(step(), 1..30),
        after in prop::collection::vec(step(), 0..30),
    ) {
        let mut doc = DocState::new("doc_r", "start");
        run(&mut doc, &before, "b");
        let version = live(&doc);
        let title = doc.title.clone();
        run(&mut doc, &after, "a");
        restore_and_check(&mut doc, &title, &version);
        // Restoring the same state again changes nothing.
        let again = plan(&doc, &RestoreInput { title: &title, blocks: &live(&doc), only: None, op_prefix: "rs2" }, &mut |o| o.to_string());
        prop_assert!(again.is_empty(), "{again:?}");
    }
}

#[test]
fn purged_bullets_come_back_under_new_ids_with_their_children() {
    let mut doc = DocState::new("doc_r", "T");
    run(
        &mut doc,
        &[
            Step::Insert(1, None, 0, 1),
            Step::Insert(2, Some(1), 0, 2),
            Step::Insert(3, None, 1, 3),
        ],
        "s",
    );
    let version = live(&doc);
    run(
        &mut doc,
        &[Step::Delete(1), Step::Purge(1), Step::Purge(2)],
        "p",
    );
    assert!(doc.is_purged("blk_1") && doc.is_purged("blk_2"));
    restore_and_check(&mut doc, "T", &version);
    let child = doc.get("blk_new_blk_2").expect("child back under a new ID");
    assert_eq!(child.parent_id.as_deref(), Some("blk_new_blk_1"));
}

#[test]
fn chosen_bullets_only_touch_those_and_delete_nothing() {
    let mut doc = DocState::new("doc_r", "T");
    run(
        &mut doc,
        &[Step::Insert(1, None, 0, 1), Step::Insert(2, None, 1, 2)],
        "s",
    );
    let version = live(&doc);
    run(
        &mut doc,
        &[
            Step::Text(1, 4),
            Step::Text(2, 4),
            Step::Insert(5, None, 2, 0),
        ],
        "e",
    );
    let only: HashSet<String> = ["blk_1".to_string()].into();
    let ops = plan(
        &doc,
        &RestoreInput {
            title: "T",
            blocks: &version,
            only: Some(&only),
            op_prefix: "rs",
        },
        &mut |o| o.to_string(),
    );
    for op in &ops {
        apply(&mut doc, op);
    }
    assert_eq!(doc.get("blk_1").unwrap().content, "text 1");
    assert_eq!(doc.get("blk_2").unwrap().content, "edit 4");
    assert!(!doc.get("blk_5").unwrap().deleted);
    assert_eq!(ops.len(), 1);
    assert_eq!(ops[0].op_id, "rs:0");
}
