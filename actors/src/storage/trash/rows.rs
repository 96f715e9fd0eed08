//! The trash's rows, asked of whichever backend holds the data (same names in `sqlite.rs`
//! and `postgres.rs`).

use super::postgres;
use super::sqlite;
use super::types::TrashedDoc;
use crate::storage::db::{row_questions, Db};
use crate::storage::error::Result;

row_questions! {
    /// Moves a document to its owner's trash; false when it is not there to move.
    pub fn trash(doc_id: &str, by: &str, now: i64) -> bool;
    /// The owner's trash, most recently deleted first (`purge_at` still the deletion time).
    pub fn list(owner: &str) -> Vec<TrashedDoc>;
    /// Whether `owner` has `doc_id` in the trash.
    pub fn is_trashed_by_owner(doc_id: &str, owner: &str) -> bool;
    /// Takes a document out of its owner's trash, with everything it had.
    pub fn untrash(doc_id: &str, owner: &str) -> bool;
    /// Documents trashed before `cutoff`, by ID.
    pub fn due(cutoff: i64) -> Vec<String>;
}
