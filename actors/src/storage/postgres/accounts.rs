//! Users, API tokens, login sessions and client IDs' owners on PostgreSQL: the same typed
//! functions as SQLite's `storage::accounts` and `storage::clients`. Names are unique and
//! matched whatever their case (SQLite's `COLLATE NOCASE`: `lower(name)` here); secrets are
//! kept only as their SHA-256, like there.

use postgres::{GenericClient, Row};

use crate::storage::sqlite::accounts::{hash_token, new_id, random_token, TokenInfo, User};

use super::super::error::{Result, StorageError};

fn user_from_row(r: &Row) -> User {
    User {
        id: r.get(0),
        name: r.get(1),
        display_name: r.get(2),
        is_admin: r.get(3),
    }
}

pub fn create_user(
    c: &mut impl GenericClient,
    name: &str,
    display_name: &str,
    is_admin: bool,
    now: i64,
) -> Result<User> {
    let id = new_id("usr_");
    let n = c.execute(
        "INSERT INTO users (id, name, display_name, is_admin, created_at) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT ((lower(name))) DO NOTHING",
        &[&id, &name, &display_name, &is_admin, &now],
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

/// Creates a token and returns (token ID, secret): the secret's only appearance.
pub fn create_token_with_id(
    c: &mut impl GenericClient,
    user_id: &str,
    label: &str,
    now: i64,
) -> Result<(String, String)> {
    let token = random_token();
    let id = new_id("tok_");
    c.execute(
        "INSERT INTO api_tokens (id, user_id, token_hash, label, created_at) VALUES ($1, $2, $3, $4, $5)",
        &[&id, &user_id, &hash_token(&token), &label, &now],
    )?;
    Ok((id, token))
}

pub fn user_by_token(c: &mut impl GenericClient, token: &str) -> Result<Option<User>> {
    Ok(c.query_opt(
        "SELECT u.id, u.name, u.display_name, u.is_admin FROM api_tokens t
               JOIN users u ON u.id = t.user_id WHERE t.token_hash = $1",
        &[&hash_token(token)],
    )?
    .as_ref()
    .map(user_from_row))
}

pub fn list_tokens(c: &mut impl GenericClient, user_id: &str) -> Result<Vec<TokenInfo>> {
    Ok(c.query(
        "SELECT id, label, created_at FROM api_tokens WHERE user_id = $1 ORDER BY created_at",
        &[&user_id],
    )?
    .iter()
    .map(|r| TokenInfo {
        token_id: r.get(0),
        label: r.get(1),
        created_at: r.get(2),
    })
    .collect())
}

pub fn delete_token(c: &mut impl GenericClient, user_id: &str, token_id: &str) -> Result<bool> {
    Ok(c.execute(
        "DELETE FROM api_tokens WHERE id = $1 AND user_id = $2",
        &[&token_id, &user_id],
    )? > 0)
}

/// Stores a password hash and ends every login session of the user.
pub fn set_password_hash(c: &mut impl GenericClient, user_id: &str, phc: &str) -> Result<()> {
    let n = c.execute(
        "UPDATE users SET password_hash = $2 WHERE id = $1",
        &[&user_id, &phc],
    )?;
    if n == 0 {
        return Err(StorageError::NotFound(format!("user {user_id}")));
    }
    c.execute("DELETE FROM login_sessions WHERE user_id = $1", &[&user_id])?;
    Ok(())
}

pub fn login_record(
    c: &mut impl GenericClient,
    name: &str,
) -> Result<Option<(User, Option<String>)>> {
    Ok(c
        .query_opt(
            "SELECT id, name, display_name, is_admin, password_hash FROM users WHERE lower(name) = lower($1)",
            &[&name],
        )?
        .map(|r| (user_from_row(&r), r.get(4))))
}

pub fn create_login_session(
    c: &mut impl GenericClient,
    user_id: &str,
    now: i64,
    ttl_ms: i64,
) -> Result<String> {
    let secret = random_token().replacen("dst_", "dss_", 1);
    c.execute(
        "INSERT INTO login_sessions (token_hash, user_id, created_at, expires_at, last_seen_at)
         VALUES ($1, $2, $3, $4, $3)",
        &[&hash_token(&secret), &user_id, &now, &(now + ttl_ms)],
    )?;
    Ok(secret)
}

pub fn user_by_session_until(
    c: &mut impl GenericClient,
    secret: &str,
    now: i64,
) -> Result<Option<(User, i64)>> {
    Ok(c.query_opt(
        "SELECT u.id, u.name, u.display_name, u.is_admin, s.expires_at FROM login_sessions s
               JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1 AND s.expires_at > $2",
        &[&hash_token(secret), &now],
    )?
    .map(|r| (user_from_row(&r), r.get(4))))
}

pub fn end_login_session(c: &mut impl GenericClient, secret: &str) -> Result<bool> {
    Ok(c.execute(
        "DELETE FROM login_sessions WHERE token_hash = $1",
        &[&hash_token(secret)],
    )? > 0)
}

/// The owner of `client_id`, if anyone used it yet.
pub fn client_owner(c: &mut impl GenericClient, client_id: &str) -> Result<Option<String>> {
    Ok(c.query_opt(
        "SELECT user_id FROM client_owners WHERE client_id = $1",
        &[&client_id],
    )?
    .map(|r| r.get(0)))
}

/// Gives `client_id` to `user_id` unless someone has it; returns its owner either way.
pub fn claim_client(
    c: &mut impl GenericClient,
    client_id: &str,
    user_id: &str,
    now: i64,
) -> Result<String> {
    c.execute(
        "INSERT INTO client_owners (client_id, user_id, first_seen) VALUES ($1, $2, $3)
         ON CONFLICT (client_id) DO NOTHING",
        &[&client_id, &user_id, &now],
    )?;
    Ok(client_owner(c, client_id)?.unwrap_or_else(|| user_id.to_string()))
}
