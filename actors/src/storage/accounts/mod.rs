//! Users, API tokens, login sessions and the password record. Tokens and session secrets are
//! 256-bit random values shown once; at rest only their SHA-256 is kept (a slow hash adds
//! nothing for secrets with that much entropy, and token checks run on every request). These
//! rules are written here once; the backends store and find rows by hash.

mod postgres;
mod rows;
mod sqlite;
mod types;

pub use rows::{count_users, delete_token, list_tokens, login_record, user_by_id, user_by_name};
pub use types::{Scope, SessionInfo, TokenInfo, User};

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
pub(crate) fn random_secret(prefix: &str) -> String {
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

/// A new token's ID and its clear text — the only time the text is visible. The text
/// starts with its scope's prefix (`Scope::token_prefix`).
pub fn create_token_with_id(
    db: &mut Db,
    user_id: &str,
    label: &str,
    scope: Scope,
    expires_at: Option<i64>,
    now: i64,
) -> Result<(String, String)> {
    let token = random_secret(scope.token_prefix());
    let id = new_id("tok_");
    let hash = hash_token(&token);
    let row = types::TokenRow {
        id: &id,
        user_id,
        hash: &hash,
        label,
        scope,
        expires_at,
        created_at: now,
    };
    rows::insert_token(db, &row)?;
    Ok((id, token))
}

/// Creates a token of every right of its user (the CLI's) and returns it in clear text —
/// the only time it is visible.
pub fn create_token(db: &mut Db, user_id: &str, label: &str, now: i64) -> Result<String> {
    Ok(create_token_with_id(db, user_id, label, Scope::Admin, None, now)?.1)
}

/// The user a bearer token belongs to, its scope and when it expires — if the token exists,
/// has not expired at `now`, its user is active, and the scope its prefix claims is the one
/// it was made with.
pub fn user_by_token(
    db: &mut Db,
    token: &str,
    now: i64,
) -> Result<Option<(User, Scope, Option<i64>)>> {
    let Some(claimed) = Scope::of_token(token) else {
        return Ok(None);
    };
    Ok(rows::user_by_token_hash(db, &hash_token(token), now)?
        .filter(|(_, scope, _)| *scope == claimed))
}

/// Stores a password hash (PHC string, computed by the caller) and ends every login
/// session of the user, so a changed password locks out whoever had the old one.
pub fn set_password_hash(db: &mut Db, user_id: &str, phc: &str) -> Result<()> {
    if !rows::store_password_hash(db, user_id, phc)? {
        return Err(StorageError::NotFound(format!("user {user_id}")));
    }
    rows::delete_login_sessions_of(db, user_id)
}

/// A person changes their own password: every other session of theirs ends, the one they
/// changed it in (`keep_secret`) goes on.
pub fn change_own_password(db: &mut Db, user_id: &str, phc: &str, keep_secret: &str) -> Result<()> {
    if !rows::store_password_hash(db, user_id, phc)? {
        return Err(StorageError::NotFound(format!("user {user_id}")));
    }
    rows::delete_other_sessions(db, user_id, &hash_token(keep_secret))
}

/// Starts a login session of `ttl_ms` and returns the cookie value (only its hash is stored).
pub fn create_login_session(
    db: &mut Db,
    user_id: &str,
    now: i64,
    ttl_ms: i64,
    user_agent: &str,
) -> Result<String> {
    let secret = random_secret("dss_");
    // What the "signed in on" list shows; a header is anyone's to fill, so it is bounded.
    let agent: String = user_agent.chars().take(200).collect();
    rows::insert_login_session(db, &hash_token(&secret), user_id, now, now + ttl_ms, &agent)?;
    rows::set_last_seen(db, user_id, now)?;
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

/// The public name of a session: the first 16 hex digits of its stored hash.
fn session_id(hash: &str) -> String {
    hash.chars().take(16).collect()
}

/// The user's sessions, newest first; `current` marks the one presented now, if any.
pub fn sessions(
    db: &mut Db,
    user_id: &str,
    current_secret: Option<&str>,
    now: i64,
) -> Result<Vec<SessionInfo>> {
    let current = current_secret.map(hash_token);
    Ok(rows::sessions_of(db, user_id, now)?
        .into_iter()
        .map(|(hash, created_at, expires_at, user_agent)| SessionInfo {
            session_id: session_id(&hash),
            current: current.as_deref() == Some(hash.as_str()),
            created_at,
            expires_at,
            user_agent,
        })
        .collect())
}

/// Ends one of the user's sessions by its public name; false when they have none by it.
pub fn end_session_by_id(db: &mut Db, user_id: &str, session_id: &str) -> Result<bool> {
    let well_formed = session_id.len() == 16 && session_id.bytes().all(|b| b.is_ascii_hexdigit());
    if !well_formed {
        return Ok(false);
    }
    rows::delete_session_by_prefix(db, user_id, &session_id.to_ascii_lowercase())
}

/// Every session and token of the user ends (deactivation).
pub fn end_every_credential(db: &mut Db, user_id: &str) -> Result<()> {
    rows::delete_login_sessions_of(db, user_id)?;
    rows::delete_tokens_of(db, user_id)
}
