//! People's rows for admins (same names in `sqlite.rs` and `postgres.rs`).

use super::postgres;
use super::sqlite;
use super::types::{Account, Transferred};
use crate::storage::db::{row_questions, Db};
use crate::storage::error::Result;

row_questions! {
    /// Everyone, by display name.
    pub fn list_people() -> Vec<Account>;
    pub fn person(user_id: &str) -> Option<Account>;
    /// Active admins other than `except`.
    pub fn other_active_admins(except: &str) -> i64;
    /// Sets or clears `deactivated_at`; false when there is no such user.
    pub fn set_deactivated(user_id: &str, at: Option<i64>) -> bool;
    pub fn set_admin(user_id: &str, admin: bool) -> bool;
    pub fn set_display_name(user_id: &str, display_name: &str) -> bool;
    /// Gives `from`'s documents, folders and teams to `to`; `to`'s own shares on what it
    /// now owns go (an owner needs none).
    pub fn transfer_owned(from: &str, to: &str) -> Transferred;
    /// Deletes the user row and the shares that name them without a foreign key (folder
    /// shares by principal); the rest goes by cascade.
    pub fn delete_person(user_id: &str) -> bool;
}
