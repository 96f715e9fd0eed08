//! Storage: turns effects into rows inside one transaction and answers reads (snapshot load,
//! log after `seq`, roles, derived data). It knows SQL, not HTTP or actors.
//!
//! One folder per concept (`roles/`, `sharing/`, `log/`, …) holds the concept's types and its
//! rules, written once (`mod.rs`), over small row questions (`rows.rs`) that `sqlite.rs` and
//! `postgres.rs` beside them answer under the same names. Each engine — the embedded SQLite
//! file (`sqlite/`) and PostgreSQL for cluster mode (`postgres/`) — has a folder of its own
//! (open, settings, writer, migrations); what only a cluster stores is in `cluster/`.
//! Neither backend imports the other, and no rule imports a backend
//! (`actors/tests/file_graph.rs`).

pub mod access_epoch;
pub mod accounts;
pub mod audit;
pub mod clients;
pub mod cluster;
pub mod compaction;
mod config;
pub mod conflicts;
mod db;
pub mod derived;
pub mod documents;
pub mod error;
pub mod feed;
pub mod health;
pub mod identities;
pub mod invites;
pub mod log;
pub mod people;
pub mod postgres;
pub mod roles;
pub mod search;
pub mod seed;
pub mod sharing;
pub mod sqlite;
pub mod trash;
pub mod versions;
pub mod webhooks;

#[cfg(test)]
mod differential_tests;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use access_epoch::AccessEpoch;
pub use cluster::node_news::NodeNews;
pub use config::{Backend, StorageConfig, Synchronous};
pub use db::Db;
pub use error::{Result, StorageError};
pub use feed::head::FeedHead;
pub use health::StorageHealth;
pub use sqlite::writer::Writer;
pub use sqlite::ReadPool;

/// Handle to the database: cheap to clone, shared by actors and handlers. Every call runs a
/// closure on a `Db` — a SQLite connection or a PostgreSQL transaction — and the facades
/// (`storage::roles`, `storage::documents`, …) answer on either.
#[derive(Clone)]
pub struct Storage {
    inner: Inner,
}

#[derive(Clone)]
enum Inner {
    Sqlite {
        writer: Writer,
        reads: ReadPool,
        path: Arc<PathBuf>,
    },
    Postgres {
        pg: postgres::store::PgStorage,
        health: Arc<StorageHealth>,
        epoch: Arc<AccessEpoch>,
        feed: Arc<FeedHead>,
        news: Arc<NodeNews>,
        _watch: Arc<StopOnDrop>,
    },
}

/// Stops the access-epoch watcher when the last handle to the storage goes.
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// How often a node reads the cluster's access epoch besides each notification.
const ACCESS_POLL: Duration = Duration::from_secs(1);

impl Storage {
    /// Opens the database (creating the SQLite file if needed), applies pending migrations
    /// and starts the writer thread. Returns the join handle of the writer so shutdown can
    /// wait for it.
    pub fn open(cfg: &StorageConfig) -> Result<(Storage, std::thread::JoinHandle<()>)> {
        match &cfg.backend {
            Backend::Sqlite => Self::open_sqlite(cfg),
            Backend::Postgres { url } => {
                let epoch = Arc::new(AccessEpoch::default());
                let (pg, handle) = postgres::store::PgStorage::open(
                    url,
                    cfg.read_pool_size,
                    cfg.group_commit_max,
                    Some(epoch.clone()),
                )?;
                let stop = Arc::new(AtomicBool::new(false));
                let feed = Arc::new(FeedHead::default());
                let news = Arc::new(NodeNews::default());
                cluster::access_watch::watch(
                    url.clone(),
                    epoch.clone(),
                    feed.clone(),
                    news.clone(),
                    ACCESS_POLL,
                    stop.clone(),
                );
                Ok((
                    Storage {
                        inner: Inner::Postgres {
                            pg,
                            health: Arc::new(StorageHealth::new(cfg.metrics.clone())),
                            epoch,
                            feed,
                            news,
                            _watch: Arc::new(StopOnDrop(stop)),
                        },
                    },
                    handle,
                ))
            }
        }
    }

    fn open_sqlite(cfg: &StorageConfig) -> Result<(Storage, std::thread::JoinHandle<()>)> {
        let (writer, reads, handle) = sqlite::open(cfg)?;
        Ok((
            Storage {
                inner: Inner::Sqlite {
                    writer,
                    reads,
                    path: Arc::new(cfg.path.clone()),
                },
            },
            handle,
        ))
    }

    /// The SQLite file, or None on PostgreSQL.
    pub fn path(&self) -> Option<&Path> {
        match &self.inner {
            Inner::Sqlite { path, .. } => Some(path),
            Inner::Postgres { .. } => None,
        }
    }

    /// SQLite's writer itself, for tools and tests that need its raw connection.
    pub fn sqlite_writer(&self) -> Option<&Writer> {
        match &self.inner {
            Inner::Sqlite { writer, .. } => Some(writer),
            Inner::Postgres { .. } => None,
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self.inner, Inner::Postgres { .. })
    }

    /// Whether writes are failing for lack of space (and the probe size to try again).
    pub fn health(&self) -> &Arc<StorageHealth> {
        match &self.inner {
            Inner::Sqlite { writer, .. } => writer.health(),
            Inner::Postgres { health, .. } => health,
        }
    }

