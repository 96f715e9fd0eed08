//! Who owns a client ID: the user who first used it (`migrations/0005_client_owners.sql`).

use rusqlite::{params, Connection, OptionalExtension};

use crate::storage::error::Result;

/// The owner of `client_id`, if anyone used it yet.
pub fn owner(conn: &Connection, client_id: &str) -> Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT user_id FROM client_owners WHERE client_id = ?1")?
        .query_row([client_id], |r| r.get(0))
        .optional()?)
}

/// Gives `client_id` to `user_id` unless someone has it; returns its owner either way.
pub fn claim(conn: &Connection, client_id: &str, user_id: &str, now: i64) -> Result<String> {
    conn.prepare_cached(
        "INSERT OR IGNORE INTO client_owners (client_id, user_id, first_seen) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![client_id, user_id, now])?;
    Ok(owner(conn, client_id)?.unwrap_or_else(|| user_id.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::migrate;
    use crate::storage::sqlite::accounts;

    #[test]
    fn the_first_user_keeps_the_id() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate::apply(&mut conn).unwrap();
        let a = accounts::create_user(&conn, "a", "A", false, 1).unwrap();
        let b = accounts::create_user(&conn, "b", "B", false, 1).unwrap();
        assert_eq!(owner(&conn, "cl_1").unwrap(), None);
        assert_eq!(claim(&conn, "cl_1", &a.id, 1).unwrap(), a.id);
        assert_eq!(claim(&conn, "cl_1", &b.id, 2).unwrap(), a.id);
        assert_eq!(owner(&conn, "cl_1").unwrap(), Some(a.id));
    }
}
