//! The feed's head: the newest number the feed gave, followed by whoever waits for new
//! entries (a long-polling feed reader, the webhook sender). On SQLite the writer reads it
//! after every commit, before the commit's answers go out (`sqlite/writer.rs`), so a reader
//! woken by it finds the entries. On PostgreSQL entries are numbered by their readers and
//! written by every node: waiters there also look again on a short timer.

use rusqlite::Connection;
use tokio::sync::watch;

use crate::storage::error::Result;

#[derive(Debug)]
pub struct FeedHead {
    moved: watch::Sender<i64>,
}

impl Default for FeedHead {
    fn default() -> Self {
        FeedHead {
            moved: watch::Sender::new(0),
        }
    }
}

impl FeedHead {
    /// Takes a number read from the database; wakes the waiters when it is newer.
    pub fn observe(&self, n: i64) {
        self.moved.send_if_modified(|seen| {
            let newer = n > *seen;
            if newer {
                *seen = n;
            }
            newer
        });
    }

    /// Fires (coalesced) whenever the head moves.
    pub fn changes(&self) -> watch::Receiver<i64> {
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
