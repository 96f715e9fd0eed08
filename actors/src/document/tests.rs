//! The document actor on a real (temporary) database, driven by messages: what its wake-up
//! channels hear, and what becomes of waiters whose client went away. Each test waits on
//! replies and counts, never on a fixed sleep.

use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;
use serde_json::json;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::clock::ManualClock;
use crate::collab::block::Author;
use crate::collab::op::Op;
use crate::storage::log::Precheck;
use crate::storage::roles::Role;
use crate::storage::{accounts, documents, Storage, StorageConfig, Synchronous};

use super::*;

pub(super) struct Fixture {
    pub(super) _dir: tempfile::TempDir,
    pub(super) storage: Storage,
    pub(super) user: accounts::User,
    pub(super) doc_id: String,
}

pub(super) fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let cfg = StorageConfig {
        path: dir.path().join("t.db"),
        synchronous: Synchronous::Normal,
        read_pool_size: 2,
        group_commit_max: 64,
        cache_kib: 1024,
        metrics: None,
    };
    let (storage, _writer) = Storage::open(&cfg).expect("open storage");
    let (user, doc_id) = storage
        .writer
        .call_blocking(|c| {
            let u = accounts::create_user(c, "ann", "Ann", false, 0)?;
            documents::create(c, "doc_t", &u.id, "T", None, 0)?;
            Ok((u, "doc_t".to_string()))
        })
        .expect("seed");
    Fixture {
        _dir: dir,
        storage,
        user,
        doc_id,
    }
}

pub(super) fn start(f: &Fixture, tick: Duration) -> Addr<DocumentActor> {
    let cfg = ActorConfig {
        tick,
        ..ActorConfig::default()
    };
    let clock = ManualClock::new(1_000_000);
    DocumentActor::new(
        f.doc_id.clone(),
        f.storage.clone(),
        clock,
        Arc::new(cfg),
        None,
    )
    .start()
}

pub(super) fn caller(f: &Fixture, client: &str) -> Caller {
    Caller {
        client_id: client.to_string(),
        author: Author {
            user_id: f.user.id.clone(),
            name: f.user.display_name.clone(),
        },
        role: Role::Owner,
        shared: true,
    }
}

pub(super) fn insert(op_id: &str, block_id: &str, key: &str, text: &str) -> Op {
    serde_json::from_value(json!({
        "opId": op_id, "kind": "insert", "blockId": block_id, "parentId": null,
        "orderKey": key, "content": text,
    }))
    .expect("op")
}

pub(super) fn sync(caller: Caller, last_seq: i64, ops: Vec<Op>, hold: Option<Vec<&str>>) -> Sync {
    Sync {
        caller,
        last_seq,
        ops,
        hold: hold.map(|h| h.into_iter().map(str::to_string).collect()),
        precheck: Precheck::default(),
        precheck_at: Instant::now(),
    }
}

pub(super) async fn subscribe(
    addr: &Addr<DocumentActor>,
    f: &Fixture,
) -> (Subscribed, UnboundedReceiver<DocEvent>) {
    let (sink, rx) = tokio::sync::mpsc::unbounded_channel();
    let msg = Subscribe {
        channel: Channel::WebSocket,
        client_id: None,
        user_id: f.user.id.clone(),
        sink,
    };
    let s = addr.send(msg).await.unwrap().expect("subscribed");
    (s, rx)
}

/// Every wake-up already sent (the actor sends them before it replies).
pub(super) fn drain(rx: &mut UnboundedReceiver<DocEvent>) -> Vec<Arc<Wake>> {
    let mut out = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if let DocEvent::Seq(w) = ev {
            out.push(w);
        }
    }
    out
}

/// Sends a request that is answered only after everything before it in the mailbox.
async fn stats(addr: &Addr<DocumentActor>) -> ActorStats {
    addr.send(GetStats).await.unwrap()
}

#[actix::test]
async fn a_new_clients_first_sync_wakes_each_subscriber_once() {
    let f = fixture();
    let addr = start(&f, Duration::from_secs(3600));
    let (_sub, mut rx) = subscribe(&addr, &f).await;
    // A client new to the document: a new session, a lease for its block, a new head.
    let msg = sync(
        caller(&f, "cl_new"),
        0,
        vec![insert("op_1", "blk_1", "a0", "hello")],
        Some(vec!["blk_1"]),
    );
    let reply = addr.send(msg).await.unwrap().expect("synced");
    let wakes = drain(&mut rx);
    assert_eq!(wakes.len(), 1, "one change, one wake-up; heard {wakes:?}");
    assert_eq!(wakes[0].head_seq, 1);
    assert_eq!(wakes[0].lease_seq, reply.fields.lease_seq);
}

#[actix::test]
async fn a_read_only_sync_of_a_new_client_wakes_each_subscriber_once() {
    let f = fixture();
    let addr = start(&f, Duration::from_secs(3600));
    let (_sub, mut rx) = subscribe(&addr, &f).await;
    let msg = sync(caller(&f, "cl_reader"), 0, Vec::new(), Some(Vec::new()));
    addr.send(msg).await.unwrap().expect("synced");
    assert_eq!(
        drain(&mut rx).len(),
        1,
        "the new session is one piece of news"
    );
}

