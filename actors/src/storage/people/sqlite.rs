//! People's rows on SQLite (twins of `postgres.rs`).

use rusqlite::{params, Connection, OptionalExtension};

use super::types::{Account, Transferred};
use crate::storage::error::Result;

const PERSON: &str = "SELECT id, name, display_name, is_admin, deactivated_at IS NULL, created_at,
        last_seen_at,
        CASE WHEN EXISTS (SELECT 1 FROM user_identities i WHERE i.user_id = users.id) THEN 'sso'
             WHEN password_hash IS NULL THEN 'none' ELSE 'password' END
    FROM users";

fn person_from_row(r: &rusqlite::Row) -> rusqlite::Result<Account> {
    Ok(Account {
        id: r.get(0)?,
        name: r.get(1)?,
        display_name: r.get(2)?,
        is_admin: r.get(3)?,
        active: r.get(4)?,
        created_at: r.get(5)?,
        last_seen_at: r.get(6)?,
        sign_in: r.get(7)?,
    })
}

pub fn list_people(conn: &Connection) -> Result<Vec<Account>> {
    let mut st = conn.prepare(&format!(
        "{PERSON} ORDER BY lower(display_name), lower(name)"
    ))?;
    let rows = st.query_map([], person_from_row)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

pub fn person(conn: &Connection, user_id: &str) -> Result<Option<Account>> {
    Ok(conn
        .query_row(
            &format!("{PERSON} WHERE id = ?1"),
            [user_id],
            person_from_row,
        )
        .optional()?)
}

pub fn other_active_admins(conn: &Connection, except: &str) -> Result<i64> {
    Ok(conn.query_row(
        "SELECT count(*) FROM users WHERE is_admin = 1 AND deactivated_at IS NULL AND id <> ?1",
        [except],
        |r| r.get(0),
    )?)
}

pub fn set_deactivated(conn: &Connection, user_id: &str, at: Option<i64>) -> Result<bool> {
    Ok(conn.execute(
        "UPDATE users SET deactivated_at = ?2 WHERE id = ?1",
        params![user_id, at],
    )? == 1)
}

pub fn set_admin(conn: &Connection, user_id: &str, admin: bool) -> Result<bool> {
    Ok(conn.execute(
        "UPDATE users SET is_admin = ?2 WHERE id = ?1",
        params![user_id, admin],
    )? == 1)
}

pub fn set_display_name(conn: &Connection, user_id: &str, display_name: &str) -> Result<bool> {
    Ok(conn.execute(
        "UPDATE users SET display_name = ?2 WHERE id = ?1",
        params![user_id, display_name],
    )? == 1)
}

pub fn transfer_owned(conn: &Connection, from: &str, to: &str) -> Result<Transferred> {
    conn.execute(
        "DELETE FROM doc_shares WHERE user_id = ?2
           AND doc_id IN (SELECT id FROM documents WHERE owner_id = ?1)",
        params![from, to],
    )?;
    let documents = conn.execute(
        "UPDATE documents SET owner_id = ?2 WHERE owner_id = ?1",
        params![from, to],
    )?;
    let folders = conn.execute(
        "UPDATE folders SET owner_id = ?2 WHERE owner_id = ?1",
        params![from, to],
    )?;
    let teams = conn.execute(
        "UPDATE teams SET owner_id = ?2 WHERE owner_id = ?1",
        params![from, to],
    )?;
    Ok(Transferred {
        documents: documents as i64,
        folders: folders as i64,
        teams: teams as i64,
    })
}

pub fn delete_person(conn: &Connection, user_id: &str) -> Result<bool> {
    conn.execute(
        "DELETE FROM workspace_folder_shares WHERE kind = 'user' AND principal_id = ?1",
        [user_id],
    )?;
    Ok(conn.execute("DELETE FROM users WHERE id = ?1", [user_id])? == 1)
}
