//! The feed on PostgreSQL (twin of `sqlite.rs`): entries are appended unnumbered by the
//! writes and numbered here once committed (migrations/postgres/0011_feed.sql).

use postgres::GenericClient;

use super::types::FeedRow;
use crate::storage::error::Result;

/// The cluster-wide lock of one numbering at a time (an arbitrary constant of this table).
const NUMBERING_LOCK: i64 = 0x0046_4545_4400;

pub fn unnumbered(c: &mut impl GenericClient) -> Result<bool> {
    Ok(
        c.query_one("SELECT EXISTS (SELECT 1 FROM feed WHERE pos IS NULL)", &[])?
            .get(0),
    )
}

/// In a write transaction. The lock is held to the commit, so the next numbering starts
/// after this one's numbers are visible and continues above them; rows committed later
/// than this one read get the next numbers, never one below a number already read.
pub fn number_committed(c: &mut impl GenericClient, max: usize) -> Result<usize> {
    c.execute("SELECT pg_advisory_xact_lock($1)", &[&NUMBERING_LOCK])?;
    let n = c.execute(
        "WITH waiting AS (
             SELECT id, row_number() OVER (ORDER BY id) AS n
               FROM (SELECT id FROM feed WHERE pos IS NULL ORDER BY id LIMIT $1) w
         ),
         base AS (SELECT coalesce(max(pos), 0) AS b FROM feed)
         UPDATE feed f SET pos = base.b + waiting.n
           FROM waiting, base WHERE f.id = waiting.id",
        &[&(max as i64)],
    )?;
    Ok(n as usize)
}

pub fn rows_after(c: &mut impl GenericClient, after: i64, limit: usize) -> Result<Vec<FeedRow>> {
    let rows = c.query(
        "SELECT f.pos, f.doc_id, f.seq, o.entry
           FROM feed f LEFT JOIN doc_ops o ON o.doc_id = f.doc_id AND o.seq = f.seq
          WHERE f.pos > $1 ORDER BY f.pos LIMIT $2",
        &[&after, &(limit as i64)],
    )?;
    Ok(rows
        .into_iter()
        .map(|r| FeedRow {
            pos: r.get(0),
            doc_id: r.get(1),
            seq: r.get(2),
            entry: r.get(3),
        })
        .collect())
}

pub fn head(c: &mut impl GenericClient) -> Result<i64> {
    Ok(c.query_one("SELECT coalesce(max(pos), 0) FROM feed", &[])?
        .get(0))
}

pub fn forget_before(c: &mut impl GenericClient, doc_id: &str, seq: i64) -> Result<usize> {
    Ok(c.execute(
        "DELETE FROM feed WHERE doc_id = $1 AND seq < $2",
        &[&doc_id, &seq],
    )? as usize)
}
