//! The audit log's rows (same names in `sqlite.rs` and `postgres.rs`).

use super::postgres;
use super::sqlite;
use super::types::{AuditEvent, AuditFilter, AuditRow};
use crate::storage::db::{row_questions, Db};
use crate::storage::error::Result;

row_questions! {
    /// The event at `at`, its detail as JSON text.
    pub fn insert_row(at: i64, event: &AuditEvent, detail: &str) -> ();
    /// Newest first.
    pub fn list_rows(filter: &AuditFilter) -> Vec<AuditRow>;
    /// Deletes rows older than `at`; how many.
    pub fn delete_before(at: i64) -> u64;
}
