//! Single sign-on's rows on SQLite (twins of `postgres.rs`).

use rusqlite::{params, Connection, OptionalExtension};

use super::types::Flow;
use crate::storage::error::Result;

pub fn insert_identity(
    conn: &Connection,
    issuer: &str,
    subject: &str,
    user_id: &str,
    email: Option<&str>,
    now: i64,
) -> Result<()> {
    conn.execute(
        "INSERT INTO user_identities (issuer, subject, user_id, email, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![issuer, subject, user_id, email, now],
    )?;
    Ok(())
}

pub fn user_of(conn: &Connection, issuer: &str, subject: &str) -> Result<Option<String>> {
    Ok(conn
        .query_row(
            "SELECT user_id FROM user_identities WHERE issuer = ?1 AND subject = ?2",
            params![issuer, subject],
            |r| r.get(0),
        )
        .optional()?)
}

pub fn insert_flow(conn: &Connection, state_hash: &str, f: &Flow) -> Result<()> {
    conn.execute(
        "INSERT INTO sso_flows (state_hash, nonce, pkce_verifier, next, invite, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            state_hash,
            f.nonce,
            f.pkce_verifier,
            f.next,
            f.invite,
            f.expires_at
        ],
    )?;
    Ok(())
}

pub fn take_flow(conn: &Connection, state_hash: &str) -> Result<Option<Flow>> {
    Ok(conn
        .query_row(
            "DELETE FROM sso_flows WHERE state_hash = ?1
             RETURNING nonce, pkce_verifier, next, invite, expires_at",
            [state_hash],
            |r| {
                Ok(Flow {
                    nonce: r.get(0)?,
                    pkce_verifier: r.get(1)?,
                    next: r.get(2)?,
                    invite: r.get(3)?,
                    expires_at: r.get(4)?,
                })
            },
        )
        .optional()?)
}

pub fn forget_flows_before(conn: &Connection, now: i64) -> Result<()> {
    conn.execute("DELETE FROM sso_flows WHERE expires_at < ?1", [now])?;
    Ok(())
}
