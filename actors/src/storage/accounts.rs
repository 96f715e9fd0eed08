//! Users, API tokens, login sessions and the password record.

use super::db::dispatch;
use super::db::Db;
use super::error::Result;
use super::postgres::accounts as pg;
use super::sqlite::accounts as lite;

pub use lite::{hash_token, new_id, TokenInfo, User};

dispatch! {
    pub fn create_user(name: &str, display_name: &str, is_admin: bool, now: i64) -> User
        => lite::create_user, pg::create_user;
    pub fn user_by_name(name: &str) -> Option<User> => lite::user_by_name, pg::user_by_name;
    pub fn user_by_id(id: &str) -> Option<User> => lite::user_by_id, pg::user_by_id;
    pub fn count_users() -> i64 => lite::count_users, pg::count_users;
    /// A new token's ID and its clear text — the only time the text is visible.
    pub fn create_token_with_id(user_id: &str, label: &str, now: i64) -> (String, String)
        => lite::create_token_with_id, pg::create_token_with_id;
    pub fn user_by_token(token: &str) -> Option<User> => lite::user_by_token, pg::user_by_token;
    pub fn set_password_hash(user_id: &str, phc: &str) -> ()
        => lite::set_password_hash, pg::set_password_hash;
    pub fn login_record(name: &str) -> Option<(User, Option<String>)>
        => lite::login_record, pg::login_record;
    pub fn create_login_session(user_id: &str, now: i64, ttl_ms: i64) -> String
        => lite::create_login_session, pg::create_login_session;
    /// The session's user and the moment the session ends (unix ms).
    pub fn user_by_session_until(secret: &str, now: i64) -> Option<(User, i64)>
        => lite::user_by_session_until, pg::user_by_session_until;
    pub fn end_login_session(secret: &str) -> bool => lite::end_login_session, pg::end_login_session;
    pub fn list_tokens(user_id: &str) -> Vec<TokenInfo> => lite::list_tokens, pg::list_tokens;
    pub fn delete_token(user_id: &str, token_id: &str) -> bool => lite::delete_token, pg::delete_token;
}

/// Creates a token for the user and returns it in clear text — the only time it is visible.
pub fn create_token(db: &mut Db, user_id: &str, label: &str, now: i64) -> Result<String> {
    Ok(create_token_with_id(db, user_id, label, now)?.1)
}

pub fn user_by_session(db: &mut Db, secret: &str, now: i64) -> Result<Option<User>> {
    Ok(user_by_session_until(db, secret, now)?.map(|(user, _)| user))
}
