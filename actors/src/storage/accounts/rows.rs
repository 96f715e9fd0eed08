//! Accounts' rows, asked of whichever backend holds the data (same names in `sqlite.rs` and
//! `postgres.rs`). Secrets arrive here already hashed; names match whatever their case.

use super::postgres;
use super::sqlite;
use super::types::{TokenInfo, User};
use crate::storage::db::{row_questions, Db};
use crate::storage::error::Result;

row_questions! {
    /// Inserts the user; false when the name is taken (in any case).
    pub fn insert_user(user: &User, now: i64) -> bool;
    pub fn user_by_name(name: &str) -> Option<User>;
    pub fn user_by_id(id: &str) -> Option<User>;
    /// Users whose name or display name matches a LIKE pattern (case-insensitive, `\\`
    /// escapes), by display name, at most `limit`.
    pub fn users_matching(pattern: &str, limit: i64) -> Vec<User>;
    pub fn count_users() -> i64;
    pub fn insert_token(token_id: &str, user_id: &str, token_hash: &str, label: &str, now: i64) -> ();
    pub fn user_by_token_hash(token_hash: &str) -> Option<User>;
    pub fn list_tokens(user_id: &str) -> Vec<TokenInfo>;
    /// Deletes one of the user's tokens; false when it is not theirs or does not exist.
    pub fn delete_token(user_id: &str, token_id: &str) -> bool;
    /// Stores the password hash; false when there is no such user.
    pub fn store_password_hash(user_id: &str, phc: &str) -> bool;
    pub fn delete_login_sessions_of(user_id: &str) -> ();
    /// The user and their password hash.
    pub fn login_record(name: &str) -> Option<(User, Option<String>)>;
    pub fn insert_login_session(secret_hash: &str, user_id: &str, now: i64, expires_at: i64) -> ();
    /// The user of a session not expired at `now`, and when it expires.
    pub fn user_by_session_hash(secret_hash: &str, now: i64) -> Option<(User, i64)>;
    pub fn delete_login_session(secret_hash: &str) -> bool;
}
