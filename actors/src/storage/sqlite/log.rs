//! The op log (`doc_ops`) and the idempotency results (`doc_op_results`). A `LogRecord` keeps
//! its JSON form ready-made so a hot document's actor serialises each entry exactly once.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::value::RawValue;

use crate::collab::op::{Effect, LogEntry, OpResult};

use crate::storage::error::{Result, StorageError};

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
    /// The bullets the entry changed (for `block_changes`; empty when read back).
    pub blocks: Vec<String>,
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
            blocks: e
                .effects
                .iter()
                .flat_map(|eff| match eff {
                    Effect::Block { block } => vec![block.id.clone()],
                    Effect::Purge { block_ids } => block_ids.clone(),
                    Effect::Title { .. } => Vec::new(),
                })
                .collect(),
        }
    }
}

pub fn insert(conn: &Connection, doc_id: &str, records: &[Arc<LogRecord>]) -> Result<()> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO doc_ops (doc_id, seq, op_id, kind, client_id, user_id, at, entry)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?;
    let mut changes = conn.prepare_cached(
        "INSERT OR IGNORE INTO block_changes (doc_id, block_id, seq) VALUES (?1, ?2, ?3)",
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
        for b in &r.blocks {
            changes.execute(params![doc_id, b, r.seq])?;
        }
    }
    Ok(())
}

/// One change of a bullet as its history shows it (PROTOCOL §8): from the log, or — past
/// the log's retention — the bullet's state in a kept version (`kind` "version").
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlockChange {
    pub seq: i64,
    pub at: i64,
    pub user_id: String,
    /// The author's display name (their user ID when the account is gone).
    pub name: String,
    /// The op kind (`insert`, `set_content`, `move`, `delete`, …, `purge`).
    pub kind: String,
    /// The bullet as this change left it (absent for a purge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    pub deleted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict_of: Option<String>,
    /// The version this state comes from (kind "version" only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_id: Option<String>,
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
        let entry: LogEntry = serde_json::from_str(&entry)
            .map_err(|e| StorageError::Corrupt(format!("doc_ops {seq}: {e}")))?;
        let block = entry.effects.iter().find_map(|e| match e {
            Effect::Block { block } if block.id == block_id => Some(block.clone()),
            _ => None,
        });
        let purged = block.is_none();
        out.push(BlockChange {
            seq,
            at,
            name: name.unwrap_or_else(|| user_id.clone()),
            user_id,
            kind: if purged { "purge".into() } else { kind },
            content: block.as_ref().map(|b| b.content.clone()),
            parent_id: block.as_ref().and_then(|b| b.parent_id.clone()),
            deleted: purged || block.as_ref().is_some_and(|b| b.deleted),
            conflict_of: block.and_then(|b| b.conflict_of.clone()),
            version_id: None,
        });
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
