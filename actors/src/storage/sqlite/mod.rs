//! The embedded SQLite engine (the default): the file opened in WAL mode with its pragmas, the
//! read pool, the migrations of `migrations/` (`migrate.rs`), the one writer thread with group
//! commit (`writer.rs`), the disk-space probe (`space.rs`) and online backups (`backup.rs`).
//! What is stored lives with each concept (`storage/<concept>/sqlite.rs`).

pub mod backup;
pub mod migrate;
pub mod space;
pub mod writer;

use std::path::Path;

use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::Connection;

use super::config::{StorageConfig, Synchronous};
use crate::storage::error::{Result, StorageError};
use writer::Writer;

pub type ReadPool = r2d2::Pool<SqliteConnectionManager>;

/// Prepared statements kept per connection. The writer alone runs about 30 distinct ones
/// (a sync touches blocks, the log, results, markdown, FTS, tags and links); with rusqlite's
/// default of 16 they pushed each other out and were parsed again on every write.
const STATEMENT_CACHE: usize = 128;

fn pragmas(conn: &Connection, sync: Synchronous, cache_kib: u32) -> rusqlite::Result<()> {
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    let sync = match sync {
        Synchronous::Full => "FULL",
        Synchronous::Normal => "NORMAL",
    };
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = {sync}; PRAGMA foreign_keys = ON; \
         PRAGMA busy_timeout = 10000; PRAGMA cache_size = -{cache_kib};"
    ))
}

/// Opens the file (creating it and its folder if needed), applies pending migrations, and
/// starts the writer thread; returns the writer, the read pool and the writer's join handle.
pub fn open(cfg: &StorageConfig) -> Result<(Writer, ReadPool, std::thread::JoinHandle<()>)> {
    if let Some(dir) = cfg.path.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_dir(dir)?;
    }
    let mut conn = Connection::open(&cfg.path)?;
    pragmas(&conn, cfg.synchronous, cfg.cache_kib)?;
    migrate::apply(&mut conn)?;
    let (sync, cache_kib) = (cfg.synchronous, cfg.cache_kib);
    let manager = SqliteConnectionManager::file(&cfg.path).with_init(move |c| {
        pragmas(c, sync, cache_kib)?;
        c.execute_batch("PRAGMA query_only = ON;")
    });
    let reads = r2d2::Pool::builder()
        .max_size(cfg.read_pool_size.max(1))
        .build(manager)?;
    let (writer, handle) = Writer::start(conn, cfg.group_commit_max, cfg.metrics.clone());
    Ok((writer, reads, handle))
}

fn create_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| StorageError::Commit(format!("cannot create {}: {e}", dir.display())))
}
