//! Documents' rows, asked of whichever backend holds the data (same names in `sqlite.rs` and
//! `postgres.rs`).

use super::postgres;
use super::sqlite;
use super::types::DocWrite;
use crate::collab::document::DocState;
use crate::storage::db::{row_questions, Db};
use crate::storage::error::Result;

/// Writes one sync's effects, fenced by the head it expects — and in cluster mode by the
/// owner's epoch: a node whose epoch is stale gets `NotOwner` and nothing is written. On
/// PostgreSQL through the statements the writer keeps prepared, when it is the writer.
pub fn apply_write(db: &mut Db<'_, '_>, w: &DocWrite, epoch: i64) -> Result<()> {
    match db {
        Db::Sqlite(c) => sqlite::apply_write(c, w, epoch),
        Db::Postgres(t, Some(kept)) => postgres::apply_write(t, kept, w, epoch),
        Db::Postgres(t, None) => postgres::apply_write(t, &mut Default::default(), w, epoch),
    }
}

row_questions! {
    pub fn create(id: &str, owner: &str, title: &str, folder: Option<&str>, now: i64) -> ();
    /// The actor's state: title, blocks, head and floor.
    pub fn load(doc_id: &str) -> DocState;
    pub fn set_icon(doc_id: &str, icon: Option<&str>, now: i64) -> ();
    /// Deletes the document and everything of it; false when there was none.
    pub fn delete(doc_id: &str) -> bool;
    /// The log floor: the log holds every entry above it.
    pub fn load_floor(doc_id: &str) -> i64;
    pub fn meta_title(doc_id: &str) -> Option<String>;
}
