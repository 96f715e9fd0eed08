//! Storage: SQLite in WAL mode behind one writer thread (group commit) and a pool of read
//! connections. It turns effects into rows inside one transaction and answers reads
//! (snapshot load, log after `seq`, roles, derived data). It knows SQL, not HTTP or actors.

pub mod access_epoch;
pub mod accounts;
pub mod backup;
pub mod clients;
pub mod compaction;
pub mod conflicts;
pub mod derived;
pub mod documents;
pub mod error;
pub mod health;
pub mod log;
pub mod migrate;
pub mod postgres;
pub mod roles;
pub mod search;
pub mod seed;
pub mod sharing;
pub mod trash;
pub mod versions;
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

    /// A read of a few index lookups, run right here when a pooled connection is free: the
    /// hand-off to the blocking pool (two thread wake-ups) costs more than such a read. Falls
    /// back to `read` when every connection is busy, so it never waits on the pool.
    pub async fn read_short<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        match self.reads.try_get() {
            Some(conn) => f(&conn),
            None => self.read(f).await,
        }
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

#[cfg(test)]
mod read_short_tests {
    use std::sync::mpsc;

    use super::{Storage, StorageConfig, Synchronous};

    /// With the only read connection taken, `read_short` does not wait on the pool on the
    /// calling thread: it hands the read to the blocking pool, which answers once the
    /// connection is free. With a free connection it answers at once, in place.
    #[test]
    fn a_short_read_runs_in_place_or_waits_off_thread() {
        let dir = tempfile::tempdir().expect("temp dir");
        let cfg = StorageConfig {
            path: dir.path().join("t.db"),
            synchronous: Synchronous::Normal,
            read_pool_size: 1,
            group_commit_max: 8,
            cache_kib: 1024,
            metrics: None,
        };
        let (storage, _writer) = Storage::open(&cfg).expect("open storage");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let one =
                |c: &rusqlite::Connection| Ok(c.query_row("SELECT 1", [], |r| r.get::<_, i64>(0))?);
            assert_eq!(storage.read_short(one).await.unwrap(), 1, "free: in place");

            // Hold the only connection in a blocking read until told to let go.
            let (taken_tx, taken_rx) = tokio::sync::oneshot::channel();
            let (release_tx, release_rx) = mpsc::channel::<()>();
            let holder: Storage = storage.clone();
            let held = tokio::spawn(async move {
                holder
                    .read(move |_| {
                        let _ = taken_tx.send(());
                        release_rx.recv().unwrap();
                        Ok(())
                    })
                    .await
            });
            taken_rx.await.unwrap();
            let short = tokio::spawn({
                let s: Storage = storage.clone();
                async move { s.read_short(one).await }
            });
            // The short read is queued behind the holder, not answered and not blocking us.
            tokio::task::yield_now().await;
            assert!(!short.is_finished());
            release_tx.send(()).unwrap();
            held.await.unwrap().unwrap();
            assert_eq!(
                short.await.unwrap().unwrap(),
                1,
                "busy: answered off-thread"
            );
        });
    }
}
