//! An actor that fails is replaced, and the replacement serves the same document: through
//! the registry and `ask`, on a real (temporary) database. Requests already queued on the
//! failed actor are answered `Restarting` (or find its mailbox closed), never with a state
//! that was thrown away; the next `ask` reaches a fresh actor that reloaded everything
//! committed, including a write the failed actor still had in flight. The failure is the
//! debug-build fault injection (`panic_marker`); the writer is held with a job blocking on
//! a channel where a test needs a write to be in flight. No sleeps.

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Instant;

use actix::prelude::*;
use actix::MailboxError;
use serde_json::json;

use crate::ask::{ask, ask_renewing};
use crate::clock::ManualClock;
use crate::collab::block::Author;
use crate::collab::op::Op;
use crate::collab::sync_request::SyncRequest;
use crate::collab::validate::{ClientId, DocId, Limits};
use crate::registry::{DocHandle, Documents, Open, Registry};
use crate::storage::log::Precheck;
use crate::storage::roles::Role;
use crate::storage::{accounts, documents, Storage, StorageConfig, Synchronous};

use super::*;

const MARKER: &str = "__fail_here__";

struct World {
    _dir: tempfile::TempDir,
    storage: Storage,
    registry: Documents,
    cfg_metrics: Arc<crate::metrics::Metrics>,
    caller: Caller,
    doc: DocId,
}

fn world() -> World {
    let dir = tempfile::tempdir().expect("temp dir");
    let (storage, _writer) = Storage::open(&StorageConfig {
        backend: crate::storage::Backend::Sqlite,
        path: dir.path().join("r.db"),
        synchronous: Synchronous::Normal,
        read_pool_size: 2,
        group_commit_max: 64,
        cache_kib: 1024,
        metrics: None,
    })
    .expect("open storage");
    let user = storage
        .write_blocking(|c| {
            let u = accounts::create_user(c, "ann", "Ann", false, 0)?;
            documents::create(c, "doc_r", &u.id, "Restarted", None, 0)?;
            Ok(u)
        })
        .expect("seed");
    let cfg = ActorConfig {
        panic_marker: Some(MARKER.into()),
        ..ActorConfig::default()
    };
    let metrics = cfg.metrics.clone();
    let registry = Documents::start(Registry::new(
        vec![Arbiter::current()],
        storage.clone(),
        ManualClock::new(1_000_000),
        cfg,
    ));
    World {
        _dir: dir,
        storage,
        registry,
        cfg_metrics: metrics,
        caller: Caller {
            client: Some(ClientId::parse("cl_r", &Limits::default()).expect("client")),
            author: Author {
                user_id: user.id.clone(),
                name: user.display_name.clone(),
            },
            role: Role::Owner,
            shared: false,
            reach: crate::storage::roles::Reach::Document,
        },
        doc: DocId::parse("doc_r").expect("doc ID"),
    }
}

fn op(v: serde_json::Value) -> Op {
    serde_json::from_value(v).expect("op")
}

fn insert(block: &str, key: &str, text: &str) -> Op {
    op(
        json!({"opId": format!("op_{block}"), "kind": "insert", "blockId": block,
              "parentId": null, "orderKey": key, "content": text}),
    )
}

fn set_content(op_id: &str, block: &str, text: &str, base: i64) -> Op {
    op(
        json!({"opId": op_id, "kind": "set_content", "blockId": block,
              "content": text, "baseVersion": base}),
    )
}

fn sync(w: &World, ops: Vec<Op>) -> Sync {
    let request = SyncRequest {
        client: w.caller.client.clone().expect("client"),
        last_seq: 0,
        ops,
        hold: None,
    };
    Sync::new(
        w.caller.clone(),
        request,
        Some((Precheck::default(), Instant::now())),
    )
}

/// A sync through `ask`, its pre-check renewed when a fresh actor asks for it (these ops
/// are all new, so an empty pre-check is the true one).
async fn sync_ok(w: &World, ops: Vec<Op>) -> SyncReply {
    let renew = || {
        let m = sync(w, ops.clone());
        async move { Ok::<_, DocError>(m) }
    };
    ask_renewing(&w.registry, &w.doc, sync(w, ops.clone()), renew)
        .await
        .expect("sync answered")
}

/// (headSeq, title, [(id, content, version)]) as the actor serves it.
async fn served(w: &World) -> (i64, String, Vec<(String, String, i64)>) {
    let snap = ask(
        &w.registry,
        &w.doc,
        Snapshot {
            caller: w.caller.clone(),
        },
    )
    .await
    .expect("snapshot");
    let blocks = snap
        .blocks
        .iter()
        .map(|b| (b.block.id.clone(), b.block.content.clone(), b.block.version))
        .collect();
    (snap.head_seq, snap.title, blocks)
}

