//! The owner's trash: a deleted document keeps every row (blocks, log, shares, versions) and
//! is invisible to the role function (`roles::doc_grant`) until its owner restores it or
//! `history.trash_days` pass and the compaction supervisor purges it for good.

mod postgres;
mod rows;
mod sqlite;
mod types;

pub use rows::{due, is_trashed_by_owner, trash, untrash};
pub use types::TrashedDoc;

use super::db::Db;
use super::error::Result;

/// The owner's trash, most recently deleted first, each with the moment it is purged:
/// `keep_ms` after it was deleted.
pub fn list(db: &mut Db, owner: &str, keep_ms: i64) -> Result<Vec<TrashedDoc>> {
    let mut docs = rows::list(db, owner)?;
    for d in &mut docs {
        d.purge_at = d.trashed_at + keep_ms;
    }
    Ok(docs)
}
