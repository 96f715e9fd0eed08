//! Invitations' rows on PostgreSQL (twins of `sqlite.rs`).

use postgres::{GenericClient, Row};

use super::types::{Invite, InviteUse};
use crate::storage::error::Result;

const INVITE: &str = "SELECT i.id, i.kind, i.role, i.user_id, u.name, i.created_by, i.created_at,
        i.expires_at, i.max_uses, i.uses, i.revoked_at
    FROM invites i LEFT JOIN users u ON u.id = i.user_id";

fn invite_from_row(r: &Row) -> Invite {
    Invite {
        invite_id: r.get(0),
        kind: r.get(1),
        role: r.get(2),
        user_id: r.get(3),
        user_name: r.get(4),
        created_by: r.get(5),
        created_at: r.get(6),
        expires_at: r.get(7),
        max_uses: r.get(8),
        uses: r.get(9),
        revoked_at: r.get(10),
        status: String::new(),
        used_by: Vec::new(),
    }
}

pub fn insert_invite(c: &mut impl GenericClient, i: &Invite, token_hash: &str) -> Result<()> {
    c.execute(
        "INSERT INTO invites (id, token_hash, kind, role, user_id, created_by, created_at,
                              expires_at, max_uses, uses)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 0)",
        &[
            &i.invite_id,
            &token_hash,
            &i.kind,
            &i.role,
            &i.user_id,
            &i.created_by,
            &i.created_at,
            &i.expires_at,
            &i.max_uses,
        ],
    )?;
    Ok(())
}

pub fn list_invites(c: &mut impl GenericClient) -> Result<Vec<Invite>> {
    Ok(c.query(
        &format!("{INVITE} ORDER BY i.created_at DESC, i.id DESC"),
        &[],
    )?
    .iter()
    .map(invite_from_row)
    .collect())
}

pub fn all_uses(c: &mut impl GenericClient) -> Result<Vec<(String, InviteUse)>> {
    Ok(c.query(
        "SELECT invite_id, user_id, user_name, at FROM invite_uses ORDER BY at, ctid",
        &[],
    )?
    .iter()
    .map(|r| {
        (
            r.get(0),
            InviteUse {
                user_id: r.get(1),
                user_name: r.get(2),
                at: r.get(3),
            },
        )
    })
    .collect())
}

pub fn invite_by_hash(c: &mut impl GenericClient, token_hash: &str) -> Result<Option<Invite>> {
    Ok(
        c.query_opt(&format!("{INVITE} WHERE i.token_hash = $1"), &[&token_hash])?
            .as_ref()
            .map(invite_from_row),
    )
}

pub fn invite_by_id(c: &mut impl GenericClient, invite_id: &str) -> Result<Option<Invite>> {
    Ok(
        c.query_opt(&format!("{INVITE} WHERE i.id = $1"), &[&invite_id])?
            .as_ref()
            .map(invite_from_row),
    )
}

pub fn take_use(c: &mut impl GenericClient, invite_id: &str, now: i64) -> Result<bool> {
    Ok(c.execute(
        "UPDATE invites SET uses = uses + 1
         WHERE id = $1 AND uses < max_uses AND revoked_at IS NULL AND expires_at > $2",
        &[&invite_id, &now],
    )? == 1)
}

pub fn record_use(c: &mut impl GenericClient, invite_id: &str, used: &InviteUse) -> Result<()> {
    c.execute(
        "INSERT INTO invite_uses (invite_id, user_id, user_name, at) VALUES ($1, $2, $3, $4)",
        &[&invite_id, &used.user_id, &used.user_name, &used.at],
    )?;
    Ok(())
}

pub fn revoke(c: &mut impl GenericClient, invite_id: &str, now: i64) -> Result<bool> {
    Ok(c.execute(
        "UPDATE invites SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL",
        &[&invite_id, &now],
    )? == 1)
}
