//! Schema migrations from the top-level `migrations/` folder, applied at start by
//! `rusqlite_migration` (tracked in SQLite's `user_version`). Add a file, add a line.

use rusqlite::Connection;
use rusqlite_migration::{Migrations, M};

use super::error::Result;

/// Every migration, in order (its position is its version).
const SQL: [&str; 6] = [
    include_str!("../../../migrations/0001_core.sql"),
    include_str!("../../../migrations/0002_sharing.sql"),
    include_str!("../../../migrations/0003_deleted_by.sql"),
    include_str!("../../../migrations/0004_access_epoch.sql"),
    include_str!("../../../migrations/0005_client_owners.sql"),
    include_str!("../../../migrations/0006_block_links.sql"),
];

fn migrations() -> Migrations<'static> {
    Migrations::new(SQL.iter().map(|sql| M::up(sql)).collect())
}

pub fn apply(conn: &mut Connection) -> Result<()> {
    migrations().to_latest(conn)?;
    Ok(())
}

/// True when the database is at the newest schema version (for readiness checks).
pub fn is_current(conn: &Connection) -> Result<bool> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    Ok(version as usize == migrations_len())
}

pub fn migrations_len() -> usize {
    SQL.len()
}

#[cfg(test)]
mod tests {
    #[test]
    fn migrations_are_valid() {
        super::migrations().validate().unwrap();
    }
}
