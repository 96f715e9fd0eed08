//! People's rows on PostgreSQL (twins of `sqlite.rs`).

use postgres::{GenericClient, Row};

use super::types::{Account, Transferred};
use crate::storage::error::Result;

const PERSON: &str = "SELECT id, name, display_name, is_admin, deactivated_at IS NULL, created_at,
        last_seen_at,
        CASE WHEN EXISTS (SELECT 1 FROM user_identities i WHERE i.user_id = users.id) THEN 'sso'
             WHEN password_hash IS NULL THEN 'none' ELSE 'password' END
    FROM users";

fn person_from_row(r: &Row) -> Account {
    Account {
        id: r.get(0),
        name: r.get(1),
        display_name: r.get(2),
        is_admin: r.get(3),
        active: r.get(4),
        created_at: r.get(5),
        last_seen_at: r.get(6),
        sign_in: r.get(7),
    }
}

pub fn list_people(c: &mut impl GenericClient) -> Result<Vec<Account>> {
    Ok(c.query(
        &format!("{PERSON} ORDER BY lower(display_name), lower(name)"),
        &[],
    )?
    .iter()
    .map(person_from_row)
    .collect())
}

pub fn person(c: &mut impl GenericClient, user_id: &str) -> Result<Option<Account>> {
    Ok(
        c.query_opt(&format!("{PERSON} WHERE id = $1"), &[&user_id])?
            .as_ref()
            .map(person_from_row),
    )
}

pub fn other_active_admins(c: &mut impl GenericClient, except: &str) -> Result<i64> {
    Ok(c.query_one(
        "SELECT count(*) FROM users WHERE is_admin AND deactivated_at IS NULL AND id <> $1",
        &[&except],
    )?
    .get(0))
}

pub fn set_deactivated(c: &mut impl GenericClient, user_id: &str, at: Option<i64>) -> Result<bool> {
    Ok(c.execute(
        "UPDATE users SET deactivated_at = $2 WHERE id = $1",
        &[&user_id, &at],
    )? == 1)
}

pub fn set_admin(c: &mut impl GenericClient, user_id: &str, admin: bool) -> Result<bool> {
    Ok(c.execute(
        "UPDATE users SET is_admin = $2 WHERE id = $1",
        &[&user_id, &admin],
    )? == 1)
}

pub fn set_display_name(
    c: &mut impl GenericClient,
    user_id: &str,
    display_name: &str,
) -> Result<bool> {
    Ok(c.execute(
        "UPDATE users SET display_name = $2 WHERE id = $1",
        &[&user_id, &display_name],
    )? == 1)
}

pub fn transfer_owned(c: &mut impl GenericClient, from: &str, to: &str) -> Result<Transferred> {
    c.execute(
        "DELETE FROM doc_shares WHERE user_id = $2
           AND doc_id IN (SELECT id FROM documents WHERE owner_id = $1)",
        &[&from, &to],
    )?;
    let documents = c.execute(
        "UPDATE documents SET owner_id = $2 WHERE owner_id = $1",
        &[&from, &to],
    )?;
    let folders = c.execute(
        "UPDATE folders SET owner_id = $2 WHERE owner_id = $1",
        &[&from, &to],
    )?;
    let teams = c.execute(
        "UPDATE teams SET owner_id = $2 WHERE owner_id = $1",
        &[&from, &to],
    )?;
    Ok(Transferred {
        documents: documents as i64,
        folders: folders as i64,
        teams: teams as i64,
    })
}

pub fn delete_person(c: &mut impl GenericClient, user_id: &str) -> Result<bool> {
    c.execute(
        "DELETE FROM workspace_folder_shares WHERE kind = 'user' AND principal_id = $1",
        &[&user_id],
    )?;
    Ok(c.execute("DELETE FROM users WHERE id = $1", &[&user_id])? == 1)
}
