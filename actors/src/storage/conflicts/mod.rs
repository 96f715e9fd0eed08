//! Open conflict copies (PROTOCOL §8 conflict review): every live copy not yet marked
//! resolved, with the text it was made from and the original's text now, in the order they
//! were made. Resolving is ordinary ops of the reviewer (accept: the copy's text into the
//! original and the copy deleted; discard: the copy deleted; keep both: `conflictResolved`).

mod postgres;
mod rows;
mod sqlite;
mod types;

pub use rows::in_document;
pub use types::OpenConflict;

use super::db::Db;
use super::error::Result;
use super::roles::then_guest_part;

/// Open conflicts the user may review, oldest first, at most `limit`: in every document
/// they read, then inside the bullets shared with them elsewhere (PROTOCOL §10: a copy and
/// its original both inside their part, titled by the shared bullet).
pub fn readable(db: &mut Db, user_id: &str, limit: usize) -> Result<Vec<OpenConflict>> {
    let found = rows::readable(db, user_id, limit)?;
    then_guest_part(found, limit, |room| rows::guest_readable(db, user_id, room))
}
