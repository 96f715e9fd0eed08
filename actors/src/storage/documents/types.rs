//! What a sync writes to a document.

use std::sync::Arc;

use crate::collab::block::Block;
use crate::storage::derived::TagBound;
use crate::storage::log::LogRecord;

/// Everything one `/sync` changed, computed by the document actor and written in one go.
#[derive(Debug, Clone, Default)]
pub struct DocWrite {
    pub doc_id: String,
    /// `head_seq` the actor's state had before this write; the write fails if the row differs.
    pub expect_head: i64,
    pub head_after: i64,
    pub title: Option<(String, i64)>,
    /// Final state of every block the request changed (one entry per block).
    pub blocks: Vec<Arc<Block>>,
    pub purged: Vec<String>,
    pub log: Vec<Arc<LogRecord>>,
    /// (opId, result JSON) of every op answered for the first time.
    pub results: Vec<(String, String)>,
    pub now: i64,
    /// Most tags indexed per block.
    pub tags: TagBound,
}
