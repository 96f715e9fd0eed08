//! The log's rows, asked of whichever backend holds the data (same names in `sqlite.rs` and
//! `postgres.rs`).

use std::sync::Arc;

use super::postgres;
use super::sqlite;
use super::types::{BlockChange, LogRecord, Precheck};
use crate::storage::db::{row_questions, Db};
use crate::storage::error::Result;

row_questions! {
    /// Entries after `after` up to `upto`, at most `limit`, in order.
    pub fn read_after(doc_id: &str, after: i64, upto: i64, limit: usize) -> Vec<Arc<LogRecord>>;
    /// One bullet's changes still in the log, newest first, below `before`.
    pub fn block_history(doc_id: &str, block_id: &str, before: i64, limit: usize) -> Vec<BlockChange>;
    /// Calls `f` with every op ID the document has a stored result for.
    pub fn for_each_result_op_id(doc_id: &str, f: impl FnMut(&str)) -> ();
    /// Results already given for the op IDs, and which block IDs belong elsewhere.
    pub fn precheck<'a>(
        doc_id: &str,
        op_ids: impl IntoIterator<Item = &'a str>,
        block_ids: impl IntoIterator<Item = &'a str>,
    ) -> Precheck;
}
