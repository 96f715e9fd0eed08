//! Client IDs' owners on PostgreSQL (twins of `sqlite.rs`).

use postgres::GenericClient;

use crate::storage::error::Result;

/// The owner of `client_id`, if anyone used it yet.
pub fn owner(c: &mut impl GenericClient, client_id: &str) -> Result<Option<String>> {
    Ok(c.query_opt(
        "SELECT user_id FROM client_owners WHERE client_id = $1",
        &[&client_id],
    )?
    .map(|r| r.get(0)))
}

pub fn insert_unless_owned(
    c: &mut impl GenericClient,
    client_id: &str,
    user_id: &str,
    now: i64,
) -> Result<()> {
    c.execute(
        "INSERT INTO client_owners (client_id, user_id, first_seen) VALUES ($1, $2, $3)
         ON CONFLICT (client_id) DO NOTHING",
        &[&client_id, &user_id, &now],
    )?;
    Ok(())
}
