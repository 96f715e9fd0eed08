//! Single sign-on's rows on PostgreSQL (twins of `sqlite.rs`).

use postgres::GenericClient;

use super::types::Flow;
use crate::storage::error::Result;

pub fn insert_identity(
    c: &mut impl GenericClient,
    issuer: &str,
    subject: &str,
    user_id: &str,
    email: Option<&str>,
    now: i64,
) -> Result<()> {
    c.execute(
        "INSERT INTO user_identities (issuer, subject, user_id, email, created_at)
         VALUES ($1, $2, $3, $4, $5)",
        &[&issuer, &subject, &user_id, &email, &now],
    )?;
    Ok(())
}

pub fn user_of(c: &mut impl GenericClient, issuer: &str, subject: &str) -> Result<Option<String>> {
    Ok(c.query_opt(
        "SELECT user_id FROM user_identities WHERE issuer = $1 AND subject = $2",
        &[&issuer, &subject],
    )?
    .map(|r| r.get(0)))
}

pub fn insert_flow(c: &mut impl GenericClient, state_hash: &str, f: &Flow) -> Result<()> {
    c.execute(
        "INSERT INTO sso_flows (state_hash, nonce, pkce_verifier, next, invite, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6)",
        &[
            &state_hash,
            &f.nonce,
            &f.pkce_verifier,
            &f.next,
            &f.invite,
            &f.expires_at,
        ],
    )?;
    Ok(())
}

pub fn take_flow(c: &mut impl GenericClient, state_hash: &str) -> Result<Option<Flow>> {
    Ok(c.query_opt(
        "DELETE FROM sso_flows WHERE state_hash = $1
         RETURNING nonce, pkce_verifier, next, invite, expires_at",
        &[&state_hash],
    )?
    .map(|r| Flow {
        nonce: r.get(0),
        pkce_verifier: r.get(1),
        next: r.get(2),
        invite: r.get(3),
        expires_at: r.get(4),
    }))
}

pub fn forget_flows_before(c: &mut impl GenericClient, now: i64) -> Result<()> {
    c.execute("DELETE FROM sso_flows WHERE expires_at < $1", &[&now])?;
    Ok(())
}
