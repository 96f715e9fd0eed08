//! PostgreSQL migrations from `migrations/postgres/`, applied in order, each in its own
//! transaction, recorded in `schema_migrations`. Add a file, add a line.

use postgres::Client;

use super::super::error::Result;

const SQL: [&str; 12] = [
    include_str!("../../../../migrations/postgres/0001_cluster_core.sql"),
    include_str!("../../../../migrations/postgres/0002_accounts_sharing.sql"),
    include_str!("../../../../migrations/postgres/0003_history.sql"),
    include_str!("../../../../migrations/postgres/0004_derived.sql"),
    include_str!("../../../../migrations/postgres/0005_presence.sql"),
    include_str!("../../../../migrations/postgres/0006_reachability.sql"),
    include_str!("../../../../migrations/postgres/0007_people.sql"),
    include_str!("../../../../migrations/postgres/0008_sso.sql"),
    include_str!("../../../../migrations/postgres/0009_bullet_shares.sql"),
    include_str!("../../../../migrations/postgres/0010_blocks_parent.sql"),
    include_str!("../../../../migrations/postgres/0011_feed.sql"),
    include_str!("../../../../migrations/postgres/0012_webhooks.sql"),
];

/// Applies the migrations this database has not had yet (each file whole, in one
/// transaction with the others not yet applied). Several nodes may start at once:
/// an advisory lock makes one of them do it.
pub fn apply(c: &mut Client) -> Result<()> {
    let mut tx = c.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock(7275636523)", &[])?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INT PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
    )?;
    let done: i64 = tx
        .query_one("SELECT count(*) FROM schema_migrations", &[])?
        .get(0);
    for (i, sql) in SQL.iter().enumerate().skip(done as usize) {
        tx.batch_execute(sql)?;
        tx.execute(
            "INSERT INTO schema_migrations (version) VALUES ($1)",
            &[&(i as i32 + 1)],
        )?;
    }
    tx.commit()?;
    Ok(())
}

/// True when the database has every migration.
pub fn is_current(c: &mut impl postgres::GenericClient) -> Result<bool> {
    let done: i64 = c
        .query_one("SELECT count(*) FROM schema_migrations", &[])?
        .get(0);
    Ok(done as usize == SQL.len())
}