#[actix::test]
async fn a_vanished_long_poll_is_forgotten_on_the_next_tick() {
    let f = fixture();
    let addr = start(&f, Duration::from_millis(20));
    let wait = WaitChanges {
        since: 0,
        lease_seq: 0,
        client_id: None,
        user_id: f.user.id.clone(),
    };
    let Changes::Later { rx, .. } = addr.send(wait).await.unwrap().expect("waiting") else {
        panic!("nothing changed yet: the waiter must wait");
    };
    assert_eq!(stats(&addr).await.long_poll, 1);
    // The HTTP handler of a client that went away drops its receiver; nothing else happens
    // to the document, so only the tick can notice.
    drop(rx);
    let deadline = Instant::now() + Duration::from_secs(5);
    while stats(&addr).await.long_poll != 0 {
        assert!(
            Instant::now() < deadline,
            "the vanished waiter stayed registered"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[actix::test]
async fn wake_ups_carry_entries_only_to_subscribers_that_still_read() {
    let f = fixture();
    let stranger = f
        .storage
        .writer
        .call_blocking(|c| accounts::create_user(c, "bob", "Bob", false, 0))
        .expect("bob");
    let addr = start(&f, Duration::from_secs(3600));
    let (_sub, mut rx) = subscribe(&addr, &f).await;
    // Bob was let in by the HTTP layer when he could read; then his share went away.
    let (sink, mut bob_rx) = tokio::sync::mpsc::unbounded_channel();
    let bob = Subscribe {
        channel: Channel::Sse,
        client_id: None,
        user_id: stranger.id.clone(),
        sink,
    };
    let _bob_sub = addr.send(bob).await.unwrap().expect("subscribed");
    let first = sync(
        caller(&f, "cl_w"),
        0,
        vec![insert("op_1", "blk_1", "a0", "one")],
        None,
    );
    addr.send(first).await.unwrap().expect("synced");
    let heard = drain(&mut bob_rx);
    assert_eq!(heard.len(), 1);
    assert!(
        heard[0].entries.is_some(),
        "while bob reads, entries come along"
    );
    drain(&mut rx);

    addr.send(AccessChanged).await.unwrap();
    // Ann's role is re-read before she gets entries again; bob has none, so never.
    let mut ann_carried = false;
    for i in 2..200 {
        let op = insert(&format!("op_{i}"), &format!("blk_{i}"), "a1", "more");
        let msg = sync(caller(&f, "cl_w"), i - 1, vec![op], None);
        addr.send(msg).await.unwrap().expect("synced");
        for w in drain(&mut bob_rx) {
            assert!(w.entries.is_none(), "bob lost access but heard {w:?}");
        }
        if drain(&mut rx).iter().any(|w| w.entries.is_some()) {
            ann_carried = true;
            break;
        }
        tokio::task::yield_now().await;
    }
    assert!(
        ann_carried,
        "ann's access was confirmed and entries resumed"
    );
}

#[actix::test]
async fn a_pull_of_the_announced_change_gets_the_very_bytes_of_the_wake_up() {
    let f = fixture();
    let addr = start(&f, Duration::from_secs(3600));
    let (_sub, mut rx) = subscribe(&addr, &f).await;
    let write = sync(
        caller(&f, "cl_w"),
        0,
        vec![insert("op_1", "blk_1", "a0", "one")],
        None,
    );
    addr.send(write).await.unwrap().expect("synced");
    let wake = drain(&mut rx).pop().expect("a wake-up");
    let carried = wake.entries.clone().expect("a small change travels");
    for reader in ["cl_r1", "cl_r2"] {
        let pull = sync(caller(&f, reader), 0, Vec::new(), None);
        let reply = addr.send(pull).await.unwrap().expect("synced");
        let LogPage::Ready(Entries::Encoded(page)) = reply.page else {
            panic!("the page is in the tail: {:?}", reply.page);
        };
        assert!(Arc::ptr_eq(&page, &carried), "encoded once, shared");
    }
}

#[actix::test]
async fn snapshots_at_one_head_share_one_encoding_and_a_new_head_gets_its_own() {
    let f = fixture();
    let addr = start(&f, Duration::from_secs(3600));
    let n = super::sync::SHARE_FROM_BLOCKS;
    let keys = crate::collab::order_key::n_keys_between(None, None, n).expect("keys");
    let ops = keys
        .iter()
        .enumerate()
        .map(|(i, k)| insert(&format!("op_{i}"), &format!("blk_{i}"), k, "text"))
        .collect();
    let msg = sync(caller(&f, "cl_w"), 0, ops, None);
    addr.send(msg).await.unwrap().expect("synced");
    let snapshot = |client: &str| Snapshot {
        caller: caller(&f, client),
    };
    let a = addr.send(snapshot("cl_a")).await.unwrap().expect("a");
    let b = addr.send(snapshot("cl_b")).await.unwrap().expect("b");
    assert!(
        Arc::ptr_eq(&a.blocks, &b.blocks),
        "one set of blocks per head"
    );
    let json = a.blocks.json();
    assert_eq!(
        b.blocks.json_if_ready(),
        Some(json),
        "encoded once, seen by both"
    );

    let edit: Op = serde_json::from_value(json!({"opId": "op_edit", "kind": "set_content",
        "blockId": "blk_0", "content": "edited", "baseVersion": 1}))
    .expect("op");
    addr.send(sync(caller(&f, "cl_w"), n as i64, vec![edit], None))
        .await
        .unwrap()
        .expect("edited");
    let c = addr.send(snapshot("cl_a")).await.unwrap().expect("c");
    assert!(!Arc::ptr_eq(&a.blocks, &c.blocks), "a new head, new blocks");
    assert_eq!(c.blocks.head_seq(), n as i64 + 1);
    assert!(
        c.blocks.json_if_ready().is_none(),
        "not encoded before asked"
    );
    let text = String::from_utf8(c.blocks.json().to_vec()).unwrap();
    assert!(text.contains("\"edited\""), "{text}");
}
