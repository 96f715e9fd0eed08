//! Accounts' rows on PostgreSQL (twins of `sqlite.rs`). Names are unique and matched
//! whatever their case (SQLite's `COLLATE NOCASE`: `lower(name)` here).

use postgres::{GenericClient, Row};

use super::types::{Scope, SessionRow, TokenInfo, TokenRow, User};
use crate::storage::error::Result;

fn user_from_row(r: &Row) -> User {
    User {
        id: r.get(0),
        name: r.get(1),
        display_name: r.get(2),
        is_admin: r.get(3),
    }
}

fn scope_from(s: &str) -> Scope {
    Scope::parse(s).unwrap_or(Scope::Read)
}

pub fn insert_user(c: &mut impl GenericClient, user: &User, now: i64) -> Result<bool> {
    Ok(c.execute(
        "INSERT INTO users (id, name, display_name, is_admin, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT ((lower(name))) DO NOTHING",
        &[&user.id, &user.name, &user.display_name, &user.is_admin, &now],
    )? == 1)
}

pub fn count_users(c: &mut impl GenericClient) -> Result<i64> {
    Ok(c.query_one("SELECT count(*) FROM users", &[])?.get(0))
}

pub fn user_by_name(c: &mut impl GenericClient, name: &str) -> Result<Option<User>> {
    Ok(c.query_opt(
        "SELECT id, name, display_name, is_admin FROM users WHERE lower(name) = lower($1)",
        &[&name],
    )?
    .as_ref()
    .map(user_from_row))
}

pub fn user_by_id(c: &mut impl GenericClient, id: &str) -> Result<Option<User>> {
    Ok(c.query_opt(
        "SELECT id, name, display_name, is_admin FROM users WHERE id = $1",
        &[&id],
    )?
    .as_ref()
    .map(user_from_row))
}

pub fn users_matching(c: &mut impl GenericClient, pattern: &str, limit: i64) -> Result<Vec<User>> {
    Ok(c.query(
        "SELECT id, name, display_name, is_admin FROM users \
         WHERE (name ILIKE $1 ESCAPE '\\' OR display_name ILIKE $1 ESCAPE '\\') \
           AND deactivated_at IS NULL \
         ORDER BY lower(display_name), lower(name) LIMIT $2",
        &[&pattern, &limit],
    )?
    .iter()
    .map(user_from_row)
    .collect())
}

pub fn insert_token(c: &mut impl GenericClient, t: &TokenRow) -> Result<()> {
    c.execute(
        "INSERT INTO api_tokens (id, user_id, token_hash, label, scope, expires_at, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
        &[
            &t.id,
            &t.user_id,
            &t.hash,
            &t.label,
            &t.scope.as_str(),
            &t.expires_at,
            &t.created_at,
        ],
    )?;
    Ok(())
}

pub fn user_by_token_hash(
    c: &mut impl GenericClient,
    token_hash: &str,
    now: i64,
) -> Result<Option<(User, Scope, Option<i64>)>> {
    Ok(c.query_opt(
        "SELECT u.id, u.name, u.display_name, u.is_admin, t.scope, t.expires_at
         FROM api_tokens t JOIN users u ON u.id = t.user_id
         WHERE t.token_hash = $1 AND (t.expires_at IS NULL OR t.expires_at > $2)
           AND u.deactivated_at IS NULL",
        &[&token_hash, &now],
    )?
    .map(|r| (user_from_row(&r), scope_from(r.get(4)), r.get(5))))
}

pub fn list_tokens(c: &mut impl GenericClient, user_id: &str) -> Result<Vec<TokenInfo>> {
    Ok(c.query(
        "SELECT id, label, scope, created_at, expires_at FROM api_tokens WHERE user_id = $1
         ORDER BY created_at",
        &[&user_id],
    )?
    .iter()
    .map(|r| TokenInfo {
        token_id: r.get(0),
        label: r.get(1),
        scope: scope_from(r.get(2)),
        created_at: r.get(3),
        expires_at: r.get(4),
    })
    .collect())
}

