//! Client IDs' owners, asked of whichever backend holds the data (same names in `sqlite.rs`
//! and `postgres.rs`).

use super::postgres;
use super::sqlite;
use crate::storage::db::{row_questions, Db};
use crate::storage::error::Result;

row_questions! {
    /// The owner of `client_id`, if anyone used it yet.
    pub fn owner(client_id: &str) -> Option<String>;
    /// Records `user_id` as the owner unless the ID has one.
    pub fn insert_unless_owned(client_id: &str, user_id: &str, now: i64) -> ();
}
