//! Open conflict copies, asked of whichever backend holds the data (same names in
//! `sqlite.rs` and `postgres.rs`).

use super::postgres;
use super::sqlite;
use super::types::OpenConflict;
use crate::storage::db::{row_questions, Db};
use crate::storage::error::Result;

row_questions! {
    /// Open conflicts of one document, oldest first, at most `limit`.
    pub fn in_document(doc_id: &str, limit: usize) -> Vec<OpenConflict>;
    /// Open conflicts of every document `user_id` can read, oldest first, at most `limit`.
    pub fn readable(user_id: &str, limit: usize) -> Vec<OpenConflict>;
    /// Open conflicts inside the bullets shared with `user_id` (copy and original both
    /// inside), titled by the shared bullet, oldest first, at most `limit`.
    pub fn guest_readable(user_id: &str, limit: usize) -> Vec<OpenConflict>;
}
