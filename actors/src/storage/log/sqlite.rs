//! The op log (`doc_ops`), a bullet's changes and the idempotency results
//! (`doc_op_results`) on SQLite (twins of `postgres.rs`).

use std::sync::Arc;

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::value::RawValue;

use super::types::{BlockChange, LogRecord, Precheck};
use crate::collab::op::OpResult;
use crate::storage::error::{Result, StorageError};

pub fn insert(conn: &Connection, doc_id: &str, records: &[Arc<LogRecord>]) -> Result<()> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO doc_ops (doc_id, seq, op_id, kind, client_id, user_id, at, entry)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    let mut changes = conn.prepare_cached(
        "INSERT OR IGNORE INTO block_changes (doc_id, block_id, seq) VALUES (?1, ?2, ?3)",
    )?;
    // The change feed's number, given in this transaction: SQLite's one writer makes it
    // the commit order across documents (migrations/0013_feed.sql).
    let mut feed = conn.prepare_cached("INSERT INTO feed (doc_id, seq) VALUES (?1, ?2)")?;
    for r in records {
        stmt.execute(params![
            doc_id,
            r.seq,
            r.op_id,
            r.kind,
            r.client_id,
            r.user_id,
            r.at,
            r.json.get()
        ])?;
        for b in &r.blocks {
            changes.execute(params![doc_id, b, r.seq])?;
        }
        feed.execute(params![doc_id, r.seq])?;
    }
    Ok(())
}

/// The changes of one bullet still in the log, newest first, below `before` (a `seq`), at
/// most `limit`: a range of `block_changes` joined to the log (indexed; the log's length
/// does not matter).
pub fn block_history(
    conn: &Connection,
    doc_id: &str,
    block_id: &str,
    before: i64,
    limit: usize,
) -> Result<Vec<BlockChange>> {
    let mut stmt = conn.prepare_cached(
        "SELECT o.seq, o.at, o.user_id, o.kind, o.entry, u.display_name
         FROM block_changes c
         JOIN doc_ops o ON o.doc_id = c.doc_id AND o.seq = c.seq
         LEFT JOIN users u ON u.id = o.user_id
         WHERE c.doc_id = ?1 AND c.block_id = ?2 AND c.seq < ?3
         ORDER BY c.seq DESC LIMIT ?4",
    )?;
    let rows = stmt.query_map(params![doc_id, block_id, before, limit as i64], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, Option<String>>(5)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (seq, at, user_id, kind, entry, name) = row?;
        out.push(BlockChange::from_entry(
            block_id, seq, at, user_id, kind, &entry, name,
        )?);
    }
    Ok(out)
}

/// Log entries with `after < seq <= upto`, at most `limit`, in order.
pub fn read_after(
    conn: &Connection,
    doc_id: &str,
    after: i64,
    upto: i64,
    limit: usize,
) -> Result<Vec<Arc<LogRecord>>> {
    let mut stmt = conn.prepare_cached(
        "SELECT seq, op_id, kind, client_id, user_id, at, entry FROM doc_ops
         WHERE doc_id = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq LIMIT ?4",
    )?;
    let rows = stmt.query_map(params![doc_id, after, upto, limit as i64], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, i64>(5)?,
            r.get::<_, String>(6)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (seq, op_id, kind, client_id, user_id, at, entry) = row?;
        let json = RawValue::from_string(entry)
            .map_err(|e| StorageError::Corrupt(format!("doc_ops {seq}: {e}")))?;
        out.push(Arc::new(LogRecord {
            seq,
            op_id,
            kind,
            client_id,
            user_id,
            at,
            json,
            blocks: Vec::new(),
        }));
    }
    Ok(out)
}

/// Calls `f` with every op ID the document has a stored result for (the document actor's
/// filter of op IDs that may be retries; one index range scan).
pub fn for_each_result_op_id(
    conn: &Connection,
    doc_id: &str,
    mut f: impl FnMut(&str),
) -> Result<()> {
    let mut stmt = conn.prepare_cached("SELECT op_id FROM doc_op_results WHERE doc_id = ?1")?;
    let mut rows = stmt.query([doc_id])?;
    while let Some(row) = rows.next()? {
        f(row.get_ref(0)?.as_str().map_err(rusqlite::Error::from)?);
    }
    Ok(())
}

pub fn precheck<'a>(
    conn: &Connection,
    doc_id: &str,
    op_ids: impl IntoIterator<Item = &'a str>,
    block_ids: impl IntoIterator<Item = &'a str>,
) -> Result<Precheck> {
    let mut out = Precheck::default();
    let mut res =
        conn.prepare_cached("SELECT result FROM doc_op_results WHERE doc_id = ?1 AND op_id = ?2")?;
    for op in op_ids {
        if let Some(json) = res
            .query_row(params![doc_id, op], |r| r.get::<_, String>(0))
            .optional()?
        {
            let r: OpResult =
                serde_json::from_str(&json).map_err(|e| StorageError::Corrupt(e.to_string()))?;
            out.known.insert(op.to_string(), r);
        }
    }
    let mut blk = conn.prepare_cached(
        "SELECT 1 FROM blocks WHERE id = ?1 AND doc_id <> ?2
         UNION ALL SELECT 1 FROM purged_blocks WHERE id = ?1 AND doc_id <> ?2 LIMIT 1",
    )?;
    for id in block_ids {
        if out.foreign.contains(id) {
            continue;
        }
        if blk.exists(params![id, doc_id])? {
            out.foreign.insert(id.to_string());
        }
    }
    Ok(out)
}
