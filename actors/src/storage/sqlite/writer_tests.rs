//! The writer on a real (temporary) database, through its public surface only
//! (`Writer::start`, `call`, `documents::apply_write`): group commit, answers only after the
//! commit, a failed job undone alone, and a write on a stale head refused with nothing
//! written. Nothing here waits on time: the writer is held by a job that blocks on a
//! channel until the test has queued what it wants behind it.

use std::sync::mpsc;
use std::sync::Arc;

use futures::executor::block_on;
use futures::future::join_all;
use rusqlite::{params, Connection, OpenFlags};

use super::Writer;
use crate::collab::block::Block;
use crate::collab::op::LogEntry;
use crate::metrics::Metrics;
use crate::storage::accounts;
use crate::storage::documents::{self, DocWrite};
use crate::storage::error::StorageError;
use crate::storage::log::LogRecord;
use crate::storage::sqlite::migrate;
use crate::storage::Db as On;

struct Db {
    dir: tempfile::TempDir,
}

impl Db {
    fn new() -> Db {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut c = Connection::open(dir.path().join("w.db")).unwrap();
        c.execute_batch("PRAGMA journal_mode = WAL;").unwrap();
        migrate::apply(&mut c).unwrap();
        c.execute_batch("CREATE TABLE jobs (n INTEGER PRIMARY KEY);")
            .unwrap();
        Db { dir }
    }

    fn conn(&self) -> Connection {
        Connection::open(self.dir.path().join("w.db")).unwrap()
    }

