//! Cluster mode's view of the access epoch: every node follows the database's counter
//! (moved by triggers in the same transaction as any change of rights, migration 0002) so
//! that a right revoked through one node ends streams and cached decisions on every node. A
//! dedicated connection `LISTEN`s to `docsync_access` — a notification means "read the
//! counter now" — and reads it every `poll` besides, because a notification sent while the
//! connection was down is never delivered. What it reads goes to the same `AccessEpoch` the
//! SQLite writer feeds, so nothing downstream knows the difference.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, NoTls};

use crate::storage::access_epoch::AccessEpoch;
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
    poll: Duration,
    stop: Arc<AtomicBool>,
) -> thread::JoinHandle<()> {
    thread::Builder::new()
        .name("docsync-access-watch".into())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let session = || -> Result<(), Box<dyn std::error::Error>> {
                    let mut c = node_config(&url)?.connect(NoTls)?;
                    c.batch_execute("LISTEN docsync_access")?;
                    epoch.observe(read(&mut c)?);
                    while !stop.load(Ordering::Relaxed) {
                        // Whatever woke us (a notification, or the poll interval), read.
                        let _ = c.notifications().timeout_iter(poll).next()?;
                        // Drain what queued meanwhile: one read covers them all.
                        while c.notifications().iter().next()?.is_some() {}
                        epoch.observe(read(&mut c)?);
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
    use crate::storage::documents;
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
        let watcher = watch(
            pg.url(),
            epoch.clone(),
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
        stop.store(true, Ordering::Relaxed);
        // Wake the watcher so it sees `stop`.
        c.batch_execute("NOTIFY docsync_access").unwrap();
        watcher.join().unwrap();
    }
}
