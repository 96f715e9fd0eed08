//! The fence, on a real PostgreSQL 15 (`testing::TempPostgres`, fsync on): a claim moves the
//! epoch; a write with a stale epoch changes nothing at all (whole-database fingerprint);
//! a claim racing a stale owner's write on two connections never lets both win; an expired
//! incarnation cannot renew; the start refuses `synchronous_commit = off`.

use std::sync::{Arc, Barrier};
use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;
use postgres::Client;

use super::claims as ownership;
use super::membership::{self as cluster, Member};
use crate::collab::block::Block;
use crate::collab::op::{Effect, LogEntry};
use crate::storage::documents;
use crate::storage::documents::DocWrite;
use crate::storage::log::LogRecord;
use crate::storage::postgres::testing::{on_pg, TempPostgres};
use crate::storage::postgres::{check_settings, migrate};
use crate::storage::StorageError;

const TTL: Duration = Duration::from_secs(5);

fn fresh() -> (TempPostgres, Client) {
    let pg = TempPostgres::start();
    let mut c = pg.client();
    migrate::apply(&mut c).unwrap();
    (pg, c)
}

/// Every table of the public schema, each as the hash of its sorted rows.
fn fingerprint(c: &mut Client) -> Vec<(String, String)> {
    let tables: Vec<String> = c
        .query(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    tables
        .into_iter()
        .map(|t| {
            let sql = format!(
                "SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) FROM \"{t}\" x"
            );
            let h: String = c.query_one(&sql, &[]).unwrap().get(0);
            (t, h)
        })
        .collect()
}

/// One insert by `who` at `seq`, as the actor would write it.
fn write(doc: &str, expect: i64, block: &str, text: &str) -> DocWrite {
    let b = std::sync::Arc::new(Block::new(
        block.into(),
        None,
        "a0".into(),
        text.into(),
        5,
        "usr_a",
    ));
    let entry = LogEntry {
        seq: expect + 1,
        op_id: format!("op_{block}_{expect}"),
        kind: "insert".into(),
        client_id: "cl_a".into(),
        user_id: "usr_a".into(),
        at: 5,
        effects: vec![Effect::Block { block: b.clone() }],
    };
    DocWrite {
        doc_id: doc.into(),
        expect_head: expect,
        head_after: expect + 1,
        blocks: vec![b],
        log: vec![std::sync::Arc::new(LogRecord::from_entry(&entry))],
        results: vec![(entry.op_id.clone(), "{}".into())],
        now: 5,
        ..DocWrite::default()
    }
}

fn apply(c: &mut Client, w: &DocWrite, epoch: i64) -> Result<(), StorageError> {
    let mut tx = c.transaction()?;
    on_pg(&mut tx, |db| documents::apply_write(db, w, epoch))?;
    tx.commit()?;
    Ok(())
}

fn expire(c: &mut Client, m: &Member) {
    // The database's clock is the only one: an expired incarnation is one whose time is up.
    c.execute(
        "UPDATE nodes SET expires_at = now() - interval '1 second' WHERE inc = $1",
        &[&m.inc],
    )
    .unwrap();
}

#[test]
fn claims_move_the_epoch_and_a_live_owner_keeps_its_document() {
    let (_pg, mut c) = fresh();
    on_pg(&mut c, |db| {
        documents::create(db, "doc_1", "usr_a", "T", None, 1)
    })
    .unwrap();
    let a = cluster::register(&mut c, "node-a", "10.0.0.1:9000", TTL).unwrap();
    let b = cluster::register(&mut c, "node-b", "10.0.0.2:9000", TTL).unwrap();
    let first = ownership::claim(&mut c, "doc_1", &a)
        .unwrap()
        .expect("free document");
    assert_eq!(first.epoch, 1);
    let again = ownership::claim(&mut c, "doc_1", &a)
        .unwrap()
        .expect("its own");
    assert_eq!(
        again.epoch,
        first.epoch + 1,
        "claiming one's own again fences the older claim"
    );
    assert!(
        !ownership::release(&mut c, "doc_1", &a, first.epoch).unwrap(),
        "the older claim's release changes nothing"
    );
    let first = again;
    assert_eq!(
        ownership::claim(&mut c, "doc_1", &b).unwrap(),
        None,
        "a live owner keeps it"
    );
    assert_eq!(
        ownership::owner(&mut c, "doc_1").unwrap().unwrap().node_id,
        "node-a"
    );
    // Released (graceful hand-off): the epoch moves, b claims at once.
    assert!(ownership::release(&mut c, "doc_1", &a, first.epoch).unwrap());
    assert!(
        !ownership::release(&mut c, "doc_1", &a, first.epoch).unwrap(),
        "only once"
    );
    let second = ownership::claim(&mut c, "doc_1", &b).unwrap().unwrap();
    assert_eq!(second.epoch, first.epoch + 2, "released (+1), claimed (+1)");
    // b expires: a claims over it.
    expire(&mut c, &b);
    assert!(ownership::owner(&mut c, "doc_1").unwrap().is_none());
    assert_eq!(
        ownership::claim(&mut c, "doc_1", &a)
            .unwrap()
            .unwrap()
            .epoch,
        second.epoch + 1
    );
    assert!(matches!(
        ownership::claim(&mut c, "doc_404", &a),
        Err(StorageError::DocNotFound(_))
    ));
}

#[test]
fn a_stale_epoch_write_changes_nothing() {
    let (_pg, mut c) = fresh();
    on_pg(&mut c, |db| {
        documents::create(db, "doc_1", "usr_a", "T", None, 1)
    })
    .unwrap();
    let a = cluster::register(&mut c, "node-a", "a", TTL).unwrap();
    let b = cluster::register(&mut c, "node-b", "b", TTL).unwrap();
    let old = ownership::claim(&mut c, "doc_1", &a).unwrap().unwrap();
    apply(&mut c, &write("doc_1", 0, "blk_1", "by a"), old.epoch).unwrap();
    // a pauses past its TTL; b takes over and writes.
    expire(&mut c, &a);
    let new = ownership::claim(&mut c, "doc_1", &b).unwrap().unwrap();
    assert_eq!(new.head_seq, 1, "the claim sees every write before it");
    apply(&mut c, &write("doc_1", 1, "blk_2", "by b"), new.epoch).unwrap();
    let before = fingerprint(&mut c);
    // a wakes up and writes with its old epoch: at the head it believes, and at the real one.
    for expect in [1, 2] {
        let err = apply(&mut c, &write("doc_1", expect, "blk_3", "stale"), old.epoch).unwrap_err();
        assert!(
            matches!(err, StorageError::NotOwner { epoch, .. } if epoch == old.epoch),
            "{err}"
        );
    }
    assert_eq!(
        fingerprint(&mut c),
        before,
        "a stale owner's write changed the database"
    );
    // A head mismatch is told apart from a lost fence.
    let err = apply(&mut c, &write("doc_1", 0, "blk_4", "late"), new.epoch).unwrap_err();
    assert!(matches!(err, StorageError::HeadMismatch { .. }), "{err}");
    // Epochs never go down along the log.
    let epochs: Vec<i64> = c
        .query(
            "SELECT epoch FROM doc_ops WHERE doc_id = 'doc_1' ORDER BY seq",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(epochs, vec![old.epoch, new.epoch]);
    let state = on_pg(&mut c, |db| documents::load(db, "doc_1")).unwrap();
    assert_eq!(state.head_seq, 2);
    assert_eq!(state.block_count(), 2);
}

#[test]
fn a_claim_racing_a_stale_owners_write_never_lets_both_win() {
    let pg = TempPostgres::start();
    let mut c = pg.client();
    migrate::apply(&mut c).unwrap();
    let (mut writer, mut claimer) = (pg.client(), pg.client());
    let (mut stale_first, mut claim_first) = (0, 0);
    for round in 0..60 {
        let doc = format!("doc_{round}");
        on_pg(&mut c, |db| {
            documents::create(db, &doc, "usr_a", "T", None, 1)
        })
        .unwrap();
        let a = cluster::register(&mut c, "node-a", "a", TTL).unwrap();
        let b = cluster::register(&mut c, "node-b", "b", TTL).unwrap();
        let old = ownership::claim(&mut c, &doc, &a).unwrap().unwrap();
        expire(&mut c, &a);
        let barrier = Arc::new(Barrier::new(2));
        let w = write(&doc, 0, &format!("blk_{round}"), "stale?");
        let (bw, bc) = (barrier.clone(), barrier.clone());
        let (d1, d2) = (doc.clone(), doc.clone());
        let (wrote, claimed) = std::thread::scope(|s| {
            let t1 = s.spawn(|| {
                bw.wait();
                apply(&mut writer, &w, old.epoch)
            });
            let t2 = s.spawn(|| {
                bc.wait();
                ownership::claim(&mut claimer, &d2, &b)
            });
            (t1.join().unwrap(), t2.join().unwrap())
        });
        let claim = claimed
            .unwrap()
            .expect("the expired owner's document is claimable");
        match wrote {
            // The write committed first: the claim must have seen it.
            Ok(()) => {
                stale_first += 1;
                assert_eq!(claim.head_seq, 1, "round {round}: the stale write landed but the claim did not see it (it landed after the claim)");
            }
            Err(StorageError::NotOwner { .. }) => {
                claim_first += 1;
                assert_eq!(claim.head_seq, 0, "round {round}");
            }
            Err(e) => panic!("round {round}: {e}"),
        }
        // Either way the log has the write only at the old epoch, and only if it won.
        let n: i64 = c
            .query_one(
                "SELECT count(*) FROM doc_ops WHERE doc_id = $1 AND epoch >= $2",
                &[&d1, &claim.epoch],
            )
            .unwrap()
            .get(0);
        assert_eq!(
            n, 0,
            "round {round}: an entry at or above the new epoch that the new owner never wrote"
        );
    }
    eprintln!("stale write first: {stale_first}, claim first: {claim_first}");
    assert_eq!(stale_first + claim_first, 60);
}

#[test]
fn an_expired_incarnation_never_renews_and_the_start_refuses_unsafe_settings() {
    let (_pg, mut c) = fresh();
    let a = cluster::register(&mut c, "node-a", "a", TTL).unwrap();
    assert!(cluster::renew(&mut c, &a, TTL).unwrap());
    expire(&mut c, &a);
    assert!(
        !cluster::renew(&mut c, &a, TTL).unwrap(),
        "it must fence itself and register anew"
    );
    assert!(cluster::live(&mut c).unwrap().is_empty());
    let again = cluster::register(&mut c, "node-a", "a", TTL).unwrap();
    assert_ne!(again.inc, a.inc);
    cluster::end(&mut c, &again, false).unwrap();
    assert!(cluster::live(&mut c).unwrap().is_empty());

    check_settings(&mut c).expect("fsync and synchronous_commit on");
    c.batch_execute("SET synchronous_commit = off").unwrap();
    let err = check_settings(&mut c).unwrap_err();
    assert!(err.to_string().starts_with("synchronous_commit:"), "{err}");
    assert!(migrate::is_current(&mut c).unwrap());
}

/// The next notification `listener` hears (bounded: a missing one fails the test).
fn next_notification(listener: &mut Client) -> postgres::Notification {
    listener
        .notifications()
        .timeout_iter(Duration::from_secs(10))
        .next()
        .unwrap()
        .expect("a notification within 10 s")
}

/// A change of anything rights depend on moves the access epoch in the same transaction and
/// announces it to every listening node; an edit of a document's text does not.
#[test]
fn rights_changes_move_the_access_epoch_and_notify() {
    let (pg, mut c) = fresh();
    let mut listener = pg.client();
    listener.batch_execute("LISTEN docsync_access").unwrap();
    let epoch = |c: &mut Client| -> i64 {
        c.query_one("SELECT n FROM access_epoch", &[])
            .unwrap()
            .get(0)
    };
    c.batch_execute(
        "INSERT INTO users (id, name, display_name, created_at) VALUES ('usr_a', 'a', 'A', 0), ('usr_b', 'b', 'B', 0)",
    )
    .unwrap();
    on_pg(&mut c, |db| {
        documents::create(db, "doc_1", "usr_a", "T", None, 1)
    })
    .unwrap();
    let before = epoch(&mut c);
    c.batch_execute(
        "INSERT INTO doc_shares (doc_id, user_id, access) VALUES ('doc_1', 'usr_b', 'read')",
    )
    .unwrap();
    assert_eq!(epoch(&mut c), before + 1);
    let note = next_notification(&mut listener);
    assert_eq!(note.channel(), "docsync_access");
    // The head, the title and a claim are not rights.
    let me = cluster::register(&mut c, "node-a", "a", TTL).unwrap();
    let claim = ownership::claim(&mut c, "doc_1", &me).unwrap().unwrap();
    apply(&mut c, &write("doc_1", 0, "blk_1", "text"), claim.epoch).unwrap();
    assert_eq!(epoch(&mut c), before + 1);
    c.batch_execute("UPDATE documents SET trashed_at = 5 WHERE id = 'doc_1'")
        .unwrap();
    assert_eq!(epoch(&mut c), before + 2, "the trash is a right");
}

/// Accounts behave as on SQLite: names unique whatever their case, tokens and sessions
/// found by their secret only (stored hashed), a new password ends every session, a
/// session ends by the clock or by logout, a client ID stays with its first user.
#[test]
fn accounts_tokens_sessions_and_client_ids() {
    use crate::storage::accounts as acc;
    let (_pg, mut c) = fresh();
    let ann = on_pg(&mut c, |db| acc::create_user(db, "Ann", "Ann A.", false, 1)).unwrap();
    assert!(matches!(
        on_pg(&mut c, |db| acc::create_user(db, "ANN", "x", false, 1)),
        Err(StorageError::Conflict(_))
    ));
    assert_eq!(
        on_pg(&mut c, |db| acc::user_by_name(db, "aNN")).unwrap(),
        Some(ann.clone())
    );
    assert_eq!(
        on_pg(&mut c, |db| acc::user_by_id(db, &ann.id)).unwrap(),
        Some(ann.clone())
    );
    let bob = on_pg(&mut c, |db| acc::create_user(db, "bob", "Bob", true, 1)).unwrap();

    let (tid, secret) = on_pg(&mut c, |db| {
        acc::create_token_with_id(db, &ann.id, "laptop", acc::Scope::Write, Some(50), 5)
    })
    .unwrap();
    assert_eq!(
        on_pg(&mut c, |db| acc::user_by_token(db, &secret, 49)).unwrap(),
        Some((ann.clone(), acc::Scope::Write, Some(50)))
    );
    assert_eq!(
        on_pg(&mut c, |db| acc::user_by_token(db, &secret, 50)).unwrap(),
        None,
        "expired"
    );
    let relabelled = secret.replacen("dsw_", "dsa_", 1);
    assert_eq!(
        on_pg(&mut c, |db| acc::user_by_token(db, &relabelled, 10)).unwrap(),
        None,
        "a scope is not the bearer's to change"
    );
    assert_eq!(
        on_pg(&mut c, |db| acc::user_by_token(db, "dst_nope", 10)).unwrap(),
        None
    );
    let stored: i64 = c
        .query_one(
            "SELECT count(*) FROM api_tokens WHERE token_hash = $1",
            &[&secret],
        )
        .unwrap()
        .get(0);
    assert_eq!(stored, 0, "the secret itself is never stored");
    assert_eq!(
        on_pg(&mut c, |db| acc::list_tokens(db, &ann.id)).unwrap()[0].label,
        "laptop"
    );
    assert!(
        !on_pg(&mut c, |db| acc::delete_token(db, &bob.id, &tid)).unwrap(),
        "only one's own"
    );
    assert!(on_pg(&mut c, |db| acc::delete_token(db, &ann.id, &tid)).unwrap());
    assert_eq!(
        on_pg(&mut c, |db| acc::user_by_token(db, &secret, 10)).unwrap(),
        None
    );

    let s1 = on_pg(&mut c, |db| {
        acc::create_login_session(db, &ann.id, 100, 50, "test")
    })
    .unwrap();
    assert_eq!(
        on_pg(&mut c, |db| acc::user_by_session_until(db, &s1, 149)).unwrap(),
        Some((ann.clone(), 150))
    );
    assert_eq!(
        on_pg(&mut c, |db| acc::user_by_session_until(db, &s1, 150)).unwrap(),
        None,
        "ended by the clock"
    );
    let s2 = on_pg(&mut c, |db| {
        acc::create_login_session(db, &ann.id, 100, 1_000, "test")
    })
    .unwrap();
    on_pg(&mut c, |db| {
        acc::set_password_hash(db, &ann.id, "$argon2id$phc")
    })
    .unwrap();
    assert_eq!(
        on_pg(&mut c, |db| acc::user_by_session_until(db, &s2, 101)).unwrap(),
        None,
        "a new password ends sessions"
    );
    assert_eq!(
        on_pg(&mut c, |db| acc::login_record(db, "ann"))
            .unwrap()
            .unwrap()
            .1
            .as_deref(),
        Some("$argon2id$phc")
    );
    let s3 = on_pg(&mut c, |db| {
        acc::create_login_session(db, &ann.id, 100, 1_000, "test")
    })
    .unwrap();
    assert!(on_pg(&mut c, |db| acc::end_login_session(db, &s3)).unwrap());
    assert!(!on_pg(&mut c, |db| acc::end_login_session(db, &s3)).unwrap());
    assert!(matches!(
        on_pg(&mut c, |db| acc::set_password_hash(db, "usr_none", "x")),
        Err(StorageError::NotFound(_))
    ));

    assert_eq!(
        on_pg(&mut c, |db| crate::storage::clients::owner(db, "cl_1")).unwrap(),
        None
    );
    assert_eq!(
        on_pg(&mut c, |db| crate::storage::clients::claim(
            db, "cl_1", &ann.id, 1
        ))
        .unwrap(),
        ann.id
    );
    assert_eq!(
        on_pg(&mut c, |db| crate::storage::clients::claim(
            db, "cl_1", &bob.id, 2
        ))
        .unwrap(),
        ann.id
    );
}

/// Graceful hand-off: a leaving node releases all its documents at once (each epoch moves,
/// another node claims them immediately); one node at a time holds the compaction lock, and a
/// node that goes away lets go of it.
#[test]
fn a_leaving_node_hands_everything_off_and_one_node_compacts_at_a_time() {
    let (pg, mut c) = fresh();
    let a = cluster::register(&mut c, "node-a", "a", TTL).unwrap();
    let b = cluster::register(&mut c, "node-b", "b", TTL).unwrap();
    for d in ["doc_1", "doc_2", "doc_3"] {
        on_pg(&mut c, |db| documents::create(db, d, "usr_a", "T", None, 1)).unwrap();
    }
    let e1 = ownership::claim(&mut c, "doc_1", &a)
        .unwrap()
        .unwrap()
        .epoch;
    ownership::claim(&mut c, "doc_2", &a).unwrap().unwrap();
    ownership::claim(&mut c, "doc_3", &b).unwrap().unwrap();
    let mut gone = ownership::release_all(&mut c, &a).unwrap();
    gone.sort();
    assert_eq!(gone, vec!["doc_1", "doc_2"]);
    // a is still alive, yet b claims its former documents at once.
    let taken = ownership::claim(&mut c, "doc_1", &b)
        .unwrap()
        .expect("released");
    assert_eq!(taken.epoch, e1 + 2);
    let err = apply(&mut c, &write("doc_1", 0, "blk_1", "late"), e1).unwrap_err();
    assert!(matches!(err, StorageError::NotOwner { .. }), "{err}");

    let (mut n1, mut n2) = (pg.client(), pg.client());
    assert!(ownership::try_lock_compaction(&mut n1).unwrap());
    assert!(
        !ownership::try_lock_compaction(&mut n2).unwrap(),
        "one node at a time"
    );
    ownership::unlock_compaction(&mut n1).unwrap();
    assert!(ownership::try_lock_compaction(&mut n2).unwrap());
    drop(n2); // the node went away mid-pass
    let mut n3 = pg.client();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !ownership::try_lock_compaction(&mut n3).unwrap() {
        assert!(
            std::time::Instant::now() < deadline,
            "the lock outlived its connection"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A crashed node is dead at once: its presence lock went with its connection, so its
/// documents are claimable long before its TTL. A paused node (connection open, lock held)
/// keeps them until its TTL runs out.
#[test]
fn a_node_whose_presence_connection_closed_is_dead_at_once() {
    const LONG: Duration = Duration::from_secs(30);
    let (pg, mut c) = fresh();
    on_pg(&mut c, |db| {
        documents::create(db, "doc_1", "usr_a", "T", None, 1)
    })
    .unwrap();
    let mut presence = pg.client();
    let a = cluster::register_present(&mut presence, "node-a", "10.0.0.1:9000", LONG).unwrap();
    let b = cluster::register(&mut c, "node-b", "10.0.0.2:9000", LONG).unwrap();
    ownership::claim(&mut c, "doc_1", &a)
        .unwrap()
        .expect("free");
    assert_eq!(
        ownership::claim(&mut c, "doc_1", &b).unwrap(),
        None,
        "present and unexpired: kept"
    );
    assert_eq!(
        ownership::owner(&mut c, "doc_1").unwrap().map(|o| o.inc),
        Some(a.inc.clone())
    );
    assert!(cluster::live(&mut c).unwrap().contains(&a));
    // The process dies: the kernel closes its sockets.
    drop(presence);
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let taken = loop {
        if let Some(claim) = ownership::claim(&mut c, "doc_1", &b).unwrap() {
            break claim;
        }
        // The server notices the closed socket within moments; the TTL is 30 s.
        assert!(std::time::Instant::now() < deadline, "never claimable");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(taken.epoch, 2);
    assert!(!cluster::live(&mut c).unwrap().contains(&a));
}

/// Reachability: one node that cannot reach another evicts nobody; a majority of the other
/// live nodes does — the suspect's renewal fails and its document can be claimed. Old
/// reports do not count, and a node alone in saying so stays in the minority.
#[test]
fn a_majority_that_cannot_reach_a_node_evicts_it_and_a_minority_does_not() {
    use super::reachability;
    let (pg, mut c) = fresh();
    let mut listener = pg.client();
    listener.batch_execute("LISTEN docsync_nodes").unwrap();
    let mut heard = move || -> String {
        let note = next_notification(&mut listener);
        assert_eq!(note.channel(), "docsync_nodes");
        note.payload().to_string()
    };
    let a = cluster::register(&mut c, "node-a", "a", TTL).unwrap();
    let b = cluster::register(&mut c, "node-b", "b", TTL).unwrap();
    let n = cluster::register(&mut c, "node-c", "c", TTL).unwrap();
    on_pg(&mut c, |db| {
        documents::create(db, "doc_r", "usr_a", "R", None, 1)
    })
    .unwrap();
    assert!(ownership::claim(&mut c, "doc_r", &n).unwrap().is_some());

    let suspect = |c: &mut Client, by: &Member, who: &Member| -> bool {
        on_pg(c, |db| reachability::suspect(db, by, &who.inc, TTL)).unwrap()
    };
    // The live others of `me` (sorted), and those of them to try at once.
    let peers = |c: &mut Client, me: &Member, doubted: &[String]| -> (Vec<String>, Vec<String>) {
        let mut found = on_pg(c, |db| reachability::peers(db, me, TTL, doubted)).unwrap();
        found.sort_by(|x, y| x.member.node_id.cmp(&y.member.node_id));
        let names = |ps: &mut dyn Iterator<Item = &reachability::Peer>| -> Vec<String> {
            ps.map(|p| p.member.node_id.clone()).collect()
        };
        (
            names(&mut found.iter()),
            names(&mut found.iter().filter(|p| p.wanted)),
        )
    };
    let suspects = |c: &mut Client, me: &Member, doubted: &[String]| -> Vec<String> {
        peers(c, me, doubted).1
    };

    // Every node tries every other live one now and then: all are listed, none wanted.
    assert_eq!(
        peers(&mut c, &b, &[]),
        (vec!["node-a".to_string(), "node-c".to_string()], vec![])
    );
    // A doubt is only news: every node hears whom to try, nothing is recorded.
    on_pg(&mut c, |db| reachability::doubt(db, &n.inc)).unwrap();
    assert_eq!(heard(), n.inc);
    assert!(suspects(&mut c, &b, &[]).is_empty());
    assert_eq!(
        suspects(&mut c, &b, std::slice::from_ref(&n.inc)),
        vec!["node-c"]
    );
    assert!(
        suspects(&mut c, &n, std::slice::from_ref(&n.inc)).is_empty(),
        "not itself"
    );

    // One of two others: not enough. The other one is told whom to try (by notification
    // too, to try at once).
    assert!(!suspect(&mut c, &a, &n));
    assert_eq!(heard(), n.inc);
    assert!(cluster::renew(&mut c, &n, TTL).unwrap());
    assert_eq!(suspects(&mut c, &b, &[]), vec!["node-c".to_string()]);
    assert_eq!(
        suspects(&mut c, &b, std::slice::from_ref(&a.inc)),
        vec!["node-a".to_string(), "node-c".to_string()]
    );
    assert!(ownership::claim(&mut c, "doc_r", &a).unwrap().is_none());
    // An old report does not count with a new one.
    c.execute(
        "UPDATE node_suspicions SET at = now() - interval '1 minute' WHERE by_inc = $1",
        &[&a.inc],
    )
    .unwrap();
    assert!(!suspect(&mut c, &b, &n));
    assert_eq!(heard(), n.inc);
    assert!(cluster::renew(&mut c, &n, TTL).unwrap());
    // Both others, within the TTL: evicted, and every node hears it (with no one to try).
    // It cannot renew; its document is free.
    assert!(suspect(&mut c, &a, &n));
    assert_eq!(heard(), "");
    assert!(
        !cluster::renew(&mut c, &n, TTL).unwrap(),
        "it must fence itself"
    );
    assert!(ownership::claim(&mut c, "doc_r", &a).unwrap().is_some());
    assert_eq!(
        peers(&mut c, &b, &[]).0,
        vec!["node-a".to_string()],
        "an evicted node is tried no more"
    );

    // The node joins again, cut off from both others: alone it evicts neither.
    let n2 = cluster::register(&mut c, "node-c", "c", TTL).unwrap();
    assert!(!suspect(&mut c, &n2, &a));
    assert!(!suspect(&mut c, &n2, &b));
    assert!(cluster::renew(&mut c, &a, TTL).unwrap());
    assert!(cluster::renew(&mut c, &b, TTL).unwrap());
}
