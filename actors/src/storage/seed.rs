//! Bulk fixtures for tools (the benchmark): rows written through the same typed functions
//! the server writes with, so a schema change breaks the build here, not a benchmark run.

use std::sync::Arc;

use rusqlite::Connection;

use crate::collab::op::LogEntry;

use super::documents::{self, DocWrite};
use super::error::Result;
use super::log::LogRecord;

/// What `aged_documents` writes: `docs` documents owned by `owner`, each with
/// `rows_per_doc` `set_content` log entries (no effects) stamped from `at` on.
pub struct AgedLog<'a> {
    pub owner: &'a str,
    pub docs: usize,
    pub rows_per_doc: i64,
    /// Creation time of the documents and of their first entry (ms since the epoch).
    pub at: i64,
}

/// Creates the documents of `spec` with their log, as if they had been edited back then;
/// returns their IDs. Run it in one writer job: it is meant for a database no server uses.
pub fn aged_documents(conn: &Connection, spec: &AgedLog) -> Result<Vec<String>> {
    let mut ids = Vec::with_capacity(spec.docs);
    for d in 0..spec.docs {
        let doc_id = format!("doc_{}", uuid::Uuid::new_v4().simple());
        let title = format!("bench old log {d}");
        documents::create(conn, &doc_id, spec.owner, &title, None, spec.at)?;
        let log = (1..=spec.rows_per_doc)
            .map(|seq| {
                Arc::new(LogRecord::from_entry(&LogEntry {
                    seq,
                    op_id: format!("op_bench_{d}_{seq}"),
                    kind: "set_content".into(),
                    client_id: "cl_bench".into(),
                    user_id: spec.owner.to_string(),
                    at: spec.at + seq,
                    effects: Vec::new(),
                }))
            })
            .collect();
        documents::apply_write(
            conn,
            &DocWrite {
                doc_id: doc_id.clone(),
                expect_head: 0,
                head_after: spec.rows_per_doc,
                log,
                now: spec.at,
                ..DocWrite::default()
            },
        )?;
        ids.push(doc_id);
    }
    Ok(ids)
}
