//! The feed on SQLite (twin of `postgres.rs`): numbered as written, nothing to settle.

use rusqlite::{params, Connection};

use super::types::FeedRow;
use crate::storage::error::Result;

pub fn unnumbered(_conn: &Connection) -> Result<bool> {
    Ok(false)
}

pub fn number_committed(_conn: &Connection, _max: usize) -> Result<usize> {
    Ok(0)
}

pub fn rows_after(conn: &Connection, after: i64, limit: usize) -> Result<Vec<FeedRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT f.pos, f.doc_id, f.seq, o.entry
           FROM feed f LEFT JOIN doc_ops o ON o.doc_id = f.doc_id AND o.seq = f.seq
          WHERE f.pos > ?1 ORDER BY f.pos LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![after, limit as i64], |r| {
        Ok(FeedRow {
            pos: r.get(0)?,
            doc_id: r.get(1)?,
            seq: r.get(2)?,
            entry: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub fn head(conn: &Connection) -> Result<i64> {
    Ok(conn
        .prepare_cached("SELECT coalesce(max(pos), 0) FROM feed")?
        .query_row([], |r| r.get(0))?)
}

pub fn forget_before(conn: &Connection, doc_id: &str, seq: i64) -> Result<usize> {
    Ok(conn
        .prepare_cached("DELETE FROM feed WHERE doc_id = ?1 AND seq < ?2")?
        .execute(params![doc_id, seq])?)
}
