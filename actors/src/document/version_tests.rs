//! A version is the document at exactly one `seq`: random op sequences (inserts, edits,
//! moves, deletes, restores, title changes) run through the actor on a real database, with
//! versions asked for between requests — including while writes are still on their way —
//! and each stored version must equal the log replayed from the start up to its `seq`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use proptest::prelude::*;
use serde_json::json;

use crate::collab::document::DocState;
use crate::collab::op::{LogEntry, Op};
use crate::collab::replay::apply_entry;
use crate::storage::log;
use crate::storage::versions::{self, VersionKind};

use super::tests::{caller, fixture, sync};
use super::*;

#[derive(Debug, Clone)]
enum Step {
    Insert(u8, Option<u8>, u8),
    Text(u8, u8),
    Move(u8, Option<u8>, u8),
    Delete(u8),
    Restore(u8),
    Title(u8),
    /// Ask for a version now.
    Version,
}

fn step() -> impl Strategy<Value = Step> {
    let id = 0u8..6;
    prop_oneof![
        3 => (id.clone(), prop::option::of(0u8..6), 0u8..4).prop_map(|(a, p, k)| Step::Insert(a, p, k)),
        3 => (id.clone(), 0u8..9).prop_map(|(a, t)| Step::Text(a, t)),
        2 => (id.clone(), prop::option::of(0u8..6), 0u8..4).prop_map(|(a, p, k)| Step::Move(a, p, k)),
        1 => id.clone().prop_map(Step::Delete),
        1 => id.clone().prop_map(Step::Restore),
        1 => (0u8..3).prop_map(Step::Title),
        2 => Just(Step::Version),
    ]
}

const KEYS: [&str; 4] = ["a0", "a1", "a2", "a3"];

fn op(n: usize, s: &Step) -> Option<Op> {
    let b = |i: &u8| format!("blk_{i}");
    let v = match s {
        Step::Insert(a, p, k) => {
            json!({"kind": "insert", "blockId": b(a), "parentId": p.as_ref().map(b), "orderKey": KEYS[*k as usize], "content": format!("new {a}")})
        }
        // Any base version: a stale one makes a conflict copy, which a version holds too.
        Step::Text(a, t) => {
            json!({"kind": "set_content", "blockId": b(a), "content": format!("text {t}"), "baseVersion": (*t % 3) as i64 + 1})
        }
        Step::Move(a, p, k) => {
            json!({"kind": "move", "blockId": b(a), "parentId": p.as_ref().map(b), "orderKey": KEYS[*k as usize]})
        }
        Step::Delete(a) => json!({"kind": "delete", "blockId": b(a)}),
        Step::Restore(a) => json!({"kind": "restore", "blockId": b(a)}),
        Step::Title(t) => {
            json!({"kind": "set_title", "title": format!("title {t}"), "baseVersion": 1})
        }
        Step::Version => return None,
    };
    let mut v = v;
    v["opId"] = json!(format!("op_{n}"));
    Some(serde_json::from_value(v).expect("op"))
}

/// Live blocks as comparable JSON, by ID.
fn live(blocks: impl Iterator<Item = serde_json::Value>) -> BTreeMap<String, serde_json::Value> {
    blocks
        .filter(|b| b["deleted"] != true)
        .map(|b| (b["id"].as_str().unwrap().to_string(), b))
        .collect()
}

fn run_case(steps: Vec<Step>) {
    System::new().block_on(async move {
        let f = fixture();
        let cfg = ActorConfig {
            tick: Duration::from_secs(3600),
            auto_version_every_ms: 0,
            ..ActorConfig::default()
        };
        let addr = DocumentActor::new(
            crate::collab::validate::DocId::parse(&f.doc_id).unwrap(),
            f.storage.clone(),
            crate::clock::ManualClock::new(1_000_000),
            Arc::new(cfg),
            None,
        )
        .start();
        // Ops go in requests of up to three; a version request is sent without waiting for
        // the writes before it (they are queued, not yet committed).
        let mut pending = Vec::new();
        let mut batch = Vec::new();
        let mut asked = Vec::new();
        for (n, s) in steps.iter().enumerate() {
            match op(n, s) {
                Some(o) => batch.push(o),
                None => {
                    if !batch.is_empty() {
                        pending.push(addr.send(sync(
                            caller(&f, "cl_a"),
                            0,
                            std::mem::take(&mut batch),
                            None,
                        )));
                    }
                    asked.push(addr.send(TakeVersion {
                        kind: VersionKind::Named,
                        name: Some(format!("v{n}")),
                        created_by: None,
                    }));
                }
            }
            if batch.len() == 3 {
                pending.push(addr.send(sync(
                    caller(&f, "cl_a"),
                    0,
                    std::mem::take(&mut batch),
                    None,
                )));
            }
        }
        if !batch.is_empty() {
            pending.push(addr.send(sync(caller(&f, "cl_a"), 0, batch, None)));
        }
        for p in pending {
            p.await.expect("mailbox").expect("sync");
        }
        let mut taken = Vec::new();
        for a in asked {
            taken.push(a.await.expect("mailbox").expect("version"));
        }
        let doc = f.doc_id.clone();
        let (entries, stored) = f
            .storage
            .read(move |c| {
                let log = log::read_after(c, &doc, 0, i64::MAX, 100_000)?;
                let mut stored = Vec::new();
                for m in versions::list(c, &doc)? {
                    stored.push(versions::get(c, &doc, &m.version_id)?.expect("listed"));
                }
                Ok((log, stored))
            })
            .await
            .expect("read");
        assert_eq!(stored.len(), taken.len());
        let entries: Vec<LogEntry> = entries
            .iter()
            .map(|r| serde_json::from_str(r.json.get()).expect("entry"))
            .collect();
        for (meta, state) in stored {
            let mut replayed = DocState::new(&f.doc_id, "T");
            for e in entries.iter().filter(|e| e.seq <= meta.seq) {
                apply_entry(&mut replayed, e);
            }
            let want = live(
                replayed
                    .blocks()
                    .map(|b| serde_json::to_value(&**b).unwrap()),
            );
            let got = live(
                state
                    .blocks
                    .iter()
                    .map(|b| serde_json::to_value(&**b).unwrap()),
            );
            assert_eq!(got, want, "version at seq {}", meta.seq);
            assert_eq!(state.title, replayed.title, "title at seq {}", meta.seq);
        }
    });
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn a_version_is_the_log_replayed_to_its_seq(steps in prop::collection::vec(step(), 1..40)) {
        run_case(steps);
    }
}
