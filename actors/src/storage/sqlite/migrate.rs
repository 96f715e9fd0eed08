//! Schema migrations from the top-level `migrations/` folder, applied at start by
//! `rusqlite_migration` (tracked in SQLite's `user_version`). Add a file, add a line.

use rusqlite::Connection;
use rusqlite_migration::{Migrations, M};

use crate::storage::error::Result;

/// Every migration, in order (its position is its version).
const SQL: [&str; 14] = [
    include_str!("../../../../migrations/0001_core.sql"),
    include_str!("../../../../migrations/0002_sharing.sql"),
    include_str!("../../../../migrations/0003_deleted_by.sql"),
    include_str!("../../../../migrations/0004_access_epoch.sql"),
    include_str!("../../../../migrations/0005_client_owners.sql"),
    include_str!("../../../../migrations/0006_block_links.sql"),
    include_str!("../../../../migrations/0007_block_changes.sql"),
    include_str!("../../../../migrations/0008_versions_trash.sql"),
    include_str!("../../../../migrations/0009_people.sql"),
    include_str!("../../../../migrations/0010_sso.sql"),
    include_str!("../../../../migrations/0011_bullet_shares.sql"),
    include_str!("../../../../migrations/0012_blocks_parent.sql"),
    include_str!("../../../../migrations/0013_feed.sql"),
    include_str!("../../../../migrations/0014_webhooks.sql"),
];

fn migrations() -> Migrations<'static> {
    Migrations::new(SQL.iter().map(|sql| M::up(sql)).collect())
}

pub fn apply(conn: &mut Connection) -> Result<()> {
    migrations().to_latest(conn)?;
    Ok(())
}

/// True when the database is at the newest schema version (for readiness checks).
pub fn is_current(conn: &Connection) -> Result<bool> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    Ok(version as usize == migrations_len())
}

pub fn migrations_len() -> usize {
    SQL.len()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use rusqlite::Connection;

    use crate::collab::block::Block;
    use crate::collab::op::{Effect, LogEntry};
    use crate::storage::documents::{self, DocWrite};
    use crate::storage::log::{self, LogRecord};
    use crate::storage::{accounts, Db};

    #[test]
    fn migrations_are_valid() {
        super::migrations().validate().unwrap();
    }

    /// The index of which entries changed which bullet is filled from the log written
    /// before it existed.
    #[test]
    fn block_changes_are_filled_from_the_existing_log() {
        let mut conn = Connection::open_in_memory().unwrap();
        super::migrations().to_version(&mut conn, 6).unwrap();
        let user = accounts::create_user(&mut Db::Sqlite(&conn), "ann", "Ann", false, 0).unwrap();
        documents::create(&mut Db::Sqlite(&conn), "doc_m", &user.id, "M", None, 0).unwrap();
        let block = Arc::new(Block::new(
            "blk_m".into(),
            None,
            "a0".into(),
            "milk".into(),
            5,
            &user.id,
        ));
        let entry = |seq: i64, effects: Vec<Effect>| {
            Arc::new(LogRecord::from_entry(&LogEntry {
                seq,
                op_id: format!("op_{seq}"),
                kind: "insert".into(),
                client_id: "cl_1".into(),
                user_id: user.id.clone(),
                at: 5,
                effects,
            }))
        };
        // Written as before the index existed: the log only (today's `log::insert` also
        // writes the index, so a throwaway table takes those rows here).
        let w = DocWrite {
            doc_id: "doc_m".into(),
            expect_head: 0,
            head_after: 2,
            log: vec![
                entry(
                    1,
                    vec![Effect::Block {
                        block: block.clone(),
                    }],
                ),
                entry(
                    2,
                    vec![Effect::Purge {
                        block_ids: vec!["blk_m".into()],
                    }],
                ),
            ],
            ..DocWrite::default()
        };
        let tx = conn.transaction().unwrap();
        tx.execute_batch("DROP TABLE IF EXISTS block_changes")
            .unwrap();
        tx.execute_batch(
            "CREATE TEMP TABLE block_changes (doc_id TEXT, block_id TEXT, seq INTEGER);
             CREATE TEMP TABLE feed (pos INTEGER PRIMARY KEY AUTOINCREMENT, doc_id TEXT, seq INTEGER);",
        )
        .unwrap();
        documents::apply_write(&mut Db::Sqlite(&tx), &w, 0).unwrap();
        tx.execute_batch("DROP TABLE temp.block_changes; DROP TABLE temp.feed")
            .unwrap();
        tx.commit().unwrap();
        super::apply(&mut conn).unwrap();
        let h = log::block_history(&mut Db::Sqlite(&conn), "doc_m", "blk_m", i64::MAX, 10).unwrap();
        let kinds: Vec<(i64, &str, bool)> = h
            .iter()
            .map(|c| (c.seq, c.kind.as_str(), c.deleted))
            .collect();
        assert_eq!(kinds, vec![(2, "purge", true), (1, "insert", false)]);
        assert_eq!(h[1].content.as_deref(), Some("milk"));
        assert_eq!(h[1].name, "Ann");
        // The change feed is filled from the same log, in order.
        let feed: Vec<(i64, String, i64)> = conn
            .prepare("SELECT pos, doc_id, seq FROM feed ORDER BY pos")
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(feed, vec![(1, "doc_m".into(), 1), (2, "doc_m".into(), 2)]);
    }
}
