//! The compaction pass's reads and chunked deletes on SQLite (twins of `postgres.rs`).

use rusqlite::{params, Connection, OptionalExtension};

use super::types::Cutoffs;
use crate::storage::error::Result;

pub fn due_documents(conn: &Connection, at: &Cutoffs) -> Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT d.id FROM documents d
          WHERE EXISTS (SELECT 1 FROM doc_ops o WHERE o.doc_id = d.id AND o.seq > d.log_floor AND o.at < ?1)
             OR EXISTS (SELECT 1 FROM doc_ops o WHERE o.doc_id = d.id AND o.seq <= d.log_floor)
             OR EXISTS (SELECT 1 FROM blocks b WHERE b.doc_id = d.id AND b.deleted = 1 AND b.deleted_at < ?2)
             OR EXISTS (SELECT 1 FROM doc_op_results x WHERE x.doc_id = d.id AND x.at < ?3)
          ORDER BY d.id",
    )?;
    let ids = stmt
        .query_map(params![at.log, at.tombstones, at.results], |r| {
            r.get::<_, String>(0)
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(ids)
}

pub fn newest_entry_before(
    conn: &Connection,
    doc_id: &str,
    cutoff: i64,
    head: i64,
) -> Result<Option<i64>> {
    Ok(conn
        .query_row(
            "SELECT max(seq) FROM doc_ops WHERE doc_id = ?1 AND at < ?2 AND seq <= ?3",
            params![doc_id, cutoff, head],
            |r| r.get(0),
        )
        .optional()?
        .flatten())
}

pub fn raise_floor_to(conn: &Connection, doc_id: &str, floor: i64) -> Result<()> {
    conn.execute(
        "UPDATE documents SET log_floor = max(log_floor, ?2) WHERE id = ?1",
        params![doc_id, floor],
    )?;
    Ok(())
}

pub fn floor(conn: &Connection, doc_id: &str) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT log_floor FROM documents WHERE id = ?1",
        [doc_id],
        |r| r.get(0),
    )?)
}

/// Forgets which bullets the deleted log entries changed (after `delete_log_chunk` took the
/// entries at or below `floor`; one pass per compaction of the document).
pub fn delete_block_changes(conn: &Connection, doc_id: &str, floor: i64) -> Result<usize> {
    Ok(conn.execute(
        "DELETE FROM block_changes WHERE doc_id = ?1 AND seq <= ?2",
        params![doc_id, floor],
    )?)
}

pub fn delete_log_chunk(
    conn: &Connection,
    doc_id: &str,
    floor: i64,
    limit: usize,
) -> Result<usize> {
    Ok(conn.execute(
        "DELETE FROM doc_ops WHERE doc_id = ?1 AND seq IN
           (SELECT seq FROM doc_ops WHERE doc_id = ?1 AND seq <= ?2 ORDER BY seq LIMIT ?3)",
        params![doc_id, floor, limit as i64],
    )?)
}

/// Deletes up to `limit` idempotency results older than `cutoff`.
pub fn delete_results_chunk(
    conn: &Connection,
    doc_id: &str,
    cutoff: i64,
    limit: usize,
) -> Result<usize> {
    Ok(conn.execute(
        "DELETE FROM doc_op_results WHERE doc_id = ?1 AND op_id IN
           (SELECT op_id FROM doc_op_results WHERE doc_id = ?1 AND at < ?2 LIMIT ?3)",
        params![doc_id, cutoff, limit as i64],
    )?)
}
