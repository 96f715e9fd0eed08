//! The op log (`doc_ops`) and the idempotency results (`doc_op_results`). A `LogRecord` keeps
//! its JSON form ready-made so a hot document's actor serialises each entry exactly once.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::value::RawValue;

use crate::collab::op::{LogEntry, OpResult};

use super::error::{Result, StorageError};

#[derive(Debug, Clone)]
pub struct LogRecord {
    pub seq: i64,
    pub op_id: String,
    pub kind: String,
    pub client_id: String,
    pub user_id: String,
    pub at: i64,
    /// The whole entry as sent to clients and stored in `doc_ops.entry`.
    pub json: Box<RawValue>,
}

impl LogRecord {
    pub fn from_entry(e: &LogEntry) -> LogRecord {
        LogRecord {
            seq: e.seq,
            op_id: e.op_id.clone(),
            kind: e.kind.clone(),
            client_id: e.client_id.clone(),
            user_id: e.user_id.clone(),
            at: e.at,
            json: serde_json::value::to_raw_value(e).expect("log entry serialises"),
        }
    }
}

pub fn insert(conn: &Connection, doc_id: &str, records: &[Arc<LogRecord>]) -> Result<()> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO doc_ops (doc_id, seq, op_id, kind, client_id, user_id, at, entry)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
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
    }
    Ok(())
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

/// What must be known before a request's ops are applied, read off the actor's thread:
/// results already given for its op IDs, and which named block IDs belong elsewhere.
#[derive(Debug, Clone, Default)]
pub struct Precheck {
    pub known: HashMap<String, OpResult>,
    pub foreign: HashSet<String>,
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
