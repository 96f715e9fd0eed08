//! The one writer: a dedicated thread owning the only write connection. Jobs arrive over a
//! channel in the order they were sent and run in that order, each in its own savepoint;
//! whatever has queued up while the previous commit was syncing goes into the next
//! transaction (group commit), so many documents' syncs share one fsync. A job's answer is
//! released only after its transaction committed, so "applied" always means "on disk".
//! Everything that must see a document's latest writes (loading an actor's state) goes
//! through this queue too, which keeps each document's order without any lock.

use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use rusqlite::Connection;
use tokio::sync::oneshot;

use crate::storage::access_epoch::AccessEpoch;
use crate::storage::error::{Result, StorageError};
use crate::storage::feed::head::FeedHead;
use crate::storage::health::StorageHealth;

trait Job: Send {
    /// Runs inside the open transaction; false when the job failed (its savepoint is undone).
    fn run(&mut self, conn: &Connection) -> bool;
    /// Whether the job failed because the database or disk is full.
    fn failed_full(&self) -> bool {
        false
    }
    /// Called after the transaction ended; `committed` is the commit's outcome.
    fn finish(self: Box<Self>, committed: std::result::Result<(), CommitFailure>);
}

/// Why a transaction did not commit; every job of the batch gets a copy.
#[derive(Debug, Clone)]
pub(crate) struct CommitFailure {
    full: bool,
    message: String,
}

impl From<rusqlite::Error> for CommitFailure {
    fn from(e: rusqlite::Error) -> Self {
        CommitFailure {
            full: crate::storage::error::is_full(&e),
            message: e.to_string(),
        }
    }
}

impl From<CommitFailure> for StorageError {
    fn from(f: CommitFailure) -> Self {
        if f.full {
            StorageError::Full(f.message)
        } else {
            StorageError::Commit(f.message)
        }
    }
}

struct CallJob<T, F> {
    f: Option<F>,
    out: Option<Result<T>>,
    reply: oneshot::Sender<Result<T>>,
}

impl<T: Send, F: FnOnce(&Connection) -> Result<T> + Send> Job for CallJob<T, F> {
    fn run(&mut self, conn: &Connection) -> bool {
        let f = self.f.take().expect("job runs once");
        let out = f(conn);
        let ok = out.is_ok();
        self.out = Some(out);
        ok
    }

    fn failed_full(&self) -> bool {
        matches!(&self.out, Some(Err(e)) if e.is_full())
    }

    fn finish(self: Box<Self>, committed: std::result::Result<(), CommitFailure>) {
        let out = match (self.out, committed) {
            (Some(Ok(v)), Ok(())) => Ok(v),
            (Some(Ok(_)), Err(e)) => Err(e.into()),
            (Some(Err(e)), _) => Err(e),
            (None, Err(e)) => Err(e.into()),
            (None, Ok(())) => Err(StorageError::Commit("job did not run".into())),
        };
        let _ = self.reply.send(out);
    }
}

#[derive(Clone)]
pub struct Writer {
    tx: mpsc::Sender<Box<dyn Job>>,
    health: Arc<StorageHealth>,
    access: Arc<AccessEpoch>,
    feed: Arc<FeedHead>,
}

impl Writer {
    /// Starts the writer thread on `conn`. It stops when every `Writer` handle is dropped.
    pub fn start(
        conn: Connection,
        max_batch: usize,
        metrics: Option<Arc<crate::metrics::Metrics>>,
    ) -> (Writer, thread::JoinHandle<()>) {
        let (tx, rx) = mpsc::channel::<Box<dyn Job>>();
        let health = Arc::new(StorageHealth::new(metrics.clone()));
        let access = Arc::new(AccessEpoch::default());
        let _ = access.refresh(&conn);
        let feed = Arc::new(FeedHead::default());
        let _ = feed.refresh(&conn);
        let seen = (health.clone(), access.clone(), feed.clone());
        let handle = thread::Builder::new()
            .name("docsync-writer".into())
            .spawn(move || {
                run_loop(
                    conn,
                    rx,
                    max_batch.max(1),
                    metrics,
                    &seen.0,
                    &seen.1,
                    &seen.2,
                )
            })
            .expect("spawn writer thread");
        (
            Writer {
                tx,
                health,
                access,
                feed,
            },
            handle,
        )
    }

