//! The document actor on a real (temporary) database, driven by messages: what its wake-up
//! channels hear, and what becomes of waiters whose client went away. Each test waits on
//! replies and counts, never on a fixed sleep.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::messages::Events;
use actix::prelude::*;
use serde_json::json;

use crate::clock::ManualClock;
use crate::collab::block::Author;
use crate::collab::op::Op;
use crate::collab::sync_request::SyncRequest;
use crate::collab::validate::{ClientId, DocId, Limits};
use crate::storage::log::Precheck;
use crate::storage::roles::Role;
use crate::storage::{accounts, documents, Storage, StorageConfig, Synchronous};

use super::*;
use crate::document::grant::{Confirmed, Revoked, Standing, StreamGrant};

pub(super) struct Fixture {
    pub(super) _dir: tempfile::TempDir,
    pub(super) storage: Storage,
    pub(super) user: accounts::User,
    pub(super) doc_id: String,
}

pub(super) fn fixture() -> Fixture {
    let dir = tempfile::tempdir().expect("temp dir");
    let cfg = StorageConfig {
        backend: crate::storage::Backend::Sqlite,
        path: dir.path().join("t.db"),
        synchronous: Synchronous::Normal,
        read_pool_size: 2,
        group_commit_max: 64,
        cache_kib: 1024,
        metrics: None,
    };
    let (storage, _writer) = Storage::open(&cfg).expect("open storage");
    let (user, doc_id) = storage
        .write_blocking(|c| {
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
        DocId::parse(&f.doc_id).expect("doc ID"),
        f.storage.clone(),
        clock,
        Arc::new(cfg),
        None,
    )
    .start()
}

/// What a stream has heard so far, as `head:entries`, `revoked:…` or `moved`.
pub(super) fn events(rx: &mut Events) -> Vec<String> {
    let mut out = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        out.push(match ev {
            DocEvent::Seq(w) => format!("{}:{}", w.head_seq, w.entries_json().unwrap_or("-")),
            DocEvent::Revoked { why, .. } => format!("revoked:{why:?}"),
            DocEvent::Moved { .. } => "moved".into(),
        });
    }
    out
}

pub(super) fn client(id: &str) -> ClientId {
    ClientId::parse(id, &Limits::default()).expect("client ID")
}

pub(super) fn caller(f: &Fixture, id: &str) -> Caller {
    Caller {
        client: Some(client(id)),
        author: Author {
            user_id: f.user.id.clone(),
            name: f.user.display_name.clone(),
        },
        role: Role::Owner,
        shared: true,
        reach: crate::storage::roles::Reach::Document,
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
    let request = SyncRequest {
        client: caller.client.clone().expect("a sync comes from a tab"),
        last_seq,
        ops,
        hold: hold.map(|h| h.into_iter().map(str::to_string).collect()),
    };
    Sync::new(caller, request, Some((Precheck::default(), Instant::now())))
}

pub(super) async fn subscribe(addr: &Addr<DocumentActor>, f: &Fixture) -> (Subscribed, Events) {
    let (sink, rx) = super::messages::event_channel();
    let msg = Subscribe {
        channel: Channel::WebSocket,
        client: None,
        user_id: f.user.id.clone(),
        sink,
        grant: Arc::new(super::grant::UserGrant(f.user.id.clone())),
        confirmed: confirmed_now(f),
        reach: crate::storage::roles::Reach::Document,
    };
    let s = addr.send(msg).await.unwrap().expect("subscribed");
    (s, rx)
}

/// Every wake-up already sent (the actor sends them before it replies).
pub(super) fn drain(rx: &mut Events) -> Vec<Arc<Wake>> {
    let mut out = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if let DocEvent::Seq(w) = ev {
            out.push(w);
        }
    }
    out
}

