//! Rows compaction removes (PROTOCOL §6). The document actor decides *what* (tombstones due,
//! the new log floor) in its own op order; these functions do the SQL, in small chunks so a
//! big backlog never holds the writer for long.

use rusqlite::{params, Connection, OptionalExtension};

use crate::storage::error::Result;

/// How long things are kept, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub shared_log_ms: i64,
    pub private_log_ms: i64,
    pub tombstone_ms: i64,
    pub results_ms: i64,
}

impl Default for Retention {
    fn default() -> Self {
        const DAY: i64 = 86_400_000;
        Retention {
            shared_log_ms: 30 * DAY,
            private_log_ms: 7 * DAY,
            tombstone_ms: 30 * DAY,
            results_ms: 90 * DAY,
        }
    }
}

/// Documents with something to remove at `now`: log rows above the floor older than the
/// shortest log retention, tombstones past retention, or old idempotency results.
pub fn due_documents(conn: &Connection, now: i64, r: &Retention) -> Result<Vec<String>> {
    let log_cutoff = now - r.shared_log_ms.min(r.private_log_ms);
    let mut stmt = conn.prepare(
        "SELECT d.id FROM documents d
          WHERE EXISTS (SELECT 1 FROM doc_ops o WHERE o.doc_id = d.id AND o.seq > d.log_floor AND o.at < ?1)
             OR EXISTS (SELECT 1 FROM doc_ops o WHERE o.doc_id = d.id AND o.seq <= d.log_floor)
             OR EXISTS (SELECT 1 FROM blocks b WHERE b.doc_id = d.id AND b.deleted = 1 AND b.deleted_at < ?2)
             OR EXISTS (SELECT 1 FROM doc_op_results x WHERE x.doc_id = d.id AND x.at < ?3)
          ORDER BY d.id",
    )?;
    let ids = stmt
        .query_map(
            params![log_cutoff, now - r.tombstone_ms, now - r.results_ms],
            |r| r.get::<_, String>(0),
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(ids)
}

/// Moves the floor up to the newest entry written before `cutoff` (never down, never past
/// `head`), and returns the floor now in force.
pub fn raise_floor(conn: &Connection, doc_id: &str, cutoff: i64, head: i64) -> Result<i64> {
    let newest_old: Option<i64> = conn
        .query_row(
            "SELECT max(seq) FROM doc_ops WHERE doc_id = ?1 AND at < ?2 AND seq <= ?3",
            params![doc_id, cutoff, head],
            |r| r.get(0),
        )
        .optional()?
        .flatten();
    if let Some(f) = newest_old {
        conn.execute(
            "UPDATE documents SET log_floor = max(log_floor, ?2) WHERE id = ?1",
            params![doc_id, f],
        )?;
    }
    Ok(conn.query_row(
        "SELECT log_floor FROM documents WHERE id = ?1",
        [doc_id],
        |r| r.get(0),
    )?)
}

/// Deletes up to `limit` log rows at or below the floor; returns how many went.
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
