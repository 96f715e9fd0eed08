//! The feed's rows, asked of whichever backend holds the data (same names in `sqlite.rs` and
//! `postgres.rs`).

use super::postgres;
use super::sqlite;
use super::types::FeedRow;
use crate::storage::db::{row_questions, Db};
use crate::storage::error::Result;

row_questions! {
    /// Whether committed entries wait for their number (PostgreSQL; never on SQLite).
    pub fn unnumbered() -> bool;
    /// Numbers up to `max` committed entries in the order they became visible; how many.
    pub fn number_committed(max: usize) -> usize;
    /// The rows after `after`, in feed order, at most `limit`, with their entries.
    pub fn rows_after(after: i64, limit: usize) -> Vec<FeedRow>;
    /// The newest number given (0 before any).
    pub fn head() -> i64;
    /// Forgets the document's rows below `seq` (entries compaction took): the row at `seq`
    /// stays, to tell a reader behind it to resync once.
    pub fn forget_before(doc_id: &str, seq: i64) -> usize;
}
