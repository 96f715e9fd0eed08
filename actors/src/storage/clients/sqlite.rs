//! Client IDs' owners on SQLite (twins of `postgres.rs`).

use rusqlite::{params, Connection, OptionalExtension};

use crate::storage::error::Result;

/// The owner of `client_id`, if anyone used it yet.
pub fn owner(conn: &Connection, client_id: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT user_id FROM client_owners WHERE client_id = ?1")?
        .query_row([client_id], |r| r.get(0))
        .optional()?)
}

pub fn insert_unless_owned(
    conn: &Connection,
    client_id: &str,
    user_id: &str,
    now: i64,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO client_owners (client_id, user_id, first_seen) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![client_id, user_id, now])?;
    Ok(())
}