async fn current_actor(w: &World) -> DocHandle {
    w.registry
        .send(Open {
            doc_id: w.doc.clone(),
        })
        .await
        .expect("registry")
}

/// What a request queued on a failed actor may get: `Restarting`, or a closed mailbox.
fn is_restarting<T: std::fmt::Debug>(r: &Result<Result<T, DocError>, MailboxError>) -> bool {
    matches!(r, Ok(Err(DocError::Restarting)) | Err(_))
}

#[actix::test]
async fn a_failed_actor_is_reopened_by_the_registry_with_the_same_state() {
    let w = world();
    sync_ok(
        &w,
        vec![insert("blk_a", "a0", "one"), insert("blk_b", "a1", "two")],
    )
    .await;
    sync_ok(&w, vec![set_content("op_a2", "blk_a", "one, edited", 1)]).await;
    let before = served(&w).await;
    assert_eq!(before.0, 3);
    let starts = w.cfg_metrics.actor_starts.get();

    // The failing request and three more behind it in the same mailbox.
    let old = current_actor(&w).await;
    let snapshot = || Snapshot {
        caller: w.caller.clone(),
    };
    let (boom, q1, q2, q3) = futures::join!(
        old.request(sync(&w, vec![set_content("op_boom", "blk_b", MARKER, 1)])),
        old.request(snapshot()),
        old.request(sync(&w, vec![set_content("op_q", "blk_b", "queued", 1)])),
        old.request(snapshot()),
    );
    assert!(
        matches!(boom, Ok(Err(DocError::Internal(_)))),
        "the failing request: {:?}",
        boom.map(|r| r.map(|_| ()))
    );
    assert!(
        is_restarting(&q1),
        "queued snapshot: {:?}",
        q1.map(|r| r.map(|_| ()))
    );
    assert!(
        is_restarting(&q2),
        "queued sync: {:?}",
        q2.map(|r| r.map(|_| ()))
    );
    assert!(
        is_restarting(&q3),
        "queued snapshot: {:?}",
        q3.map(|r| r.map(|_| ()))
    );

    // The next ask reaches a fresh actor that serves exactly what was committed: neither
    // the failing op nor the refused queued one.
    assert_eq!(served(&w).await, before);
    assert_eq!(w.cfg_metrics.actor_restarts.get(), 1);
    assert_eq!(
        w.cfg_metrics.actor_starts.get(),
        starts + 1,
        "one fresh actor"
    );
    // And it takes edits on from there.
    let r = sync_ok(&w, vec![set_content("op_b2", "blk_b", "two, edited", 1)]).await;
    assert_eq!(r.fields.head_seq, 4);
    let (head, _, blocks) = served(&w).await;
    assert_eq!(head, 4);
    assert!(blocks.contains(&("blk_b".into(), "two, edited".into(), 2)));
}

/// Unblocks the writer when dropped (also when an assertion fails first).
struct Release(mpsc::Sender<()>);

impl Drop for Release {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// Holds the writer thread with a job that waits for the returned guard to go away.
fn hold_writer(storage: &Storage) -> Release {
    let (running_tx, running) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let _answer = storage.write(move |_c| {
        running_tx.send(()).unwrap();
        let _ = released.recv();
        Ok(())
    });
    running.recv().expect("the holding job runs");
    Release(release)
}

#[actix::test]
async fn a_write_in_flight_when_the_actor_fails_is_served_by_the_next_one() {
    let w = world();
    sync_ok(&w, vec![insert("blk_a", "a0", "one")]).await;
    let old = current_actor(&w).await;

    // The writer is busy: the old actor's next write is queued, not yet committed, when
    // the failing request arrives.
    let release = hold_writer(&w.storage);
    let (in_flight, ()) = futures::join!(
        old.request(sync(&w, vec![insert("blk_f", "a1", "in flight")])),
        async {
            let boom = old
                .request(sync(&w, vec![set_content("op_boom", "blk_a", MARKER, 1)]))
                .await;
            assert!(
                matches!(boom, Ok(Err(DocError::Internal(_)))),
                "the failing request: {:?}",
                boom.map(|r| r.map(|_| ()))
            );
            drop(release);
        },
    );
    // The write landed (it was queued before the failure); its requester is told to ask
    // again, which a client does with the same opId and then gets the stored result.
    assert!(
        matches!(in_flight, Ok(Ok(_))) || is_restarting(&in_flight),
        "the request in flight: {:?}",
        in_flight.map(|r| r.map(|_| ()))
    );
    // The fresh actor loads behind that write (its load goes through the writer queue).
    let (head, _, blocks) = served(&w).await;
    assert_eq!(head, 2, "{blocks:?}");
    assert_eq!(
        blocks,
        vec![
            ("blk_a".into(), "one".into(), 1),
            ("blk_f".into(), "in flight".into(), 1)
        ]
    );
    assert_eq!(w.cfg_metrics.actor_restarts.get(), 1);
}
