//! The PostgreSQL engine (cluster mode): the connection pool, the settings a node refuses to
//! run without (`check_settings`), the migrations of `migrations/postgres/` (`migrate.rs`),
//! the group-commit writer (`writer.rs`) and the handle that reads and writes through them
//! (`store.rs`). What is stored lives with each concept (`storage/<concept>/postgres.rs`);
//! what only a cluster needs (membership, claims, the access watch) in `storage/cluster/`.
//!
//! The embedded SQLite engine stays the default; this one is used only with
//! `storage.backend = "postgres"`.

pub mod kept;
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

/// How long a node's session may sit inside a transaction without sending anything before
/// PostgreSQL ends it. A node that stalls there — paused, frozen, cut off mid-transaction —
/// would otherwise keep its row locks (a document's row among them) and every other node's
/// claim of that document would queue behind them for as long as the stall lasts. Below the
/// smallest membership TTL (2 s), so the locks are gone before the stalled node's
/// documents can be claimed; far above what any transaction of a running node idles.
pub const STALLED_IN_TRANSACTION: std::time::Duration = std::time::Duration::from_millis(1000);

/// How long what a node sent to PostgreSQL may go unacknowledged by its host before the
/// connection is given up (TCP_USER_TIMEOUT). Without it a connection whose link was cut
/// sits in TCP's retransmission backoff for minutes — also after the link heals, so a node
/// cut off from the database took tens of seconds to serve again. Far above any ack delay
/// of a reachable host; a slow query is not affected (its request was acknowledged).
const UNACKNOWLEDGED_FOR: std::time::Duration = std::time::Duration::from_secs(5);

/// The connection settings of every session a node opens on `url` (`host=… port=… user=…
/// dbname=…` or a URL): a bounded connect, a link that stopped answering noticed in seconds
/// (`UNACKNOWLEDGED_FOR`, and keepalives for an idle one), and the end of a session stalled
/// inside a transaction (`STALLED_IN_TRANSACTION`).
pub fn node_config(url: &str) -> Result<postgres::Config> {
    let mut config: postgres::Config =
        url.parse()
            .map_err(|e: postgres::Error| StorageError::Setting {
                key: "storage.postgres_url".into(),
                why: e.to_string(),
            })?;
    // Fail fast when the database is unreachable: membership must notice within its TTL.
    config.connect_timeout(CONNECT_TIMEOUT);
    config.tcp_user_timeout(UNACKNOWLEDGED_FOR);
    config.keepalives(true);
    config.keepalives_idle(std::time::Duration::from_secs(5));
    config.keepalives_interval(std::time::Duration::from_secs(2));
    config.keepalives_retries(3);
    let own = config.get_options().unwrap_or("").to_string();
    config.options(&format!(
        "{own} -c idle_in_transaction_session_timeout={}",
        STALLED_IN_TRANSACTION.as_millis()
    ));
    Ok(config)
}

/// A pool of `size` connections to `url`, each with the node's session settings.
pub fn pool(url: &str, size: u32) -> Result<PgPool> {
    let config = node_config(url)?;
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
