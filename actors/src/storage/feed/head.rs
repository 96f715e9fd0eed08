//! The feed's head: moves when new entries may be readable, followed by whoever waits for
//! them (a long-polling feed reader, a live feed stream). On SQLite the writer reads the
//! newest number after every commit, before the commit's answers go out
//! (`sqlite/writer.rs`), so a reader woken by it finds the entries. On PostgreSQL every
//! write that logs entries sends `NOTIFY docsync_feed` with its commit, which every node's
//! watcher turns into a `poke` (`cluster/access_watch.rs`); waiters there also look again
//! on a timer, for a notification lost while the watcher reconnected.

use std::sync::atomic::{AtomicI64, Ordering};

use rusqlite::Connection;
use tokio::sync::watch;

use crate::storage::error::Result;

/// The PostgreSQL channel a write that logged entries notifies.
pub const FEED_CHANNEL: &str = "docsync_feed";

#[derive(Debug)]
pub struct FeedHead {
    /// The newest number seen (SQLite).
    newest: AtomicI64,
    /// How often waiters were woken: what they watch.
    moved: watch::Sender<u64>,
}

impl Default for FeedHead {
    fn default() -> Self {
        FeedHead {
            newest: AtomicI64::new(0),
            moved: watch::Sender::new(0),
        }
    }
}

impl FeedHead {
    /// Takes a number read from the database; wakes the waiters when it is newer.
    pub fn observe(&self, n: i64) {
        if n > self.newest.fetch_max(n, Ordering::AcqRel) {
            self.poke();
        }
    }

    /// Wakes the waiters: entries may be readable (PostgreSQL's notification says no number).
    pub fn poke(&self) {
        self.moved.send_modify(|n| *n += 1);
    }

    /// Fires (coalesced) whenever the head moves.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.moved.subscribe()
    }

    /// Reads SQLite's newest feed number on `conn` and takes it: the last number handed
    /// out, one index probe (`sqlite_sequence` is kept by AUTOINCREMENT).
    pub fn refresh(&self, conn: &Connection) -> Result<()> {
        let n: i64 = conn
            .prepare_cached(
                "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'feed'), 0)",
            )?
            .query_row([], |r| r.get(0))?;
        self.observe(n);
        Ok(())
    }
}
