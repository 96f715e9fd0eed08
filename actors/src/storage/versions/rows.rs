//! Versions' rows, asked of whichever backend holds the data (same names in `sqlite.rs` and
//! `postgres.rs`).

use super::postgres;
use super::sqlite;
use super::types::{NewVersion, Retained, VersionMeta, VersionState};
use crate::storage::db::{row_questions, Db};
use crate::storage::error::Result;

row_questions! {
    /// Reserves a version's row (body still empty), refused unless the head on disk is its
    /// `seq` (and, in cluster mode, unless this node still owns the document at `epoch`).
    pub fn reserve(v: &NewVersion, epoch: i64) -> ();
    /// Stores the compressed body of a reserved version.
    pub fn fill(doc_id: &str, version_id: &str, body: &[u8], raw: usize) -> VersionMeta;
    /// Clears reservations older than `before` that were never filled; how many.
    pub fn forget_unfilled(before: i64) -> usize;
    /// The document's versions, newest first.
    pub fn list(doc_id: &str) -> Vec<VersionMeta>;
    pub fn meta(doc_id: &str, version_id: &str) -> Option<VersionMeta>;
    pub fn get(doc_id: &str, version_id: &str) -> Option<(VersionMeta, VersionState)>;
    /// Up to `limit` versions at or below `seq`, newest first, with their states.
    pub fn states_at_or_below(doc_id: &str, seq: i64, limit: usize) -> Vec<(VersionMeta, VersionState)>;
    /// (seq, at) of the newest version.
    pub fn latest(doc_id: &str) -> Option<(i64, i64)>;
    pub fn rename(doc_id: &str, version_id: &str, name: &str) -> bool;
    /// Deletes a named version: None when there is none, Some(false) when it is not named.
    pub fn delete_named(doc_id: &str, version_id: &str) -> Option<bool>;
    /// Every automatic (and before-restore) version older than `older_than`.
    pub fn automatic_older_than(older_than: i64) -> Vec<Retained>;
    pub fn delete_ids(ids: &[String]) -> usize;
    /// How many versions are kept and their stored bytes.
    pub fn totals() -> (i64, i64);
}
