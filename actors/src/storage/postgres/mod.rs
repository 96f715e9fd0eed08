//! The PostgreSQL engine (cluster mode): the connection pool, the settings a node refuses to
//! run without (`check_settings`), the migrations of `migrations/postgres/` (`migrate.rs`),
//! the group-commit writer (`writer.rs`) and the handle that reads and writes through them
//! (`store.rs`). What is stored lives with each concept (`storage/<concept>/postgres.rs`);
//! what only a cluster needs (membership, claims, the access watch) in `storage/cluster/`.
//!
//! The embedded SQLite engine stays the default; this one is used only with
//! `storage.backend = "postgres"`.

pub mod migrate;
pub mod store;
pub mod writer;

#[cfg(any(test, feature = "test-support"))]
pub mod testing;

use postgres::{Client, NoTls};
use r2d2_postgres::PostgresConnectionManager;

use super::error::{Result, StorageError};

pub type PgPool = r2d2::Pool<PostgresConnectionManager<NoTls>>;

/// How long a connection attempt or a wait for a pooled connection may take.
const CONNECT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// A pool of `size` connections to `url` (`host=… port=… user=… dbname=…` or a URL).
pub fn pool(url: &str, size: u32) -> Result<PgPool> {
    let mut config: postgres::Config =
        url.parse()
            .map_err(|e: postgres::Error| StorageError::Setting {
                key: "storage.postgres_url".into(),
                why: e.to_string(),
            })?;
    // Fail fast when the database is unreachable: membership must notice within its TTL.
    config.connect_timeout(CONNECT_TIMEOUT);
    let manager = PostgresConnectionManager::new(config, NoTls);
    // Unchecked: a node starts (and waits for the database) even while it is unreachable.
    Ok(r2d2::Pool::builder()
        .max_size(size)
        .connection_timeout(CONNECT_TIMEOUT)
        .build_unchecked(manager))
}

/// Refuses settings that would make an acknowledged op losable: `synchronous_commit = off`
/// acknowledges commits before they are on disk (named in the error, as the start reports it).
pub fn check_settings(c: &mut Client) -> Result<()> {
    let sync: String = c.query_one("SHOW synchronous_commit", &[])?.get(0);
    if sync == "off" {
        return Err(StorageError::Setting {
            key: "synchronous_commit".into(),
            why: "is off: PostgreSQL would acknowledge commits before they are durable; docsync refuses to start (set it to on, remote_write, remote_apply or local)".into(),
        });
    }
    let fsync: String = c.query_one("SHOW fsync", &[])?.get(0);
    if fsync == "off" {
        return Err(StorageError::Setting {
            key: "fsync".into(),
            why: "is off: a crash of the database host could lose acknowledged ops; docsync refuses to start".into(),
        });
    }
    Ok(())
}
