//! Storage: SQLite in WAL mode behind one writer thread (group commit) and a pool of read
//! connections. It turns effects into rows inside one transaction and answers reads
//! (snapshot load, log after `seq`, roles, derived data). It knows SQL, not HTTP or actors.

pub mod access_epoch;
pub mod accounts;
pub mod backup;
pub mod compaction;
pub mod derived;
pub mod documents;
pub mod error;
pub mod health;
pub mod log;
pub mod migrate;
pub mod roles;
pub mod search;
pub mod seed;
pub mod sharing;
pub mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::Connection;

pub use error::{Result, StorageError};
pub use writer::Writer;

/// How hard a commit waits for the disk. `Full` (default): an acknowledged op survives power
/// loss. `Normal`: survives a process crash, may lose the last commits on power loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Synchronous {
    Full,
    Normal,
}

#[derive(Debug, Clone)]
pub struct StorageConfig {
    pub path: PathBuf,
    pub synchronous: Synchronous,
    pub read_pool_size: u32,
    pub group_commit_max: usize,
    /// SQLite page cache per connection, in KiB.
    pub cache_kib: u32,
    pub metrics: Option<Arc<crate::metrics::Metrics>>,
}

pub type ReadPool = r2d2::Pool<SqliteConnectionManager>;

/// Handle to the database: cheap to clone, shared by actors and handlers.
#[derive(Clone)]
pub struct Storage {
    pub writer: Writer,
    reads: ReadPool,
    path: Arc<PathBuf>,
}

fn pragmas(conn: &Connection, sync: Synchronous, cache_kib: u32) -> rusqlite::Result<()> {
    let sync = match sync {
        Synchronous::Full => "FULL",
        Synchronous::Normal => "NORMAL",
    };
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = WAL; PRAGMA synchronous = {sync}; PRAGMA foreign_keys = ON; \
         PRAGMA busy_timeout = 10000; PRAGMA cache_size = -{cache_kib};"
    ))
}

impl Storage {
    /// Opens (creating if needed) the database, applies pending migrations and starts the
    /// writer thread. Returns the join handle of the writer so shutdown can wait for it.
    pub fn open(cfg: &StorageConfig) -> Result<(Storage, std::thread::JoinHandle<()>)> {
        if let Some(dir) = cfg.path.parent() {
            if !dir.as_os_str().is_empty() {
                std::fs::create_dir_all(dir).map_err(|e| {
                    StorageError::Commit(format!("cannot create {}: {e}", dir.display()))
                })?;
            }
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
        Ok((
            Storage {
                writer,
                reads,
                path: Arc::new(cfg.path.clone()),
            },
            handle,
        ))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs a read on a pooled connection, off the async threads.
    pub async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let pool = self.reads.clone();
        tokio::task::spawn_blocking(move || {
            let conn = pool.get()?;
            f(&conn)
        })
        .await
        .map_err(|e| StorageError::Join(e.to_string()))?
    }

    /// Blocking read for the CLI and tests.
    pub fn read_blocking<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let conn = self.reads.get()?;
        f(&conn)
    }

    /// Queues a write; resolves after the transaction holding it committed.
    pub fn write<T, F>(&self, f: F) -> impl std::future::Future<Output = Result<T>> + use<T, F>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        self.writer.call(f)
    }
}
