//! Accounts' rows, asked of whichever backend holds the data (same names in `sqlite.rs` and
//! `postgres.rs`). Secrets arrive here already hashed; names match whatever their case. A
//! deactivated user's tokens and sessions resolve to nobody.

use super::postgres;
use super::sqlite;
use super::types::{Scope, SessionRow, TokenInfo, TokenRow, User};
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
    pub fn insert_token(token: &TokenRow) -> ();
    /// The active user of a token not expired at `now`, its scope and when it expires.
    pub fn user_by_token_hash(token_hash: &str, now: i64) -> Option<(User, Scope, Option<i64>)>;
    pub fn list_tokens(user_id: &str) -> Vec<TokenInfo>;
    /// Deletes one of the user's tokens; false when it is not theirs or does not exist.
    pub fn delete_token(user_id: &str, token_id: &str) -> bool;
    pub fn delete_tokens_of(user_id: &str) -> ();
    /// Stores the password hash; false when there is no such user.
    pub fn store_password_hash(user_id: &str, phc: &str) -> bool;
    pub fn delete_login_sessions_of(user_id: &str) -> ();
    /// The user, their password hash and whether they are active.
    pub fn login_record(name: &str) -> Option<(User, Option<String>, bool)>;
    pub fn insert_login_session(secret_hash: &str, user_id: &str, now: i64, expires_at: i64, user_agent: &str) -> ();
    /// The active user of a session not expired at `now`, and when it expires.
    pub fn user_by_session_hash(secret_hash: &str, now: i64) -> Option<(User, i64)>;
    pub fn delete_login_session(secret_hash: &str) -> bool;
    /// The user's sessions not expired at `now`, newest first.
    pub fn sessions_of(user_id: &str, now: i64) -> Vec<SessionRow>;
    /// Ends the user's sessions whose hash starts with `hash_prefix` (16 hex digits).
    pub fn delete_session_by_prefix(user_id: &str, hash_prefix: &str) -> bool;
    /// Ends every session of the user but the one with `keep_hash`.
    pub fn delete_other_sessions(user_id: &str, keep_hash: &str) -> ();
    pub fn set_last_seen(user_id: &str, now: i64) -> ();
}
