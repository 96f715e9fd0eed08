//! Users and API tokens. Tokens are 256-bit random secrets shown once; at rest only their
//! SHA-256 is kept (a slow hash adds nothing for secrets with that much entropy, and token
//! checks run on every request).

use rand_core::{OsRng, TryRngCore};
use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::storage::error::{Result, StorageError};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct User {
    pub id: String,
    pub name: String,
    pub display_name: String,
    pub is_admin: bool,
}

pub fn new_id(prefix: &str) -> String {
    format!("{prefix}{}", uuid::Uuid::now_v7().simple())
}

pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

pub(crate) fn random_token() -> String {
    let mut bytes = [0u8; 32];
    OsRng.try_fill_bytes(&mut bytes).expect("OS random source");
    format!("dst_{}", hex::encode(bytes))
}

pub fn create_user(
    conn: &Connection,
    name: &str,
    display_name: &str,
    is_admin: bool,
    now: i64,
) -> Result<User> {
    let id = new_id("usr_");
    let n = conn.execute(
        "INSERT INTO users (id, name, display_name, is_admin, created_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT(name) DO NOTHING",
        params![id, name, display_name, is_admin, now],
    )?;
    if n == 0 {
        return Err(StorageError::Conflict(format!(
            "user {name:?} already exists"
        )));
    }
    Ok(User {
        id,
        name: name.to_string(),
        display_name: display_name.to_string(),
        is_admin,
    })
}

fn user_from_row(r: &rusqlite::Row) -> rusqlite::Result<User> {
    Ok(User {
        id: r.get(0)?,
        name: r.get(1)?,
        display_name: r.get(2)?,
        is_admin: r.get(3)?,
    })
}

pub fn user_by_name(conn: &Connection, name: &str) -> Result<Option<User>> {
    Ok(conn
        .query_row(
            "SELECT id, name, display_name, is_admin FROM users WHERE name = ?1",
            [name],
            user_from_row,
        )
        .optional()?)
}

pub fn user_by_id(conn: &Connection, id: &str) -> Result<Option<User>> {
    Ok(conn
        .query_row(
            "SELECT id, name, display_name, is_admin FROM users WHERE id = ?1",
            [id],
            user_from_row,
        )
        .optional()?)
}

pub fn count_users(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("SELECT count(*) FROM users", [], |r| r.get(0))?)
}

/// Creates a token for the user and returns it in clear text — the only time it is visible.
pub fn create_token(conn: &Connection, user_id: &str, label: &str, now: i64) -> Result<String> {
    let token = random_token();
    conn.execute(
        "INSERT INTO api_tokens (id, user_id, token_hash, label, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![new_id("tok_"), user_id, hash_token(&token), label, now],
    )?;
    Ok(token)
}

/// The user a bearer token belongs to, if the token exists.
pub fn user_by_token(conn: &Connection, token: &str) -> Result<Option<User>> {
    Ok(conn
        .prepare_cached(
            "SELECT u.id, u.name, u.display_name, u.is_admin FROM api_tokens t
             JOIN users u ON u.id = t.user_id WHERE t.token_hash = ?1",
        )?
        .query_row([hash_token(token)], user_from_row)
        .optional()?)
}

/// Stores a password hash (PHC string, computed by the caller) and ends every login
/// session of the user, so a changed password locks out whoever had the old one.
pub fn set_password_hash(conn: &Connection, user_id: &str, phc: &str) -> Result<()> {
    let n = conn.execute(
        "UPDATE users SET password_hash = ?2 WHERE id = ?1",
        params![user_id, phc],
    )?;
    if n == 0 {
        return Err(StorageError::NotFound(format!("user {user_id}")));
    }
    conn.execute("DELETE FROM login_sessions WHERE user_id = ?1", [user_id])?;
    Ok(())
}

/// The user and their password hash, for a login attempt.
pub fn login_record(conn: &Connection, name: &str) -> Result<Option<(User, Option<String>)>> {
    Ok(conn
        .query_row(
            "SELECT id, name, display_name, is_admin, password_hash FROM users WHERE name = ?1",
            [name],
            |r| Ok((user_from_row(r)?, r.get::<_, Option<String>>(4)?)),
        )
        .optional()?)
}

/// Starts a login session and returns the cookie value (only its hash is stored).
pub fn create_login_session(
    conn: &Connection,
    user_id: &str,
    now: i64,
    ttl_ms: i64,
) -> Result<String> {
    let secret = random_token().replacen("dst_", "dss_", 1);
    conn.execute(
        "INSERT INTO login_sessions (token_hash, user_id, created_at, expires_at, last_seen_at)
         VALUES (?1, ?2, ?3, ?4, ?3)",
        params![hash_token(&secret), user_id, now, now + ttl_ms],
    )?;
    Ok(secret)
}

pub fn user_by_session(conn: &Connection, secret: &str, now: i64) -> Result<Option<User>> {
    Ok(user_by_session_until(conn, secret, now)?.map(|(user, _)| user))
}

/// Like `user_by_session`, with the moment the session ends (unix ms), for callers that
/// remember the answer (the server's access cache checks that moment on every hit).
pub fn user_by_session_until(
    conn: &Connection,
    secret: &str,
    now: i64,
) -> Result<Option<(User, i64)>> {
    Ok(conn
        .prepare_cached(
            "SELECT u.id, u.name, u.display_name, u.is_admin, s.expires_at FROM login_sessions s
             JOIN users u ON u.id = s.user_id WHERE s.token_hash = ?1 AND s.expires_at > ?2",
        )?
        .query_row(params![hash_token(secret), now], |r| {
            Ok((user_from_row(r)?, r.get::<_, i64>(4)?))
        })
        .optional()?)
}

pub fn end_login_session(conn: &Connection, secret: &str) -> Result<bool> {
    Ok(conn.execute(
        "DELETE FROM login_sessions WHERE token_hash = ?1",
        [hash_token(secret)],
    )? > 0)
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenInfo {
    pub token_id: String,
    pub label: String,
    pub created_at: i64,
}

/// Creates a token and returns (token ID, secret).
pub fn create_token_with_id(
    conn: &Connection,
    user_id: &str,
    label: &str,
    now: i64,
) -> Result<(String, String)> {
    let token = random_token();
    let id = new_id("tok_");
    conn.execute(
        "INSERT INTO api_tokens (id, user_id, token_hash, label, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![id, user_id, hash_token(&token), label, now],
    )?;
    Ok((id, token))
}

pub fn list_tokens(conn: &Connection, user_id: &str) -> Result<Vec<TokenInfo>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, label, created_at FROM api_tokens WHERE user_id = ?1 ORDER BY created_at",
    )?;
    let rows = stmt.query_map([user_id], |r| {
        Ok(TokenInfo {
            token_id: r.get(0)?,
            label: r.get(1)?,
            created_at: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Deletes one of the user's tokens; false when it is not theirs or does not exist.
pub fn delete_token(conn: &Connection, user_id: &str, token_id: &str) -> Result<bool> {
    Ok(conn.execute(
        "DELETE FROM api_tokens WHERE id = ?1 AND user_id = ?2",
        params![token_id, user_id],
    )? > 0)
}