    /// A second connection, read-only: sees only what was committed.
    fn reader(&self) -> Connection {
        Connection::open_with_flags(
            self.dir.path().join("w.db"),
            OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .unwrap()
    }

    fn start(&self, max_batch: usize) -> (Writer, Arc<Metrics>) {
        let metrics = Arc::new(Metrics::new());
        let (w, _thread) = Writer::start(self.conn(), max_batch, Some(metrics.clone()));
        (w, metrics)
    }
}

fn committed_jobs(r: &Connection) -> Vec<i64> {
    let mut s = r.prepare("SELECT n FROM jobs ORDER BY n").unwrap();
    s.query_map([], |row| row.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

/// Queues a job that holds the writer until `release` is sent; returns once it runs (its
/// batch is closed: everything queued from now on waits for the next transaction).
fn hold_writer(w: &Writer) -> (mpsc::Sender<()>, impl std::future::Future<Output = ()>) {
    let (running_tx, running) = mpsc::channel();
    let (release, released) = mpsc::channel::<()>();
    let held = w.call(move |_c| {
        running_tx.send(()).unwrap();
        released.recv().unwrap();
        Ok(())
    });
    running.recv().expect("the holding job runs");
    (release, async move { held.await.expect("holding job") })
}

#[test]
fn jobs_queued_together_commit_in_one_transaction_and_each_is_answered_after_it() {
    let db = Db::new();
    let (w, metrics) = db.start(64);
    let (release, held) = hold_writer(&w);
    // Eight writes queued while the writer is busy: one group, one commit.
    let reader = Arc::new(std::sync::Mutex::new(db.reader()));
    let acks: Vec<_> = (1..=8i64)
        .map(|n| {
            let reader = reader.clone();
            let ack = w.call(move |c| {
                c.execute("INSERT INTO jobs (n) VALUES (?1)", [n])?;
                Ok(n)
            });
            async move {
                let got = ack.await.expect("job answered");
                // The answer comes after the commit: another connection sees the row.
                let seen = committed_jobs(&reader.lock().unwrap());
                (got, seen.contains(&n))
            }
        })
        .collect();
    assert!(
        committed_jobs(&db.reader()).is_empty(),
        "nothing commits while the writer is held"
    );
    release.send(()).unwrap();
    block_on(held);
    let answers = block_on(join_all(acks));
    assert_eq!(
        answers,
        (1..=8).map(|n| (n, true)).collect::<Vec<_>>(),
        "every job answered with its own value, each after its commit"
    );
    assert_eq!(committed_jobs(&db.reader()), (1..=8).collect::<Vec<_>>());
    // Two transactions: the holding job alone, then all eight together.
    assert_eq!(metrics.commit_jobs.get_sample_count(), 2);
    assert_eq!(metrics.commit_jobs.get_sample_sum(), 9.0);
}

#[test]
fn a_group_is_cut_at_max_batch_and_keeps_the_order() {
    let db = Db::new();
    let (w, metrics) = db.start(4);
    let (release, held) = hold_writer(&w);
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let acks: Vec<_> = (1..=10i64)
        .map(|n| {
            let order = order.clone();
            w.call(move |c| {
                c.execute("INSERT INTO jobs (n) VALUES (?1)", [n])?;
                order.lock().unwrap().push(n);
                Ok(())
            })
        })
        .collect();
    release.send(()).unwrap();
    block_on(held);
    for a in block_on(join_all(acks)) {
        a.expect("answered");
    }
    assert_eq!(*order.lock().unwrap(), (1..=10).collect::<Vec<_>>());
    // [hold], [1..4], [5..8], [9, 10]
    assert_eq!(metrics.commit_jobs.get_sample_count(), 4);
    assert_eq!(metrics.commit_jobs.get_sample_sum(), 11.0);
}

#[test]
fn a_failed_job_is_undone_alone_and_its_group_commits() {
    let db = Db::new();
    let (w, metrics) = db.start(64);
    let (release, held) = hold_writer(&w);
    let a = w.call(|c| Ok(c.execute("INSERT INTO jobs (n) VALUES (1)", [])?));
    let bad = w.call(|c| {
        c.execute("INSERT INTO jobs (n) VALUES (2)", [])?;
        // A second row with the same key: the job fails after writing a row of its own.
        c.execute("INSERT INTO jobs (n) VALUES (2)", [])?;
        Ok(())
    });
    let b = w.call(|c| Ok(c.execute("INSERT INTO jobs (n) VALUES (3)", [])?));
    release.send(()).unwrap();
    block_on(held);
    assert_eq!(block_on(a).expect("first"), 1);
    assert!(
        matches!(block_on(bad), Err(StorageError::Sqlite(_))),
        "the failing job gets its own error"
    );
    assert_eq!(block_on(b).expect("third"), 1);
    assert_eq!(committed_jobs(&db.reader()), vec![1, 3]);
    assert_eq!(metrics.commit_jobs.get_sample_count(), 2);
}

fn record(seq: i64, op_id: &str, user: &str) -> Arc<LogRecord> {
    Arc::new(LogRecord::from_entry(&LogEntry {
        seq,
        op_id: op_id.into(),
        kind: "insert".into(),
        client_id: "cl_t".into(),
        user_id: user.into(),
        at: 1_000 + seq,
        effects: Vec::new(),
    }))
}

/// `(head_seq, blocks, log rows, results)` of a document, as committed.
fn doc_rows(r: &Connection, doc: &str) -> (i64, Vec<(String, String)>, i64, i64) {
    let head = r
        .query_row("SELECT head_seq FROM documents WHERE id = ?1", [doc], |x| {
            x.get(0)
        })
        .unwrap();
    let mut s = r
        .prepare("SELECT id, content FROM blocks WHERE doc_id = ?1 ORDER BY id")
        .unwrap();
    let blocks = s
        .query_map([doc], |x| Ok((x.get(0)?, x.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let count = |sql: &str| r.query_row(sql, params![doc], |x| x.get(0)).unwrap();
    (
        head,
        blocks,
        count("SELECT count(*) FROM doc_ops WHERE doc_id = ?1"),
        count("SELECT count(*) FROM doc_op_results WHERE doc_id = ?1"),
    )
}

#[test]
fn a_write_on_a_stale_head_is_refused_and_writes_nothing() {
    let db = Db::new();
    let (w, _) = db.start(64);
    let user = w
        .call_blocking(|c| {
            let u = accounts::create_user(&mut On::Sqlite(c), "ann", "Ann", false, 0)?;
            documents::create(&mut On::Sqlite(c), "doc_h", &u.id, "Head", None, 0)?;
            Ok(u.id)
        })
        .expect("seed");
    let write = |expect_head: i64, block: &str, op: &str| DocWrite {
        doc_id: "doc_h".into(),
        expect_head,
        head_after: expect_head + 1,
        title: None,
        blocks: vec![Arc::new(Block::new(
            block.into(),
            None,
            "a0".into(),
            format!("text of {op}"),
            1_000,
            &user,
        ))],
        purged: Vec::new(),
        tags: Default::default(),
        log: vec![record(expect_head + 1, op, &user)],
        results: vec![(op.into(), format!("{{\"opId\":\"{op}\"}}"))],
        now: 1_000,
    };
    let first = write(0, "blk_1", "op_1");
    w.call_blocking(move |c| documents::apply_write(&mut On::Sqlite(c), &first, 0))
        .expect("a write on the current head lands");
    let r = db.reader();
    let after_first = doc_rows(&r, "doc_h");
    assert_eq!(
        after_first,
        (1, vec![("blk_1".into(), "text of op_1".into())], 1, 1)
    );

    // Computed on head 0 again (a state that is no longer the database's): refused whole,
    // in the same group as a write that is fine (which still commits).
    let (release, held) = hold_writer(&w);
    let stale = write(0, "blk_2", "op_2");
    let refused = w.call(move |c| documents::apply_write(&mut On::Sqlite(c), &stale, 0));
    let other = w.call(|c| Ok(c.execute("INSERT INTO jobs (n) VALUES (7)", [])?));
    release.send(()).unwrap();
    block_on(held);
    match block_on(refused) {
        Err(StorageError::HeadMismatch { doc, expected }) => {
            assert_eq!((doc.as_str(), expected), ("doc_h", 0))
        }
        other => panic!("expected HeadMismatch, got {other:?}"),
    }
    block_on(other).expect("the rest of the group commits");
    assert_eq!(
        doc_rows(&r, "doc_h"),
        after_first,
        "nothing of the refused write"
    );
    assert_eq!(committed_jobs(&r), vec![7]);

    // A head from the future is just as stale.
    let ahead = write(5, "blk_3", "op_3");
    assert!(matches!(
        w.call_blocking(move |c| documents::apply_write(&mut On::Sqlite(c), &ahead, 0)),
        Err(StorageError::HeadMismatch { .. })
    ));
    assert_eq!(doc_rows(&r, "doc_h"), after_first);
    // The next write on the real head goes through.
    let next = write(1, "blk_2", "op_2");
    w.call_blocking(move |c| documents::apply_write(&mut On::Sqlite(c), &next, 0))
        .expect("current head");
    assert_eq!(doc_rows(&r, "doc_h").0, 2);
}
