//! Bulk fixtures for tools (the benchmark): rows written through the same typed functions
//! the server writes with, so a schema change breaks the build here, not a benchmark run.

use std::sync::Arc;

use rusqlite::Connection;

use crate::collab::block::Block;
use crate::collab::op::{Effect, LogEntry};

use crate::storage::documents::{self, DocWrite};
use crate::storage::error::Result;
use crate::storage::log::LogRecord;
use crate::storage::Db;

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
        documents::create(
            &mut Db::Sqlite(conn),
            &doc_id,
            spec.owner,
            &title,
            None,
            spec.at,
        )?;
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
            &mut Db::Sqlite(conn),
            &DocWrite {
                doc_id: doc_id.clone(),
                expect_head: 0,
                head_after: spec.rows_per_doc,
                log,
                now: spec.at,
                ..DocWrite::default()
            },
            0,
        )?;
        ids.push(doc_id);
    }
    Ok(ids)
}

/// A document of `blocks` bullets whose log holds `entries` changes, entry `n` rewriting
/// bullet `n % blocks` (so each bullet has `entries / blocks` changes spread over the whole
/// log); returns the document and its bullets' IDs. For a database no server uses.
pub fn long_history(
    conn: &Connection,
    owner: &str,
    blocks: usize,
    entries: i64,
    at: i64,
) -> Result<(String, Vec<String>)> {
    let doc_id = format!("doc_{}", uuid::Uuid::new_v4().simple());
    documents::create(
        &mut Db::Sqlite(conn),
        &doc_id,
        owner,
        "bench long history",
        None,
        at,
    )?;
    // Block IDs are unique across documents: each document's carry its own ID.
    let tag = &doc_id["doc_".len()..];
    let ids: Vec<String> = (0..blocks)
        .map(|i| format!("blk_bench_{tag}_{i}"))
        .collect();
    let mut state: Vec<Arc<Block>> = ids
        .iter()
        .enumerate()
        .map(|(i, id)| {
            let key = format!("a{i:06}");
            Arc::new(Block::new(id.clone(), None, key, String::new(), at, owner))
        })
        .collect();
    let mut log = Vec::with_capacity(entries as usize);
    for seq in 1..=entries {
        let i = (seq as usize - 1) % blocks;
        let mut b = (*state[i]).clone();
        b.content = format!("version {seq} of bullet {i}");
        b.version += 1;
        b.updated_at = at + seq;
        let b = Arc::new(b);
        state[i] = b.clone();
        log.push(Arc::new(LogRecord::from_entry(&LogEntry {
            seq,
            op_id: format!("op_bench_{seq}"),
            kind: "set_content".into(),
            client_id: "cl_bench".into(),
            user_id: owner.to_string(),
            at: at + seq,
            effects: vec![Effect::Block { block: b }],
        })));
    }
    documents::apply_write(
        &mut Db::Sqlite(conn),
        &DocWrite {
            doc_id: doc_id.clone(),
            expect_head: 0,
            head_after: entries,
            blocks: state,
            log,
            now: at + entries,
            ..DocWrite::default()
        },
        0,
    )?;
    Ok((doc_id, ids))
}
