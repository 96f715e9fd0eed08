//! The rows compaction reads and removes, asked of whichever backend holds the data (same
//! names in `sqlite.rs` and `postgres.rs`). Deletes go in chunks, so a big backlog never
//! holds the writer for long.

use super::postgres;
use super::sqlite;
use super::types::Cutoffs;
use crate::storage::db::{row_questions, Db};
use crate::storage::error::Result;

row_questions! {
    /// Documents with a log entry above the floor older than `log`, one at or below the
    /// floor, a tombstone older than `tombstones`, or a result older than `results`; by ID.
    pub fn due_documents(at: &Cutoffs) -> Vec<String>;
    /// The newest log entry at or below `head` written before `cutoff`.
    pub fn newest_entry_before(doc_id: &str, cutoff: i64, head: i64) -> Option<i64>;
    /// Moves the floor up to `floor` (never down).
    pub fn raise_floor_to(doc_id: &str, floor: i64) -> ();
    pub fn floor(doc_id: &str) -> i64;
    /// Forgets which bullets the log entries at or below `floor` changed.
    pub fn delete_block_changes(doc_id: &str, floor: i64) -> usize;
    /// Deletes up to `limit` log rows at or below the floor; how many went.
    pub fn delete_log_chunk(doc_id: &str, floor: i64, limit: usize) -> usize;
    /// Deletes up to `limit` idempotency results older than `cutoff`.
    pub fn delete_results_chunk(doc_id: &str, cutoff: i64, limit: usize) -> usize;
}