pub fn delete_token(c: &mut impl GenericClient, user_id: &str, token_id: &str) -> Result<bool> {
    Ok(c.execute(
        "DELETE FROM api_tokens WHERE id = $1 AND user_id = $2",
        &[&token_id, &user_id],
    )? > 0)
}

pub fn delete_tokens_of(c: &mut impl GenericClient, user_id: &str) -> Result<()> {
    c.execute("DELETE FROM api_tokens WHERE user_id = $1", &[&user_id])?;
    Ok(())
}

pub fn store_password_hash(c: &mut impl GenericClient, user_id: &str, phc: &str) -> Result<bool> {
    Ok(c.execute(
        "UPDATE users SET password_hash = $2 WHERE id = $1",
        &[&user_id, &phc],
    )? == 1)
}

pub fn delete_login_sessions_of(c: &mut impl GenericClient, user_id: &str) -> Result<()> {
    c.execute("DELETE FROM login_sessions WHERE user_id = $1", &[&user_id])?;
    Ok(())
}

pub fn login_record(
    c: &mut impl GenericClient,
    name: &str,
) -> Result<Option<(User, Option<String>, bool)>> {
    Ok(c.query_opt(
        "SELECT id, name, display_name, is_admin, password_hash, deactivated_at IS NULL
             FROM users WHERE lower(name) = lower($1)",
        &[&name],
    )?
    .map(|r| (user_from_row(&r), r.get(4), r.get(5))))
}

pub fn insert_login_session(
    c: &mut impl GenericClient,
    secret_hash: &str,
    user_id: &str,
    now: i64,
    expires_at: i64,
    user_agent: &str,
) -> Result<()> {
    c.execute(
        "INSERT INTO login_sessions (token_hash, user_id, created_at, expires_at, last_seen_at, user_agent)
         VALUES ($1, $2, $3, $4, $3, $5)",
        &[&secret_hash, &user_id, &now, &expires_at, &user_agent],
    )?;
    Ok(())
}

pub fn user_by_session_hash(
    c: &mut impl GenericClient,
    secret_hash: &str,
    now: i64,
) -> Result<Option<(User, i64)>> {
    Ok(c.query_opt(
        "SELECT u.id, u.name, u.display_name, u.is_admin, s.expires_at FROM login_sessions s
         JOIN users u ON u.id = s.user_id
         WHERE s.token_hash = $1 AND s.expires_at > $2 AND u.deactivated_at IS NULL",
        &[&secret_hash, &now],
    )?
    .map(|r| (user_from_row(&r), r.get(4))))
}

pub fn delete_login_session(c: &mut impl GenericClient, secret_hash: &str) -> Result<bool> {
    Ok(c.execute(
        "DELETE FROM login_sessions WHERE token_hash = $1",
        &[&secret_hash],
    )? > 0)
}

pub fn sessions_of(c: &mut impl GenericClient, user_id: &str, now: i64) -> Result<Vec<SessionRow>> {
    Ok(c.query(
        "SELECT token_hash, created_at, expires_at, user_agent FROM login_sessions
         WHERE user_id = $1 AND expires_at > $2 ORDER BY created_at DESC",
        &[&user_id, &now],
    )?
    .iter()
    .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
    .collect())
}

pub fn delete_session_by_prefix(
    c: &mut impl GenericClient,
    user_id: &str,
    hash_prefix: &str,
) -> Result<bool> {
    Ok(c.execute(
        "DELETE FROM login_sessions WHERE user_id = $1 AND substr(token_hash, 1, 16) = $2",
        &[&user_id, &hash_prefix],
    )? > 0)
}

pub fn delete_other_sessions(
    c: &mut impl GenericClient,
    user_id: &str,
    keep_hash: &str,
) -> Result<()> {
    c.execute(
        "DELETE FROM login_sessions WHERE user_id = $1 AND token_hash <> $2",
        &[&user_id, &keep_hash],
    )?;
    Ok(())
}

pub fn set_last_seen(c: &mut impl GenericClient, user_id: &str, now: i64) -> Result<()> {
    c.execute(
        "UPDATE users SET last_seen_at = $2 WHERE id = $1",
        &[&user_id, &now],
    )?;
    Ok(())
}
