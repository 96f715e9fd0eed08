//! The feed's numbering where it can go wrong: on PostgreSQL two writers commit in the
//! other order than they appended (two nodes); a reader past the later one must still get
//! the earlier one. And a page cut over SQLite: passed-over rows move the cursor, a
//! document whose entries compaction took is one resync, the scan budget answers `more`.

use std::sync::Arc;

use rusqlite::Connection;

use super::{page, postgres as pg_rows, FeedItem};
use crate::collab::op::{Effect, LogEntry};
use crate::storage::db::Db;
use crate::storage::log::LogRecord;
use crate::storage::postgres::migrate as pg_migrate;
use crate::storage::postgres::testing::TempPostgres;

#[test]
fn a_later_commit_of_an_earlier_append_is_numbered_after_what_was_read() {
    let pg = TempPostgres::start();
    pg_migrate::apply(&mut pg.client()).unwrap();
    let mut first = pg.client();
    let mut second = pg.client();
    let mut reader = pg.client();
    // Node one appends first but has not committed; node two appends after it and commits.
    let mut t1 = first.transaction().unwrap();
    t1.execute("INSERT INTO feed (doc_id, seq) VALUES ('doc_one', 1)", &[])
        .unwrap();
    second
        .execute("INSERT INTO feed (doc_id, seq) VALUES ('doc_two', 1)", &[])
        .unwrap();
    let number = |c: &mut postgres::Client| {
        let mut t = c.transaction().unwrap();
        let n = pg_rows::number_committed(&mut t, 100).unwrap();
        t.commit().unwrap();
        n
    };
    assert_eq!(number(&mut reader), 1, "only what committed is numbered");
    let seen = pg_rows::rows_after(&mut reader, 0, 10).unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!((seen[0].doc_id.as_str(), seen[0].pos), ("doc_two", 1));
    // Node one commits now: its entry comes after the cursor the reader holds.
    t1.commit().unwrap();
    assert_eq!(number(&mut reader), 1);
    let next = pg_rows::rows_after(&mut reader, seen[0].pos, 10).unwrap();
    assert_eq!(
        next.len(),
        1,
        "the earlier append is not lost behind the cursor"
    );
    assert_eq!((next[0].doc_id.as_str(), next[0].pos), ("doc_one", 2));
    assert_eq!(pg_rows::head(&mut reader).unwrap(), 2);
}

fn sqlite() -> Connection {
    let mut c = Connection::open_in_memory().unwrap();
    crate::storage::sqlite::migrate::apply(&mut c).unwrap();
    c
}

fn log(c: &Connection, doc: &str, seq: i64, with_entry: bool) {
    let rec = LogRecord::from_entry(&LogEntry {
        seq,
        op_id: format!("op_{doc}_{seq}"),
        kind: "set_title".into(),
        client_id: "cl_t".into(),
        user_id: "usr_t".into(),
        at: seq,
        effects: vec![Effect::Title {
            title: format!("t{seq}"),
            title_version: seq,
        }],
    });
    crate::storage::log::sqlite::insert(c, doc, &[Arc::new(rec)]).unwrap();
    if !with_entry {
        c.execute(
            "DELETE FROM doc_ops WHERE doc_id = ?1 AND seq = ?2",
            rusqlite::params![doc, seq],
        )
        .unwrap();
    }
}

#[test]
fn a_page_passes_over_what_the_caller_may_not_read_and_resyncs_once() {
    let c = sqlite();
    // doc_gone: entries 1-3 taken by compaction; doc_hidden: not the caller's.
    for seq in 1..=3 {
        log(&c, "doc_gone", seq, false);
        log(&c, "doc_hidden", seq, true);
    }
    log(&c, "doc_mine", 1, true);
    let mut db = Db::Sqlite(&c);
    let mut asked = Vec::new();
    let p = page(&mut db, 0, 100, 1_000, |_, d| {
        asked.push(d.to_string());
        Ok(d != "doc_hidden")
    })
    .unwrap();
    assert_eq!(
        asked,
        ["doc_gone", "doc_hidden", "doc_mine"],
        "asked once per document"
    );
    assert_eq!(p.entries.len(), 2, "{p:?}");
    assert!(matches!(&p.entries[0], FeedItem::Resync(r) if r.doc_id == "doc_gone"));
    assert!(
        matches!(&p.entries[1], FeedItem::Entry(e) if e.doc_id == "doc_mine" && e.block_id.is_none())
    );
    assert_eq!(p.cursor, "7", "past every row looked at");
    assert!(!p.more);

    // A scan budget of 4 rows: an answer at once, `more`, and the rest from its cursor.
    let p = page(&mut db, 0, 100, 4, |_, d| Ok(d == "doc_mine")).unwrap();
    assert!(p.entries.is_empty() && p.more && p.cursor == "4", "{p:?}");
    let p = page(&mut db, 4, 100, 4, |_, d| Ok(d == "doc_mine")).unwrap();
    assert_eq!(p.entries.len(), 1);
    assert!(!p.more);
}