    /// The access epoch: moves whenever any right changes anywhere (on PostgreSQL, on any node).
    pub fn access_epoch(&self) -> &Arc<AccessEpoch> {
        match &self.inner {
            Inner::Sqlite { writer, .. } => writer.access_epoch(),
            Inner::Postgres { epoch, .. } => epoch,
        }
    }

    /// The change feed's head: moves after a commit that logged entries (on PostgreSQL, by
    /// the commit's notification, whichever node wrote).
    pub fn feed_head(&self) -> &Arc<FeedHead> {
        match &self.inner {
            Inner::Sqlite { writer, .. } => writer.feed_head(),
            Inner::Postgres { feed, .. } => feed,
        }
    }

    /// What the cluster's nodes tell each other (PostgreSQL only: one node is all of a
    /// SQLite deployment).
    pub fn node_news(&self) -> Option<&Arc<NodeNews>> {
        match &self.inner {
            Inner::Sqlite { .. } => None,
            Inner::Postgres { news, .. } => Some(news),
        }
    }

    /// Runs a read on a pooled connection, off the async threads (on PostgreSQL, in a
    /// read-only transaction).
    pub async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Db) -> Result<T> + Send + 'static,
    {
        match &self.inner {
            Inner::Sqlite { reads, .. } => {
                let pool = reads.clone();
                tokio::task::spawn_blocking(move || {
                    let conn = pool.get()?;
                    f(&mut Db::Sqlite(&conn))
                })
                .await
                .map_err(|e| StorageError::Join(e.to_string()))?
            }
            Inner::Postgres { pg, .. } => pg.read(move |t| f(&mut Db::Postgres(t, None))).await,
        }
    }

    /// A read of a few index lookups, run right here when a pooled SQLite connection is free:
    /// the hand-off to the blocking pool (two thread wake-ups) costs more than such a read.
    /// Falls back to `read` when every connection is busy, so it never waits on the pool.
    /// On PostgreSQL (a network round trip) it is `read`.
    pub async fn read_short<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Db) -> Result<T> + Send + 'static,
    {
        if let Inner::Sqlite { reads, .. } = &self.inner {
            if let Some(conn) = reads.try_get() {
                return f(&mut Db::Sqlite(&conn));
            }
        }
        self.read(f).await
    }

    /// Blocking read for the CLI and tests (never on an async runtime's thread).
    pub fn read_blocking<T>(&self, f: impl FnOnce(&mut Db) -> Result<T>) -> Result<T> {
        match &self.inner {
            Inner::Sqlite { reads, .. } => {
                let conn = reads.get()?;
                f(&mut Db::Sqlite(&conn))
            }
            Inner::Postgres { pg, .. } => pg.read_blocking(|t| f(&mut Db::Postgres(t, None))),
        }
    }

    /// Queues a write; resolves after the transaction holding it committed.
    pub fn write<T, F>(&self, f: F) -> impl std::future::Future<Output = Result<T>> + use<T, F>
    where
        T: Send + 'static,
        F: FnOnce(&mut Db) -> Result<T> + Send + 'static,
    {
        let call = match &self.inner {
            Inner::Sqlite { writer, .. } => {
                futures::future::Either::Left(writer.call(move |c| f(&mut Db::Sqlite(c))))
            }
            Inner::Postgres { pg, .. } => futures::future::Either::Right(
                pg.write(move |t, kept| f(&mut Db::Postgres(t, Some(kept)))),
            ),
        };
        call
    }

    /// Queues a write and waits for its commit on this thread (CLI and tests; never on an
    /// async runtime's thread).
    pub fn write_blocking<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Db) -> Result<T> + Send + 'static,
    {
        futures::executor::block_on(self.write(f))
    }

    /// Whether the schema is the newest this build knows (asked through the writer, so it
    /// also proves the database takes writes).
    pub async fn schema_is_current(&self) -> Result<bool> {
        match &self.inner {
            Inner::Sqlite { writer, .. } => writer.call(sqlite::migrate::is_current).await,
            Inner::Postgres { pg, .. } => pg.write(|t, _| postgres::migrate::is_current(t)).await,
        }
    }

    /// While writes fail for lack of space: tries a real write of `bytes` (SQLite). On
    /// PostgreSQL the server's own disk is not ours to probe; a write that succeeds is the
    /// answer.
    pub async fn probe_space(&self, bytes: usize) -> Result<bool> {
        match &self.inner {
            Inner::Sqlite { writer, .. } => {
                writer.call(move |c| sqlite::space::probe(c, bytes)).await
            }
            Inner::Postgres { pg, .. } => pg.write(|_, _| Ok(true)).await,
        }
    }

    /// Test hook: caps the SQLite file's size (`PRAGMA max_page_count`), making "disk full"
    /// deterministic. Not available on PostgreSQL.
    pub async fn cap_pages(&self, max_pages: u32) -> Result<(u32, u32)> {
        match &self.inner {
            Inner::Sqlite { writer, .. } => {
                writer
                    .call(move |c| sqlite::space::cap_pages(c, max_pages))
                    .await
            }
            Inner::Postgres { .. } => Err(StorageError::Invalid(
                "max_page_count is a SQLite setting; this node runs on PostgreSQL".into(),
            )),
        }
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
            backend: crate::storage::Backend::Sqlite,
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
            let one = |c: &mut super::Db| {
                Ok(c.sqlite()
                    .unwrap()
                    .query_row("SELECT 1", [], |r| r.get::<_, i64>(0))?)
            };
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
