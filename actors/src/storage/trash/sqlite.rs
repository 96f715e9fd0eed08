//! The trash on SQLite (twins of `postgres.rs`).

use rusqlite::{params, Connection};

use super::types::TrashedDoc;
use crate::storage::error::Result;

/// Moves a document to its owner's trash; false when it is not there to move.
pub fn trash(conn: &Connection, doc_id: &str, by: &str, now: i64) -> Result<bool> {
    Ok(conn.execute(
        "UPDATE documents SET trashed_at = ?2, trashed_by = ?3 WHERE id = ?1 AND trashed_at IS NULL",
        params![doc_id, now, by],
    )? == 1)
}

/// The owner's trash, most recently deleted first.
pub fn list(conn: &Connection, owner: &str) -> Result<Vec<TrashedDoc>> {
    let rows = conn
        .prepare_cached(
            "SELECT d.id, d.title, d.icon, d.trashed_at,
                    (SELECT count(*) FROM blocks b WHERE b.doc_id = d.id AND b.deleted = 0)
               FROM documents d WHERE d.owner_id = ?1 AND d.trashed_at IS NOT NULL
              ORDER BY d.trashed_at DESC, d.id",
        )?
        .query_map([owner], |r| {
            let at: i64 = r.get(3)?;
            Ok(TrashedDoc {
                doc_id: r.get(0)?,
                title: r.get(1)?,
                icon: r.get(2)?,
                trashed_at: at,
                purge_at: at,
                blocks: r.get(4)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// Whether `owner` has `doc_id` in the trash.
pub fn is_trashed_by_owner(conn: &Connection, doc_id: &str, owner: &str) -> Result<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT EXISTS(SELECT 1 FROM documents WHERE id = ?1 AND owner_id = ?2 AND trashed_at IS NOT NULL)",
        )?
        .query_row(params![doc_id, owner], |r| r.get(0))?)
}

/// Takes a document out of its owner's trash, with everything it had.
pub fn untrash(conn: &Connection, doc_id: &str, owner: &str) -> Result<bool> {
    Ok(conn.execute(
        "UPDATE documents SET trashed_at = NULL, trashed_by = NULL
          WHERE id = ?1 AND owner_id = ?2 AND trashed_at IS NOT NULL",
        params![doc_id, owner],
    )? == 1)
}

/// Documents trashed before `cutoff`: due to be purged for good.
pub fn due(conn: &Connection, cutoff: i64) -> Result<Vec<String>> {
    let ids = conn
        .prepare_cached(
            "SELECT id FROM documents WHERE trashed_at IS NOT NULL AND trashed_at < ?1 ORDER BY id",
        )?
        .query_map([cutoff], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(ids)
}
