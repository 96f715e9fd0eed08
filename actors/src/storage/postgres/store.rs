//! `PgStorage`: the PostgreSQL counterpart of `Storage` — one writer thread (group commit,
//! `writer.rs`) for everything that must be ordered and durable, a pool of read connections
//! for the rest, each read in a read-only transaction. Opening checks the settings that
//! durability depends on and applies pending migrations.

use std::thread;

use postgres::{NoTls, Transaction};

use super::super::error::{Result, StorageError};
use super::kept::Kept;
use super::writer::PgWriter;
use super::{check_settings, migrate, node_config, pool, PgPool};

#[derive(Clone)]
pub struct PgStorage {
    pub writer: PgWriter,
    reads: std::sync::Arc<Reads>,
}

/// The read pool, closed on a thread of its own: the blocking client ends its connections
/// with a `block_on`, which must not run on an async runtime's thread.
struct Reads(Option<PgPool>);

impl Drop for Reads {
    fn drop(&mut self) {
        if let Some(pool) = self.0.take() {
            let _ = thread::spawn(move || drop(pool)).join();
        }
    }
}

impl PgStorage {
    /// Connects, refuses unsafe settings (named), migrates, and starts the writer. Returns
    /// the writer thread's handle so shutdown can wait for it.
    /// `epoch`, when given, is moved by the writer after each commit (see `PgWriter`).
    pub fn open(
        url: &str,
        read_pool: u32,
        group_commit_max: usize,
        epoch: Option<std::sync::Arc<crate::storage::access_epoch::AccessEpoch>>,
    ) -> Result<(PgStorage, thread::JoinHandle<()>)> {
        let config = node_config(url)?;
        let mut c = config.connect(NoTls)?;
        check_settings(&mut c)?;
        migrate::apply(&mut c)?;
        let reads = std::sync::Arc::new(Reads(Some(pool(url, read_pool.max(1))?)));
        let reconnect: super::writer::Reconnect = Box::new(move || config.connect(NoTls));
        let (writer, handle) = PgWriter::start_with(c, Some(reconnect), group_commit_max, epoch);
        Ok((PgStorage { writer, reads }, handle))
    }

    /// Queues `f` on the writer; resolves once its transaction committed. `f` gets the
    /// statements kept prepared on the writer's connection too.
    pub fn write<T, F>(&self, f: F) -> impl std::future::Future<Output = Result<T>> + use<T, F>
    where
        T: Send + 'static,
        F: FnOnce(&mut Transaction<'_>, &mut Kept) -> Result<T> + Send + 'static,
    {
        self.writer.call_kept(f)
    }

    /// Runs `f` in a read-only transaction on a pooled connection, off the async threads.
    pub async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Transaction<'_>) -> Result<T> + Send + 'static,
    {
        let reads = self.reads.clone();
        tokio::task::spawn_blocking(move || {
            let pool = reads.0.as_ref().expect("open until dropped");
            let mut c = pool.get()?;
            let mut tx = c.build_transaction().read_only(true).start()?;
            let out = f(&mut tx)?;
            tx.commit()?;
            Ok(out)
        })
        .await
        .map_err(|e| StorageError::Join(e.to_string()))?
    }

    /// `read` on this thread, for the CLI and tests (never on an async runtime's thread).
    pub fn read_blocking<T>(&self, f: impl FnOnce(&mut Transaction<'_>) -> Result<T>) -> Result<T> {
        let pool = self.reads.0.as_ref().expect("open until dropped");
        let mut c = pool.get()?;
        let mut tx = c.build_transaction().read_only(true).start()?;
        let out = f(&mut tx)?;
        tx.commit()?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::documents;
    use crate::storage::postgres::testing::TempPostgres;
    use crate::storage::Db;

    fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::spawn(f).join().unwrap()
    }

    #[tokio::test]
    async fn writes_are_ordered_and_durable_reads_are_read_only_and_unsafe_settings_refused() {
        let pg = std::sync::Arc::new(blocking(TempPostgres::start));
        let url = pg.url();
        let (store, _writer) = {
            let url = url.clone();
            blocking(move || PgStorage::open(&url, 2, 64, None)).unwrap()
        };
        store
            .write(|tx, kept| {
                documents::create(
                    &mut Db::Postgres(tx, Some(kept)),
                    "doc_1",
                    "usr_a",
                    "First",
                    None,
                    1,
                )
            })
            .await
            .unwrap();
        let state = store
            .read(|tx| documents::load(&mut Db::Postgres(tx, None), "doc_1"))
            .await
            .unwrap();
        assert_eq!(state.title, "First");
        // Reads cannot write.
        let refused = store
            .read(|tx| {
                documents::create(&mut Db::Postgres(tx, None), "doc_2", "usr_a", "x", None, 1)
            })
            .await;
        assert!(
            matches!(refused, Err(StorageError::Postgres(_))),
            "{refused:?}"
        );

        // Sessions that would acknowledge commits before they are durable are refused, by name.
        let unsafe_url = format!("{url} options='-c synchronous_commit=off'");
        let err =
            blocking(move || PgStorage::open(&unsafe_url, 1, 1, None).map(|_| ())).unwrap_err();
        assert!(err.to_string().starts_with("synchronous_commit:"), "{err}");
    }
}