    /// Whether writes currently fail for lack of space (kept by the writer thread).
    pub fn health(&self) -> &Arc<StorageHealth> {
        &self.health
    }

    /// The access epoch, moved by the writer after every commit (see `access_epoch.rs`).
    pub fn access_epoch(&self) -> &Arc<AccessEpoch> {
        &self.access
    }

    /// The change feed's head, moved by the writer after every commit (`feed/head.rs`).
    pub fn feed_head(&self) -> &Arc<FeedHead> {
        &self.feed
    }

    /// Queues `f` to run inside the next transaction; resolves once that transaction committed.
    pub fn call<T, F>(&self, f: F) -> impl std::future::Future<Output = Result<T>> + use<T, F>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let (reply, rx) = oneshot::channel();
        let job: Box<dyn Job> = Box::new(CallJob {
            f: Some(f),
            out: None,
            reply,
        });
        let sent = self.tx.send(job).is_ok();
        async move {
            if !sent {
                return Err(StorageError::WriterGone);
            }
            rx.await.unwrap_or(Err(StorageError::WriterGone))
        }
    }

    /// Blocking form for the CLI and start-up code that has no runtime.
    pub fn call_blocking<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        futures::executor::block_on(self.call(f))
    }
}

fn run_loop(
    conn: Connection,
    rx: mpsc::Receiver<Box<dyn Job>>,
    max_batch: usize,
    metrics: Option<Arc<crate::metrics::Metrics>>,
    health: &StorageHealth,
    access: &AccessEpoch,
    feed: &FeedHead,
) {
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        while batch.len() < max_batch {
            match rx.try_recv() {
                Ok(j) => batch.push(j),
                Err(_) => break,
            }
        }
        let started = Instant::now();
        let committed = run_batch(&conn, &mut batch);
        if let Some(m) = &metrics {
            m.commit_seconds.observe(started.elapsed().as_secs_f64());
            m.commit_jobs.observe(batch.len() as f64);
        }
        // Full: either single jobs were refused (their savepoints undone, the rest committed)
        // or the commit itself found no room (the whole batch undone: nothing half-written).
        // Marked before the answers go out, so a client that got 507 sees the server not ready.
        let refused = match &committed {
            Err(f) if f.full => batch.len(),
            _ => batch.iter().filter(|j| j.failed_full()).count(),
        };
        if refused > 0 {
            let why = match &committed {
                Err(f) => f.message.as_str(),
                Ok(()) => "a write needed a page the database cannot grow into",
            };
            health.refused(refused, why);
        }
        // Before the answers go out: a request that follows a committed share or token change
        // must not be served from an access decision cached before it.
        if committed.is_ok() {
            let _ = access.refresh(&conn);
            // Likewise the feed: a waiting reader woken by it finds the entries committed.
            let _ = feed.refresh(&conn);
        }
        for job in batch {
            job.finish(committed.clone());
        }
        // While full, look for space again now and then, after the answers went out.
        if refused == 0
            && committed.is_ok()
            && health.probe_due()
            && super::space::probe_committed(&conn, health.probe_bytes())
        {
            health.space_found();
        }
    }
    // Last handle gone: leave a compact WAL behind for the next start.
    let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
}

/// Runs one statement through the connection's cache: the transaction's own statements run
/// several times per commit and need no parsing after the first.
fn exec(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

fn run_batch(
    conn: &Connection,
    batch: &mut [Box<dyn Job>],
) -> std::result::Result<(), CommitFailure> {
    exec(conn, "BEGIN IMMEDIATE")?;
    for job in batch.iter_mut() {
        if let Err(e) = exec(conn, "SAVEPOINT job") {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(e.into());
        }
        let ok = job.run(conn);
        let end = if ok {
            exec(conn, "RELEASE job")
        } else {
            exec(conn, "ROLLBACK TO job").and_then(|()| exec(conn, "RELEASE job"))
        };
        if let Err(e) = end {
            let _ = conn.execute_batch("ROLLBACK");
            let mut failure = CommitFailure::from(e);
            // After SQLITE_FULL, SQLite may have rolled the whole transaction back already
            // (its savepoint is gone): every job of the batch was undone for lack of space.
            failure.full |= job.failed_full();
            return Err(failure);
        }
    }
    if let Err(e) = exec(conn, "COMMIT") {
        let _ = conn.execute_batch("ROLLBACK");
        return Err(e.into());
    }
    Ok(())
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
