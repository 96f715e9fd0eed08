//! Accounts' rows on SQLite (twins of `postgres.rs`); names are `COLLATE NOCASE`.

use rusqlite::{params, Connection, OptionalExtension};

use super::types::{TokenInfo, User};
use crate::storage::error::Result;

fn user_from_row(r: &rusqlite::Row) -> rusqlite::Result<User> {
    Ok(User {
        id: r.get(0)?,
        name: r.get(1)?,
        display_name: r.get(2)?,
        is_admin: r.get(3)?,
    })
}

pub fn insert_user(conn: &Connection, user: &User, now: i64) -> Result<bool> {
    Ok(conn.execute(
        "INSERT INTO users (id, name, display_name, is_admin, created_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT(name) DO NOTHING",
        params![user.id, user.name, user.display_name, user.is_admin, now],
    )? == 1)
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

pub fn users_matching(conn: &Connection, pattern: &str, limit: i64) -> Result<Vec<User>> {
    let mut st = conn.prepare_cached(
        "SELECT id, name, display_name, is_admin FROM users \
         WHERE name LIKE ?1 ESCAPE '\\' OR display_name LIKE ?1 ESCAPE '\\' \
         ORDER BY lower(display_name), lower(name) LIMIT ?2",
    )?;
    let rows = st.query_map(rusqlite::params![pattern, limit], user_from_row)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

pub fn count_users(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("SELECT count(*) FROM users", [], |r| r.get(0))?)
}

pub fn insert_token(
    conn: &Connection,
    token_id: &str,
    user_id: &str,
    token_hash: &str,
    label: &str,
    now: i64,
) -> Result<()> {
    conn.execute(
        "INSERT INTO api_tokens (id, user_id, token_hash, label, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![token_id, user_id, token_hash, label, now],
    )?;
    Ok(())
}

pub fn user_by_token_hash(conn: &Connection, token_hash: &str) -> Result<Option<User>> {
    Ok(conn
        .prepare_cached(
            "SELECT u.id, u.name, u.display_name, u.is_admin FROM api_tokens t
             JOIN users u ON u.id = t.user_id WHERE t.token_hash = ?1",
        )?
        .query_row([token_hash], user_from_row)
        .optional()?)
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

pub fn delete_token(conn: &Connection, user_id: &str, token_id: &str) -> Result<bool> {
    Ok(conn.execute(
        "DELETE FROM api_tokens WHERE id = ?1 AND user_id = ?2",
        params![token_id, user_id],
    )? > 0)
}

pub fn store_password_hash(conn: &Connection, user_id: &str, phc: &str) -> Result<bool> {
    Ok(conn.execute(
        "UPDATE users SET password_hash = ?2 WHERE id = ?1",
        params![user_id, phc],
    )? == 1)
}

pub fn delete_login_sessions_of(conn: &Connection, user_id: &str) -> Result<()> {
    conn.execute("DELETE FROM login_sessions WHERE user_id = ?1", [user_id])?;
    Ok(())
}

pub fn login_record(conn: &Connection, name: &str) -> Result<Option<(User, Option<String>)>> {
    Ok(conn
        .query_row(
            "SELECT id, name, display_name, is_admin, password_hash FROM users WHERE name = ?1",
            [name],
            |r| Ok((user_from_row(r)?, r.get::<_, Option<String>>(4)?)),
        )
        .optional()?)
}

pub fn insert_login_session(
    conn: &Connection,
    secret_hash: &str,
    user_id: &str,
    now: i64,
    expires_at: i64,
) -> Result<()> {
    conn.execute(
        "INSERT INTO login_sessions (token_hash, user_id, created_at, expires_at, last_seen_at)
         VALUES (?1, ?2, ?3, ?4, ?3)",
        params![secret_hash, user_id, now, expires_at],
    )?;
    Ok(())
}

pub fn user_by_session_hash(
    conn: &Connection,
    secret_hash: &str,
    now: i64,
) -> Result<Option<(User, i64)>> {
    Ok(conn
        .prepare_cached(
            "SELECT u.id, u.name, u.display_name, u.is_admin, s.expires_at FROM login_sessions s
             JOIN users u ON u.id = s.user_id WHERE s.token_hash = ?1 AND s.expires_at > ?2",
        )?
        .query_row(params![secret_hash, now], |r| {
            Ok((user_from_row(r)?, r.get::<_, i64>(4)?))
        })
        .optional()?)
}

pub fn delete_login_session(conn: &Connection, secret_hash: &str) -> Result<bool> {
    Ok(conn.execute(
        "DELETE FROM login_sessions WHERE token_hash = ?1",
        [secret_hash],
    )? > 0)
}
