//! Invitations' rows on SQLite (twins of `postgres.rs`).

use rusqlite::{params, Connection, OptionalExtension};

use super::types::{Invite, InviteUse};
use crate::storage::error::Result;

const INVITE: &str = "SELECT i.id, i.kind, i.role, i.user_id, u.name, i.created_by, i.created_at,
        i.expires_at, i.max_uses, i.uses, i.revoked_at
    FROM invites i LEFT JOIN users u ON u.id = i.user_id";

fn invite_from_row(r: &rusqlite::Row) -> rusqlite::Result<Invite> {
    Ok(Invite {
        invite_id: r.get(0)?,
        kind: r.get(1)?,
        role: r.get(2)?,
        user_id: r.get(3)?,
        user_name: r.get(4)?,
        created_by: r.get(5)?,
        created_at: r.get(6)?,
        expires_at: r.get(7)?,
        max_uses: r.get(8)?,
        uses: r.get(9)?,
        revoked_at: r.get(10)?,
        status: String::new(),
        used_by: Vec::new(),
    })
}

pub fn insert_invite(conn: &Connection, i: &Invite, token_hash: &str) -> Result<()> {
    conn.execute(
        "INSERT INTO invites (id, token_hash, kind, role, user_id, created_by, created_at,
                              expires_at, max_uses, uses)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 0)",
        params![
            i.invite_id,
            token_hash,
            i.kind,
            i.role,
            i.user_id,
            i.created_by,
            i.created_at,
            i.expires_at,
            i.max_uses
        ],
    )?;
    Ok(())
}

pub fn list_invites(conn: &Connection) -> Result<Vec<Invite>> {
    let mut st = conn.prepare(&format!("{INVITE} ORDER BY i.created_at DESC, i.id DESC"))?;
    let rows = st.query_map([], invite_from_row)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

pub fn all_uses(conn: &Connection) -> Result<Vec<(String, InviteUse)>> {
    let mut st = conn
        .prepare("SELECT invite_id, user_id, user_name, at FROM invite_uses ORDER BY at, rowid")?;
    let rows = st.query_map([], |r| {
        Ok((
            r.get(0)?,
            InviteUse {
                user_id: r.get(1)?,
                user_name: r.get(2)?,
                at: r.get(3)?,
            },
        ))
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

pub fn invite_by_hash(conn: &Connection, token_hash: &str) -> Result<Option<Invite>> {
    Ok(conn
        .query_row(
            &format!("{INVITE} WHERE i.token_hash = ?1"),
            [token_hash],
            invite_from_row,
        )
        .optional()?)
}

pub fn invite_by_id(conn: &Connection, invite_id: &str) -> Result<Option<Invite>> {
    Ok(conn
        .query_row(
            &format!("{INVITE} WHERE i.id = ?1"),
            [invite_id],
            invite_from_row,
        )
        .optional()?)
}

pub fn take_use(conn: &Connection, invite_id: &str, now: i64) -> Result<bool> {
    Ok(conn.execute(
        "UPDATE invites SET uses = uses + 1
         WHERE id = ?1 AND uses < max_uses AND revoked_at IS NULL AND expires_at > ?2",
        params![invite_id, now],
    )? == 1)
}

pub fn record_use(conn: &Connection, invite_id: &str, used: &InviteUse) -> Result<()> {
    conn.execute(
        "INSERT INTO invite_uses (invite_id, user_id, user_name, at) VALUES (?1, ?2, ?3, ?4)",
        params![invite_id, used.user_id, used.user_name, used.at],
    )?;
    Ok(())
}

pub fn revoke(conn: &Connection, invite_id: &str, now: i64) -> Result<bool> {
    Ok(conn.execute(
        "UPDATE invites SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
        params![invite_id, now],
    )? == 1)
}
