//! The op log and idempotency results in PostgreSQL: the same typed functions as the SQLite
//! backend's `storage::log` (pages after a seq, the pre-check, the op IDs for the actor's
//! filter, a bullet's history), with the same answers — `tests.rs` checks both backends
//! against each other on random histories.

use std::sync::Arc;

use postgres::GenericClient;
use serde_json::value::RawValue;

use super::types::{BlockChange, LogRecord, Precheck};
use crate::collab::op::OpResult;
use crate::storage::error::{Result, StorageError};

/// Log entries with `after < seq <= upto`, at most `limit`, in order.
pub fn read_after(
    c: &mut impl GenericClient,
    doc_id: &str,
    after: i64,
    upto: i64,
    limit: usize,
) -> Result<Vec<Arc<LogRecord>>> {
    let rows = c.query(
        "SELECT seq, op_id, kind, client_id, user_id, at, entry FROM doc_ops
          WHERE doc_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4",
        &[&doc_id, &after, &upto, &(limit as i64)],
    )?;
    rows.iter()
        .map(|r| {
            let seq: i64 = r.get(0);
            let json = RawValue::from_string(r.get(6))
                .map_err(|e| StorageError::Corrupt(format!("doc_ops {seq}: {e}")))?;
            Ok(Arc::new(LogRecord {
                seq,
                op_id: r.get(1),
                kind: r.get(2),
                client_id: r.get(3),
                user_id: r.get(4),
                at: r.get(5),
                json,
                blocks: Vec::new(),
            }))
        })
        .collect()
}

/// Every op ID the document has a stored result for.
pub fn for_each_result_op_id(
    c: &mut impl GenericClient,
    doc_id: &str,
    mut f: impl FnMut(&str),
) -> Result<()> {
    for r in c.query(
        "SELECT op_id FROM doc_op_results WHERE doc_id = $1",
        &[&doc_id],
    )? {
        f(r.get::<_, &str>(0));
    }
    Ok(())
}

/// Results already given for these op IDs, and which named block IDs belong elsewhere.
pub fn precheck<'a>(
    c: &mut impl GenericClient,
    doc_id: &str,
    op_ids: impl IntoIterator<Item = &'a str>,
    block_ids: impl IntoIterator<Item = &'a str>,
) -> Result<Precheck> {
    let mut out = Precheck::default();
    let ops: Vec<&str> = op_ids.into_iter().collect();
    for r in c.query(
        "SELECT op_id, result FROM doc_op_results WHERE doc_id = $1 AND op_id = ANY($2)",
        &[&doc_id, &ops],
    )? {
        let result: OpResult = serde_json::from_str(r.get::<_, &str>(1))
            .map_err(|e| StorageError::Corrupt(e.to_string()))?;
        out.known.insert(r.get::<_, String>(0), result);
    }
    let blocks: Vec<&str> = block_ids.into_iter().collect();
    for r in c.query(
        "SELECT id FROM blocks WHERE id = ANY($1) AND doc_id <> $2
         UNION SELECT id FROM purged_blocks WHERE id = ANY($1) AND doc_id <> $2",
        &[&blocks, &doc_id],
    )? {
        out.foreign.insert(r.get::<_, String>(0));
    }
    Ok(out)
}

/// The changes of one bullet still in the log, newest first, below `before`, at most
/// `limit`, with the authors' names (their user IDs when the account is gone).
pub fn block_history(
    c: &mut impl GenericClient,
    doc_id: &str,
    block_id: &str,
    before: i64,
    limit: usize,
) -> Result<Vec<BlockChange>> {
    let rows = c.query(
        "SELECT o.seq, o.at, o.user_id, o.kind, o.entry, u.display_name
           FROM block_changes b JOIN doc_ops o ON o.doc_id = b.doc_id AND o.seq = b.seq
           LEFT JOIN users u ON u.id = o.user_id
          WHERE b.doc_id = $1 AND b.block_id = $2 AND b.seq < $3
          ORDER BY b.seq DESC LIMIT $4",
        &[&doc_id, &block_id, &before, &(limit as i64)],
    )?;
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let seq: i64 = r.get(0);
        out.push(BlockChange::from_entry(
            block_id,
            seq,
            r.get(1),
            r.get(2),
            r.get(3),
            r.get::<_, &str>(4),
            r.get(5),
        )?);
    }
    Ok(out)
}
