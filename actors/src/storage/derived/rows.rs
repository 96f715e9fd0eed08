//! Derived rows the reads need, asked of whichever backend holds the data (same names in
//! `sqlite.rs` and `postgres.rs`). The writes are called by each backend's own
//! `documents::apply_write`, inside its transaction.

use super::postgres;
use super::sqlite;
use super::types::MarkdownRow;
use crate::storage::db::{row_questions, Db};
use crate::storage::error::Result;

row_questions! {
    /// (id, parent, order key, markdown line) of every live bullet.
    pub fn markdown_rows(doc_id: &str) -> Vec<MarkdownRow>;
}
