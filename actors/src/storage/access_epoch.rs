//! The access epoch: a number that moves whenever anything a credential or a role depends on
//! changes (users, tokens, login sessions, teams, folders, shares, a document's owner, folder
//! or existence). Triggers keep it in the database (`migrations/0004_access_epoch.sql`), so a
//! change by any process moves it; the writer thread reads it after every commit, before
//! the commit's answers go out, so a change made through this server is seen by the very
//! next request. Changes by another process (the CLI) are seen by the periodic `refresh`.
//!
//! Whoever caches an access decision tags it with the epoch read *before* the database read
//! it came from and uses it only while the epoch is still the same; then a decision can
//! never outlive a change that committed after it was read.

//!
//! Open streams were authorised once, when they opened; they stay authorised only while the
//! epoch they were confirmed at is the current one. `changes` wakes whoever re-checks them
//! (the registry tells every running document actor).

use std::sync::atomic::{AtomicU64, Ordering};

use rusqlite::Connection;
use tokio::sync::watch;

use super::error::Result;

#[derive(Debug)]
pub struct AccessEpoch {
    n: AtomicU64,
    moved: watch::Sender<u64>,
}

impl Default for AccessEpoch {
    fn default() -> Self {
        AccessEpoch {
            n: AtomicU64::new(0),
            moved: watch::Sender::new(0),
        }
    }
}

impl AccessEpoch {
    /// The newest epoch seen.
    pub fn current(&self) -> u64 {
        self.n.load(Ordering::Acquire)
    }

    /// Takes a value read from the database; the epoch never goes back. The atomic moves
    /// first, so anyone reading `current` after this returns sees the new epoch; listeners
    /// on `changes` are woken after.
    pub fn observe(&self, n: u64) {
        let before = self.n.fetch_max(n, Ordering::AcqRel);
        if n > before {
            self.moved.send_if_modified(|seen| {
                let newer = n > *seen;
                if newer {
                    *seen = n;
                }
                newer
            });
        }
    }

    /// Fires (coalesced) whenever the epoch moves.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.moved.subscribe()
    }

    /// Reads the database's counter on `conn` and takes it.
    pub fn refresh(&self, conn: &Connection) -> Result<()> {
        self.observe(read(conn)?);
        Ok(())
    }
}

/// The counter as whichever database is in use has it.
pub fn read_db(db: &mut super::db::Db) -> Result<u64> {
    match db {
        super::db::Db::Sqlite(c) => read(c),
        super::db::Db::Postgres(t, _) => {
            let n: i64 = t
                .query_one("SELECT n FROM access_epoch WHERE id = 1", &[])?
                .get(0);
            Ok(n.max(0) as u64)
        }
    }
}

/// The counter as the database has it.
pub fn read(conn: &Connection) -> Result<u64> {
    let n: i64 = conn
        .prepare_cached("SELECT n FROM access_epoch WHERE id = 1")?
        .query_row([], |r| r.get(0))?;
    Ok(n.max(0) as u64)
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::*;
    use crate::storage::sqlite::migrate;
    use crate::storage::{accounts, Db};

    #[test]
    fn moves_with_credentials_and_shares_not_with_edits() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate::apply(&mut conn).unwrap();
        let epoch = AccessEpoch::default();
        epoch.refresh(&conn).unwrap();
        let start = epoch.current();
        let user =
            accounts::create_user(&mut Db::Sqlite(&conn), "alice", "Alice", false, 1).unwrap();
        accounts::create_token(&mut Db::Sqlite(&conn), &user.id, "cli", 1).unwrap();
        epoch.refresh(&conn).unwrap();
        let after_user = epoch.current();
        assert!(after_user > start, "a new user moves the epoch");
        conn.execute(
            "INSERT INTO documents (id, owner_id, created_at, updated_at) VALUES ('doc_1', ?1, 1, 1)",
            [&user.id],
        )
        .unwrap();
        epoch.refresh(&conn).unwrap();
        let after_doc = epoch.current();
        assert!(after_doc > after_user, "a new document moves it");
        // What every edit touches does not.
        conn.execute(
            "UPDATE documents SET head_seq = 5, updated_at = 2, title = 'x' WHERE id = 'doc_1'",
            [],
        )
        .unwrap();
        epoch.refresh(&conn).unwrap();
        assert_eq!(epoch.current(), after_doc, "an edit leaves it alone");
        conn.execute("DELETE FROM api_tokens", []).unwrap();
        epoch.refresh(&conn).unwrap();
        assert!(epoch.current() > after_doc, "a revoked token moves it");
        // Never backwards.
        epoch.observe(0);
        assert!(epoch.current() > after_doc);
    }
}
