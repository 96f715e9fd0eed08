//! Documents: create, load, the fenced write of a sync's effects, icon, delete. Every write
//! checks the head it expects (and in cluster mode the owner's epoch), so a write computed on
//! a state that never reached the disk can never land.

mod postgres;
mod rows;
mod sqlite;
mod types;

pub use rows::{apply_write, create, delete, load, load_floor, meta_title, set_icon};
pub use types::DocWrite;

/// One line of a user's document list (made by the role function that fills it in).
pub use super::roles::DocSummary;

use super::db::Db;
use super::error::Result;

/// Documents the user can read, newest first, with the role and how it was obtained.
pub fn list_readable(db: &mut Db, user_id: &str) -> Result<Vec<DocSummary>> {
    super::roles::readable_documents(db, user_id)
}
