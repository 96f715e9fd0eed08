//! Cluster mode's view of the access epoch: every node follows the database's counter
//! (moved by triggers in the same transaction as any change of rights, migration 0002) so
//! that a right revoked through one node ends streams and cached decisions on every node. A
//! dedicated connection `LISTEN`s to `docsync_access` — a notification means "read the
//! counter now" — and reads it every `poll` besides, because a notification sent while the
//! connection was down is never delivered. The same connection `LISTEN`s to `docsync_feed`,
//! sent by every write that logged entries, and wakes this node's feed readers (`FeedHead`);
//! and to `docsync_nodes`, what nodes say of each other (`NodeNews`). What it reads goes to the same `AccessEpoch` the
//! SQLite writer feeds, so nothing downstream knows the difference.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, NoTls};

use crate::storage::access_epoch::AccessEpoch;
use crate::storage::cluster::node_news::{NodeNews, NODES_CHANNEL};
use crate::storage::feed::head::{FeedHead, FEED_CHANNEL};
use crate::storage::postgres::node_config;

fn read(c: &mut Client) -> Result<u64, postgres::Error> {
    let n: i64 = c
        .query_one("SELECT n FROM access_epoch WHERE id = 1", &[])?
        .get(0);
    Ok(n.max(0) as u64)
}

/// Follows the database's access epoch into `epoch` until `stop`; reconnects on its own.
pub fn watch(
    url: String,
    epoch: Arc<AccessEpoch>,
    feed: Arc<FeedHead>,
    news: Arc<NodeNews>,
    poll: Duration,
    stop: Arc<AtomicBool>,
) -> thread::JoinHandle<()> {
    thread::Builder::new()
        .name("docsync-access-watch".into())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let session = || -> Result<(), Box<dyn std::error::Error>> {
                    let mut c = node_config(&url)?.connect(NoTls)?;
                    c.batch_execute(&format!(
                        "LISTEN docsync_access; LISTEN {FEED_CHANNEL}; LISTEN {NODES_CHANNEL}"
                    ))?;
                    epoch.observe(read(&mut c)?);
                    // Entries may have come while we were away.
                    feed.poke();
                    while !stop.load(Ordering::Relaxed) {
                        // What woke us (a notification, or the poll interval) and what queued
                        // meanwhile: one read of the epoch covers every access notification.
                        let first = c.notifications().timeout_iter(poll).next()?;
                        let (mut access, mut fed) = (first.is_none(), false);
                        let mut note = |n: &postgres::Notification| {
                            if n.channel() == FEED_CHANNEL {
                                fed = true;
                            } else if n.channel() == NODES_CHANNEL {
                                news.hear(n.payload());
                            } else {
                                access = true;
                            }
                        };
                        if let Some(n) = &first {
                            note(n);
                        }
                        while let Some(n) = c.notifications().iter().next()? {
                            note(&n);
                        }
                        if fed {
                            feed.poke();
                        }
                        if access {
                            epoch.observe(read(&mut c)?);
                        }
                    }
                    Ok(())
                };
                if let Err(e) = session() {
                    tracing::warn!(error = %e, "following the cluster's access epoch; reconnecting");
                    thread::sleep(Duration::from_secs(1));
                }
            }
        })
        .expect("spawn access watcher")
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::collab::op::{Effect, LogEntry};
    use crate::storage::documents::{self, DocWrite};
    use crate::storage::log::LogRecord;
    use crate::storage::postgres::{
        migrate,
        testing::{on_pg, TempPostgres},
    };

    /// Waits (re-checking, bounded) until `f` holds.
    fn until(what: &str, within: Duration, f: impl Fn() -> bool) {
        let end = Instant::now() + within;
        while !f() {
            assert!(Instant::now() < end, "{what} within {within:?}");
            thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn a_rights_change_on_any_node_reaches_the_epoch_by_notification() {
        let pg = TempPostgres::start();
        let mut c = pg.client();
        migrate::apply(&mut c).unwrap();
        let epoch = Arc::new(AccessEpoch::default());
        let stop = Arc::new(AtomicBool::new(false));
        // A poll far longer than the test: only the notification can be fast.
        let feed = Arc::new(FeedHead::default());
        let mut fed = feed.changes();
        fed.borrow_and_update();
        let watcher = watch(
            pg.url(),
            epoch.clone(),
            feed.clone(),
            Arc::new(NodeNews::default()),
            Duration::from_secs(60),
            stop.clone(),
        );
        c.batch_execute("INSERT INTO users (id, name, display_name, created_at) VALUES ('usr_a', 'a', 'A', 0), ('usr_b', 'b', 'B', 0)")
            .unwrap();
        on_pg(&mut c, |db| {
            documents::create(db, "doc_1", "usr_a", "T", None, 1)
        })
        .unwrap();
        let db = |c: &mut Client| read(c).unwrap();
        let now = db(&mut c);
        until(
            "the watcher sees the epoch",
            Duration::from_secs(10),
            || epoch.current() == now,
        );
        c.batch_execute(
            "INSERT INTO doc_shares (doc_id, user_id, access) VALUES ('doc_1', 'usr_b', 'read')",
        )
        .unwrap();
        let after = db(&mut c);
        assert!(after > now);
        until(
            "a share reaches the epoch by notification",
            Duration::from_secs(10),
            || epoch.current() == after,
        );
        // A write that logs an entry wakes the feed's readers, by its commit's notification.
        fed.borrow_and_update();
        let entry = LogRecord::from_entry(&LogEntry {
            seq: 1,
            op_id: "op_1".into(),
            kind: "set_title".into(),
            client_id: "cl_1".into(),
            user_id: "usr_a".into(),
            at: 2,
            effects: vec![Effect::Title {
                title: "T2".into(),
                title_version: 1,
            }],
        });
        let write = DocWrite {
            doc_id: "doc_1".into(),
            expect_head: 0,
            head_after: 1,
            log: vec![Arc::new(entry)],
            now: 2,
            ..DocWrite::default()
        };
        on_pg(&mut c, |db| documents::apply_write(db, &write, 0)).unwrap();
        until(
            "a logged entry pokes the feed by notification",
            Duration::from_secs(10),
            || fed.has_changed().unwrap(),
        );
        stop.store(true, Ordering::Relaxed);
        // Wake the watcher so it sees `stop`.
        c.batch_execute("NOTIFY docsync_access").unwrap();
        watcher.join().unwrap();
    }
}
