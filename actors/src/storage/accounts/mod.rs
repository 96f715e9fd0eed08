//! Users, API tokens, login sessions and the password record. Tokens and session secrets are
//! 256-bit random values shown once; at rest only their SHA-256 is kept (a slow hash adds
//! nothing for secrets with that much entropy, and token checks run on every request). These
//! rules are written here once; the backends store and find rows by hash.

mod postgres;
mod rows;
mod sqlite;
mod types;

pub use rows::{count_users, delete_token, list_tokens, login_record, user_by_id, user_by_name};
pub use types::{TokenInfo, User};

/// People to pick when sharing: names or display names containing `text` (any case), by
/// display name, at most `limit`. `%`, `_` and `\` in the text match themselves.
pub fn find_users(db: &mut Db, text: &str, limit: usize) -> Result<Vec<User>> {
    let mut pattern = String::from("%");
    for ch in text.trim().chars() {
        if matches!(ch, '%' | '_' | '\\') {
            pattern.push('\\');
        }
        pattern.push(ch);
    }
    pattern.push('%');
    rows::users_matching(db, &pattern, limit as i64)
}

use rand_core::{OsRng, TryRngCore};
use sha2::{Digest, Sha256};

use super::db::Db;
use super::error::{Result, StorageError};

/// A new ID: the prefix and a time-ordered UUID.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}{}", uuid::Uuid::now_v7().simple())
}

/// What is stored of a secret: its SHA-256, in hex.
pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// 256 random bits from the OS, in hex after `prefix`.
fn random_secret(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    OsRng.try_fill_bytes(&mut bytes).expect("OS random source");
    format!("{prefix}{}", hex::encode(bytes))
}

/// Creates a user; `Conflict` when the name is taken, whatever its case.
pub fn create_user(
    db: &mut Db,
    name: &str,
    display_name: &str,
    is_admin: bool,
    now: i64,
) -> Result<User> {
    let user = User {
        id: new_id("usr_"),
        name: name.to_string(),
        display_name: display_name.to_string(),
        is_admin,
    };
    if !rows::insert_user(db, &user, now)? {
        return Err(StorageError::Conflict(format!(
            "user {name:?} already exists"
        )));
    }
    Ok(user)
}

/// A new token's ID and its clear text — the only time the text is visible.
pub fn create_token_with_id(
    db: &mut Db,
    user_id: &str,
    label: &str,
    now: i64,
) -> Result<(String, String)> {
    let token = random_secret("dst_");
    let id = new_id("tok_");
    rows::insert_token(db, &id, user_id, &hash_token(&token), label, now)?;
    Ok((id, token))
}

/// Creates a token for the user and returns it in clear text — the only time it is visible.
pub fn create_token(db: &mut Db, user_id: &str, label: &str, now: i64) -> Result<String> {
    Ok(create_token_with_id(db, user_id, label, now)?.1)
}

/// The user a bearer token belongs to, if the token exists.
pub fn user_by_token(db: &mut Db, token: &str) -> Result<Option<User>> {
    rows::user_by_token_hash(db, &hash_token(token))
}

/// Stores a password hash (PHC string, computed by the caller) and ends every login
/// session of the user, so a changed password locks out whoever had the old one.
pub fn set_password_hash(db: &mut Db, user_id: &str, phc: &str) -> Result<()> {
    if !rows::store_password_hash(db, user_id, phc)? {
        return Err(StorageError::NotFound(format!("user {user_id}")));
    }
    rows::delete_login_sessions_of(db, user_id)
}

/// Starts a login session of `ttl_ms` and returns the cookie value (only its hash is stored).
pub fn create_login_session(db: &mut Db, user_id: &str, now: i64, ttl_ms: i64) -> Result<String> {
    let secret = random_secret("dss_");
    rows::insert_login_session(db, &hash_token(&secret), user_id, now, now + ttl_ms)?;
    Ok(secret)
}

/// The session's user and the moment the session ends (unix ms), for callers that remember
/// the answer (the server's access cache checks that moment on every hit).
pub fn user_by_session_until(db: &mut Db, secret: &str, now: i64) -> Result<Option<(User, i64)>> {
    rows::user_by_session_hash(db, &hash_token(secret), now)
}

pub fn user_by_session(db: &mut Db, secret: &str, now: i64) -> Result<Option<User>> {
    Ok(user_by_session_until(db, secret, now)?.map(|(user, _)| user))
}

/// Ends a login session; false when there was none.
pub fn end_login_session(db: &mut Db, secret: &str) -> Result<bool> {
    rows::delete_login_session(db, &hash_token(secret))
}
