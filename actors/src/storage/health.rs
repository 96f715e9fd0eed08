//! Whether writes currently fail for lack of space. The writer thread is the only one that
//! sees every write's outcome, so it keeps this state; readiness checks and metrics read it.
//!
//! An episode starts with the first write refused as full (SQLITE_FULL: the database hit
//! `max_page_count`, or the OS said ENOSPC) and ends when a probe — a write as big as the
//! biggest a client may send (`probe_bytes`) — commits again. A probe of one page would end
//! the episode on a disk with one page left, readiness would say ready, the next sync would
//! fail and the log would flap between "full" and "writable again": only room for a whole
//! write counts. Small writes that still fit into pages the file has do not end
//! it: they succeed while anything that grows the database fails. Each start and end is
//! logged once, however many requests fail in between; every refused write is counted.
//! Recovery needs nobody: while full, the writer probes after a committed transaction (at
//! most once per [`PROBE_EVERY`]), and each readiness check probes too (a server reported
//! not ready gets no traffic, so without that nothing would find the space that came back).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::metrics::Metrics;

/// How often the writer itself looks for space while full.
pub const PROBE_EVERY: Duration = Duration::from_secs(1);

/// The probe's size until the service sets it (`set_probe_bytes`).
pub const DEFAULT_PROBE_BYTES: usize = 64 * 1024;

pub struct StorageHealth {
    full: AtomicBool,
    probe_bytes: AtomicUsize,
    last_probe: Mutex<Option<Instant>>,
    metrics: Option<Arc<Metrics>>,
}

impl StorageHealth {
    pub fn new(metrics: Option<Arc<Metrics>>) -> StorageHealth {
        StorageHealth {
            full: AtomicBool::new(false),
            probe_bytes: AtomicUsize::new(DEFAULT_PROBE_BYTES),
            last_probe: Mutex::new(None),
            metrics,
        }
    }

    /// How much room a probe must find to end an episode: the most one client write can
    /// need (the service sets it from its body limit).
    pub fn set_probe_bytes(&self, bytes: usize) {
        self.probe_bytes.store(bytes.max(4096), Ordering::Relaxed);
    }

    pub fn probe_bytes(&self) -> usize {
        self.probe_bytes.load(Ordering::Relaxed)
    }

    /// True while writes fail for lack of space (from a refused write until a probe commits).
    pub fn is_full(&self) -> bool {
        self.full.load(Ordering::Relaxed)
    }

    /// `refused` writes of one transaction failed as full.
    pub(crate) fn refused(&self, refused: usize, why: &str) {
        if let Some(m) = &self.metrics {
            m.storage_full_total.inc_by(refused as u64);
            m.storage_full.set(1);
        }
        if !self.full.swap(true, Ordering::Relaxed) {
            tracing::error!(
                error = %why,
                "database is full: writes are refused (507 storage_full) and /readyz reports \
                 not ready until space is freed; this is logged once per episode"
            );
        }
    }

    /// A [`probe`] committed: there is room again. Ends the episode.
    pub fn space_found(&self) {
        if self.full.swap(false, Ordering::Relaxed) {
            if let Some(m) = &self.metrics {
                m.storage_full.set(0);
            }
            tracing::warn!("database is writable again: the storage-full episode is over");
        }
    }

    /// Whether the writer should probe now (full, and not probed within [`PROBE_EVERY`]).
    pub(crate) fn probe_due(&self) -> bool {
        if !self.is_full() {
            return false;
        }
        let mut last = self.last_probe.lock().unwrap_or_else(|e| e.into_inner());
        if last.is_some_and(|t| t.elapsed() < PROBE_EVERY) {
            return false;
        }
        *last = Some(Instant::now());
        true
    }
}

