//! Accounts' rows on SQLite (twins of `postgres.rs`); names are `COLLATE NOCASE`.

use rusqlite::{params, Connection, OptionalExtension};

use super::types::{Scope, SessionRow, TokenInfo, TokenRow, User};
use crate::storage::error::Result;

fn user_from_row(r: &rusqlite::Row) -> rusqlite::Result<User> {
    Ok(User {
        id: r.get(0)?,
        name: r.get(1)?,
        display_name: r.get(2)?,
        is_admin: r.get(3)?,
    })
}

fn scope_from(s: String) -> Scope {
    // The column's CHECK allows nothing else; a row that somehow did would read as the
    // least it could be.
    Scope::parse(&s).unwrap_or(Scope::Read)
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
         WHERE (name LIKE ?1 ESCAPE '\\' OR display_name LIKE ?1 ESCAPE '\\') \
           AND deactivated_at IS NULL \
         ORDER BY lower(display_name), lower(name) LIMIT ?2",
    )?;
    let rows = st.query_map(rusqlite::params![pattern, limit], user_from_row)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

pub fn count_users(conn: &Connection) -> Result<i64> {
    Ok(conn.query_row("SELECT count(*) FROM users", [], |r| r.get(0))?)
}

pub fn insert_token(conn: &Connection, t: &TokenRow) -> Result<()> {
    conn.execute(
        "INSERT INTO api_tokens (id, user_id, token_hash, label, scope, expires_at, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            t.id,
            t.user_id,
            t.hash,
            t.label,
            t.scope.as_str(),
            t.expires_at,
            t.created_at
        ],
    )?;
    Ok(())
}

pub fn user_by_token_hash(
    conn: &Connection,
    token_hash: &str,
    now: i64,
) -> Result<Option<(User, Scope, Option<i64>)>> {
    Ok(conn
        .prepare_cached(
            "SELECT u.id, u.name, u.display_name, u.is_admin, t.scope, t.expires_at
             FROM api_tokens t JOIN users u ON u.id = t.user_id
             WHERE t.token_hash = ?1 AND (t.expires_at IS NULL OR t.expires_at > ?2)
               AND u.deactivated_at IS NULL",
        )?
        .query_row(params![token_hash, now], |r| {
            Ok((user_from_row(r)?, scope_from(r.get(4)?), r.get(5)?))
        })
        .optional()?)
}

pub fn list_tokens(conn: &Connection, user_id: &str) -> Result<Vec<TokenInfo>> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, label, scope, created_at, expires_at FROM api_tokens WHERE user_id = ?1
         ORDER BY created_at",
    )?;
    let rows = stmt.query_map([user_id], |r| {
        Ok(TokenInfo {
            token_id: r.get(0)?,
            label: r.get(1)?,
            scope: scope_from(r.get(2)?),
            created_at: r.get(3)?,
            expires_at: r.get(4)?,
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

pub fn delete_tokens_of(conn: &Connection, user_id: &str) -> Result<()> {
    conn.execute("DELETE FROM api_tokens WHERE user_id = ?1", [user_id])?;
    Ok(())
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

pub fn login_record(conn: &Connection, name: &str) -> Result<Option<(User, Option<String>, bool)>> {
    Ok(conn
        .query_row(
            "SELECT id, name, display_name, is_admin, password_hash, deactivated_at IS NULL
             FROM users WHERE name = ?1",
            [name],
            |r| {
                Ok((
                    user_from_row(r)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, bool>(5)?,
                ))
            },
        )
        .optional()?)
}

pub fn insert_login_session(
    conn: &Connection,
    secret_hash: &str,
    user_id: &str,
    now: i64,
    expires_at: i64,
    user_agent: &str,
) -> Result<()> {
    conn.execute(
        "INSERT INTO login_sessions (token_hash, user_id, created_at, expires_at, last_seen_at, user_agent)
         VALUES (?1, ?2, ?3, ?4, ?3, ?5)",
        params![secret_hash, user_id, now, expires_at, user_agent],
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
             JOIN users u ON u.id = s.user_id
             WHERE s.token_hash = ?1 AND s.expires_at > ?2 AND u.deactivated_at IS NULL",
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

pub fn sessions_of(conn: &Connection, user_id: &str, now: i64) -> Result<Vec<SessionRow>> {
    let mut st = conn.prepare_cached(
        "SELECT token_hash, created_at, expires_at, user_agent FROM login_sessions
         WHERE user_id = ?1 AND expires_at > ?2 ORDER BY created_at DESC",
    )?;
    let rows = st.query_map(params![user_id, now], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

pub fn delete_session_by_prefix(
    conn: &Connection,
    user_id: &str,
    hash_prefix: &str,
) -> Result<bool> {
    Ok(conn.execute(
        "DELETE FROM login_sessions WHERE user_id = ?1 AND substr(token_hash, 1, 16) = ?2",
        params![user_id, hash_prefix],
    )? > 0)
}

pub fn delete_other_sessions(conn: &Connection, user_id: &str, keep_hash: &str) -> Result<()> {
    conn.execute(
        "DELETE FROM login_sessions WHERE user_id = ?1 AND token_hash <> ?2",
        params![user_id, keep_hash],
    )?;
    Ok(())
}

pub fn set_last_seen(conn: &Connection, user_id: &str, now: i64) -> Result<()> {
    conn.execute(
        "UPDATE users SET last_seen_at = ?2 WHERE id = ?1",
        params![user_id, now],
    )?;
    Ok(())
}