/// Sends a request that is answered only after everything before it in the mailbox.
async fn stats(addr: &Addr<DocumentActor>) -> ActorReport {
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
        client: None,
        user_id: f.user.id.clone(),
        reach: crate::storage::roles::Reach::Document,
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

/// Rights confirmed at the storage's current access epoch, for a login that cannot end.
pub(super) fn confirmed_now(f: &Fixture) -> Confirmed {
    Confirmed {
        epoch: f.storage.access_epoch().current(),
        until: None,
    }
}

/// A stream opened with an API token: it stands while the token names its user and that
/// user reads the document (the service's grant does the same with any credential).
struct TokenGrant(String);

impl StreamGrant for TokenGrant {
    fn key(&self) -> &str {
        &self.0
    }

    fn recheck(
        &self,
        conn: &mut crate::storage::Db,
        doc_id: &str,
        _now: i64,
    ) -> Result<Standing, crate::storage::StorageError> {
        let Some((user, _, _)) = accounts::user_by_token(conn, &self.0, 0)? else {
            return Ok(Standing::CredentialEnded);
        };
        Ok(
            match crate::storage::roles::doc_role(conn, &user.id, doc_id)? {
                Some(_) => Standing::Reads {
                    until: None,
                    reach: crate::storage::roles::Reach::Document,
                },
                None => Standing::NoAccess,
            },
        )
    }
}

/// A reader with a token and a read share on the fixture's document.
struct Reader {
    user: accounts::User,
    token: String,
    token_id: String,
    rx: Events,
    _sub: Subscribed,
    /// The head acknowledged when the revocation of this reader's rights returned.
    revoked_at: Option<i64>,
    /// Every head this reader heard, in order, and whether it was told it was revoked.
    heard: Vec<i64>,
    ended: Option<Revoked>,
}

impl Reader {
    fn listen(&mut self) {
        while let Ok(ev) = self.rx.try_recv() {
            match ev {
                DocEvent::Seq(w) => {
                    assert!(
                        self.ended.is_none(),
                        "{} heard after the end",
                        self.user.name
                    );
                    self.heard.push(w.head_seq);
                    if let Some(at) = self.revoked_at {
                        assert!(
                            w.head_seq <= at,
                            "{} heard head {} after its rights ended at {at}",
                            self.user.name,
                            w.head_seq
                        );
                    }
                }
                DocEvent::Revoked { why, .. } => self.ended = Some(why),
                DocEvent::Moved { .. } => panic!("a document actor's stream is never moved"),
            }
        }
    }
}

async fn reader(f: &Fixture, addr: &Addr<DocumentActor>, name: &str) -> Reader {
    let (n, doc, owner) = (name.to_string(), f.doc_id.clone(), f.user.id.clone());
    let (user, token, token_id) = f
        .storage
        .write(move |c| {
            use crate::storage::sharing::{self, Access, Share, ShareKind};
            let u = accounts::create_user(c, &n, &n, false, 0)?;
            let token = accounts::create_token(c, &u.id, "t", 0)?;
            let id = accounts::list_tokens(c, &u.id)?.remove(0).token_id;
            let mut shares = sharing::doc_shares(c, &doc)?;
            shares.push(Share {
                kind: ShareKind::User,
                id: u.id.clone(),
                access: Access::Read,
            });
            sharing::set_doc_shares(c, &doc, &owner, &shares)?;
            Ok((u, token, id))
        })
        .await
        .expect("reader");
    let (sink, rx) = super::messages::event_channel();
    let msg = Subscribe {
        channel: Channel::Sse,
        client: None,
        user_id: user.id.clone(),
        sink,
        grant: Arc::new(TokenGrant(token.clone())),
        confirmed: confirmed_now(f),
        reach: crate::storage::roles::Reach::Document,
    };
    let sub = addr.send(msg).await.unwrap().expect("subscribed");
    Reader {
        user,
        token,
        token_id,
        rx,
        _sub: sub,
        revoked_at: None,
        heard: Vec::new(),
        ended: None,
    }
}

/// Until every reader whose rights ended was told so and the others heard `head`.
async fn wait_settled(addr: &Addr<DocumentActor>, readers: &mut [Reader], head: i64) {
    addr.send(AccessChanged { shares: false }).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        for r in readers.iter_mut() {
            r.listen();
        }
        let done = readers.iter().all(|r| match r.revoked_at {
            Some(_) => r.ended.is_some(),
            None => r.heard.last() == Some(&head),
        });
        if done {
            return;
        }
        assert!(Instant::now() < deadline, "streams did not settle");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[actix::test]
async fn a_stream_whose_token_was_deleted_hears_nothing_more_and_is_ended() {
    let f = fixture();
    let addr = start(&f, Duration::from_secs(3600));
    let mut bob = reader(&f, &addr, "bob").await;
    let first = sync(
        caller(&f, "cl_w"),
        0,
        vec![insert("op_1", "blk_1", "a0", "one")],
        None,
    );
    addr.send(first).await.unwrap().expect("synced");
    bob.listen();
    assert_eq!(bob.heard, [1], "bob reads while his token stands");

    let (uid, tid) = (bob.user.id.clone(), bob.token_id.clone());
    f.storage
        .write(move |c| accounts::delete_token(c, &uid, &tid))
        .await
        .expect("deleted");
    bob.revoked_at = Some(1);
    // No broadcast has reached the actor: the epoch alone keeps the next change from bob.
    let op = insert("op_2", "blk_2", "a1", "secret");
    addr.send(sync(caller(&f, "cl_w"), 1, vec![op], None))
        .await
        .unwrap()
        .expect("synced");
    bob.listen();
    assert_eq!(bob.heard, [1]);
    wait_settled(&addr, std::slice::from_mut(&mut bob), 2).await;
    assert_eq!(bob.ended, Some(Revoked::CredentialEnded));
    assert!(!bob.token.is_empty());
}

/// Writes, token deletions, share removals and the epoch broadcast arriving late, in random
/// order: no stream ever hears a change made after its rights ended, each such stream is
/// ended, and everyone else hears the last head.
#[actix::test]
async fn random_writes_and_revocations_never_reach_a_revoked_stream() {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for round in 0..12 {
        let f = fixture();
        let addr = start(&f, Duration::from_secs(3600));
        let mut readers = Vec::new();
        for i in 0..5 {
            readers.push(reader(&f, &addr, &format!("r{round}_{i}")).await);
        }
        let mut head = 0i64;
        for step in 0..60 {
            match next(10) {
                0..=5 => {
                    let id = format!("{step}");
                    let op = insert(&format!("op_{id}"), &format!("blk_{id}"), "a0", "text");
                    let msg = sync(caller(&f, "cl_w"), head, vec![op], None);
                    addr.send(msg).await.unwrap().expect("synced");
                    head += 1;
                }
                6 | 7 => {
                    let r = &mut readers[next(5) as usize];
                    if r.revoked_at.is_some() {
                        continue;
                    }
                    let (uid, tid, doc) = (r.user.id.clone(), r.token_id.clone(), f.doc_id.clone());
                    let by_share = next(2) == 0;
                    f.storage
                        .write(move |c| {
                            if by_share {
                                use crate::storage::sharing;
                                let owner = sharing::doc_owner(c, &doc)?.unwrap_or_default();
                                let mut shares = sharing::doc_shares(c, &doc)?;
                                shares.retain(|s| s.id != uid);
                                sharing::set_doc_shares(c, &doc, &owner, &shares)?;
                            } else {
                                accounts::delete_token(c, &uid, &tid)?;
                            }
                            Ok(())
                        })
                        .await
                        .expect("revoked");
                    r.revoked_at = Some(head);
                }
                8 => addr.do_send(AccessChanged { shares: false }),
                _ => tokio::task::yield_now().await,
            }
            for r in readers.iter_mut() {
                r.listen();
            }
        }
        wait_settled(&addr, &mut readers, head).await;
        for r in &readers {
            if r.revoked_at.is_some() {
                assert!(r.ended.is_some());
            }
        }
    }
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
    let n = super::encoded::SHARE_FROM_BLOCKS;
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

fn set_content_op(op_id: &str, block_id: &str, text: &str, base: i64) -> Op {
    serde_json::from_value(json!({
        "opId": op_id, "kind": "set_content", "blockId": block_id, "content": text,
        "baseVersion": base,
    }))
    .expect("op")
}

/// The same request as `sync`, sent without a pre-check.
fn unchecked(caller: Caller, last_seq: i64, ops: Vec<Op>) -> Sync {
    let request = SyncRequest {
        client: caller.client.clone().expect("a sync comes from a tab"),
        last_seq,
        ops,
        hold: None,
    };
    Sync::new(caller, request, None)
}

/// Sends `msg` until the actor stops asking for a pre-check for want of its op ID filter
/// (loaded by a read right after the actor started); returns its first other answer.
async fn once_filtered(addr: &Addr<DocumentActor>, msg: Sync) -> Result<SyncReply, DocError> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let r = addr.send(msg.clone()).await.expect("mailbox");
        if !matches!(r, Err(DocError::StalePrecheck)) || Instant::now() > deadline {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

#[actix::test]
async fn without_a_precheck_only_surely_new_ops_on_blocks_it_has_are_applied() {
    let f = fixture();
    let c = caller(&f, "cl_1");
    let addr = start(&f, Duration::from_secs(3600));
    let first = sync(c.clone(), 0, vec![insert("op_1", "blk_1", "a0", "x")], None);
    addr.send(first).await.unwrap().expect("insert");
    // A new op on a block the document has: no read needed.
    let edit = unchecked(c.clone(), 1, vec![set_content_op("op_2", "blk_1", "y", 1)]);
    let r = once_filtered(&addr, edit)
        .await
        .expect("applied without a pre-check");
    assert_eq!(r.fields.results[0].seq, Some(2));
    // A block it does not have may belong to another document: only the database knows.
    let other = unchecked(c.clone(), 2, vec![insert("op_3", "blk_2", "a1", "z")]);
    assert_eq!(
        addr.send(other).await.unwrap().unwrap_err(),
        DocError::StalePrecheck
    );
    // A fresh actor (after a restart) no longer has op_2 in memory, but its filter says it
    // was answered: a retry without a pre-check is sent back for one, never applied again.
    addr.send(Close).await.unwrap();
    let again = start(&f, Duration::from_secs(3600));
    let retry = unchecked(c.clone(), 2, vec![set_content_op("op_2", "blk_1", "y", 1)]);
    let new_op = unchecked(c.clone(), 2, vec![set_content_op("op_4", "blk_1", "w", 2)]);
    assert_eq!(
        once_filtered(&again, new_op)
            .await
            .expect("new op")
            .fields
            .results[0]
            .seq,
        Some(3),
        "the filter is loaded once a new op goes through"
    );
    assert_eq!(
        again.send(retry).await.unwrap().unwrap_err(),
        DocError::StalePrecheck
    );
}