impl std::fmt::Debug for StorageHealth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StorageHealth")
            .field("full", &self.is_full())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::metrics::Metrics;
    use crate::storage::{Storage, StorageConfig, StorageError, Synchronous};

    fn open(metrics: Arc<Metrics>) -> (tempfile::TempDir, Storage) {
        let dir = tempfile::tempdir().expect("temp dir");
        let cfg = StorageConfig {
            backend: crate::storage::Backend::Sqlite,
            path: dir.path().join("t.db"),
            synchronous: Synchronous::Normal,
            read_pool_size: 1,
            group_commit_max: 64,
            cache_kib: 1024,
            metrics: Some(metrics),
        };
        let (storage, _writer) = Storage::open(&cfg).expect("open storage");
        storage
            .sqlite_writer()
            .unwrap()
            .call_blocking(|c| {
                c.execute_batch("CREATE TABLE t (b BLOB)")?;
                Ok(())
            })
            .unwrap();
        (dir, storage)
    }

    /// Caps the writer's database at its current size (SQLite answers SQLITE_FULL beyond).
    fn cap(storage: &Storage, pages: Option<u32>) {
        storage
            .sqlite_writer()
            .unwrap()
            .call_blocking(move |c| {
                let now: u32 = c.query_row("PRAGMA page_count", [], |r| r.get(0))?;
                let _: u32 = c.query_row(
                    &format!("PRAGMA max_page_count = {}", pages.unwrap_or(now)),
                    [],
                    |r| r.get(0),
                )?;
                Ok(())
            })
            .unwrap();
    }

    fn big_insert(storage: &Storage) -> crate::storage::Result<()> {
        storage.sqlite_writer().unwrap().call_blocking(|c| {
            c.execute("INSERT INTO t VALUES (zeroblob(65536))", [])?;
            Ok(())
        })
    }

    #[test]
    fn a_full_write_is_typed_counted_flagged_once_and_undone_and_space_ends_the_episode() {
        let metrics = Arc::new(Metrics::new());
        let (_dir, storage) = open(metrics.clone());
        let health = storage.health().clone();
        cap(&storage, None);

        for _ in 0..3 {
            let err = big_insert(&storage).unwrap_err();
            assert!(matches!(err, StorageError::Full(_)), "{err:?}");
        }
        assert!(health.is_full());
        assert_eq!(metrics.storage_full_total.get(), 3);
        assert_eq!(metrics.storage_full.get(), 1);
        // Undone: the refused rows are not there.
        let rows: i64 = storage
            .read_blocking(|c| {
                Ok(c.sqlite()
                    .unwrap()
                    .query_row("SELECT count(*) FROM t", [], |r| r.get(0))?)
            })
            .unwrap();
        assert_eq!(rows, 0);
        // A probe finds no room and changes nothing; it is not counted as a refused write.
        assert!(!storage
            .sqlite_writer()
            .unwrap()
            .call_blocking(|c| crate::storage::sqlite::space::probe(c, 4096))
            .unwrap());
        assert!(health.is_full());
        assert_eq!(metrics.storage_full_total.get(), 3);

        cap(&storage, Some(1 << 30));
        assert!(storage
            .sqlite_writer()
            .unwrap()
            .call_blocking(|c| crate::storage::sqlite::space::probe(c, 4096))
            .unwrap());
        health.space_found();
        assert!(!health.is_full());
        assert_eq!(metrics.storage_full.get(), 0);
        big_insert(&storage).unwrap();
        // The probe left no table behind.
        let probes: i64 = storage
            .read_blocking(|c| {
                Ok(c.sqlite().unwrap().query_row(
                    "SELECT count(*) FROM sqlite_master WHERE name = 'docsync_space_probe'",
                    [],
                    |r| r.get(0),
                )?)
            })
            .unwrap();
        assert_eq!(probes, 0);
    }

    #[test]
    fn the_writer_finds_space_again_by_itself_after_a_committed_batch() {
        let metrics = Arc::new(Metrics::new());
        let (_dir, storage) = open(metrics.clone());
        let health = storage.health().clone();
        cap(&storage, None);
        big_insert(&storage).unwrap_err();
        assert!(health.is_full());
        // Freeing space is itself a committed batch; the writer probes after it (the first
        // probe of an episode is due at once).
        cap(&storage, Some(1 << 30));
        // The probe runs after the batch's answers went out; the writer is one thread, so a
        // job queued now runs after it.
        storage
            .sqlite_writer()
            .unwrap()
            .call_blocking(|_| Ok(()))
            .unwrap();
        assert!(!health.is_full());
        assert_eq!(metrics.storage_full.get(), 0);
    }
}
