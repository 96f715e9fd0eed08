//! The PostgreSQL writer: the SQLite writer's design (`storage::writer`) on a PostgreSQL
//! connection. One thread owns the connection; jobs arrive over a channel in the order they
//! were sent and run in that order, each in its own savepoint of one transaction (a job
//! alone: the transaction itself), and whatever queued up meanwhile shares the next commit
//! (group commit). A job's answer is released only after its transaction committed — with
//! `synchronous_commit` on, that means on disk (and on the synchronous standby, when there is
//! one). A failed job is undone alone (its savepoint, or its transaction); a failed commit
//! fails every job of the batch. The every-op statements stay prepared on the connection
//! (`Kept`, handed to each job; renewed with the connection, and after a failed batch).

use std::sync::mpsc;
use std::thread;

use postgres::{Client, Transaction};
use tokio::sync::oneshot;

use super::super::error::{Result, StorageError};
use super::kept::Kept;

trait Job: Send {
    /// Runs inside the open transaction; false when the job failed.
    fn run(&mut self, tx: &mut Transaction<'_>, kept: &mut Kept) -> bool;
    fn finish(self: Box<Self>, committed: std::result::Result<(), String>);
}

struct CallJob<T, F> {
    f: Option<F>,
    out: Option<Result<T>>,
    reply: oneshot::Sender<Result<T>>,
}

impl<T, F> Job for CallJob<T, F>
where
    T: Send,
    F: FnOnce(&mut Transaction<'_>, &mut Kept) -> Result<T> + Send,
{
    fn run(&mut self, tx: &mut Transaction<'_>, kept: &mut Kept) -> bool {
        let f = self.f.take().expect("job runs once");
        let out = f(tx, kept);
        let ok = out.is_ok();
        self.out = Some(out);
        ok
    }

    fn finish(self: Box<Self>, committed: std::result::Result<(), String>) {
        let out = match (self.out, committed) {
            (Some(Ok(v)), Ok(())) => Ok(v),
            (Some(Ok(_)), Err(e)) | (None, Err(e)) => Err(StorageError::Commit(e)),
            (Some(Err(e)), _) => Err(e),
            (None, Ok(())) => Err(StorageError::Commit("job did not run".into())),
        };
        let _ = self.reply.send(out);
    }
}

#[derive(Clone)]
pub struct PgWriter {
    tx: mpsc::Sender<Box<dyn Job>>,
}

impl PgWriter {
    /// Starts the writer thread on `client`; it stops when every handle is dropped.
    pub fn start(client: Client, max_batch: usize) -> (PgWriter, thread::JoinHandle<()>) {
        PgWriter::start_with(client, None, max_batch, None)
    }

    /// Like `start`; with `reconnect`, a connection that broke (the database restarted, or
    /// failed over to its standby) is replaced before the next batch. The batch that was
    /// running when it broke fails: its outcome is unknown to its callers, who retry with the
    /// same op IDs.
    ///
    /// With `epoch`, each batch also reads the access epoch in its transaction and the
    /// writer moves `epoch` to it right after the commit, before any answer goes out: a
    /// change of rights made through this node holds for this node's next request (other
    /// nodes follow by notification).
    pub fn start_with(
        client: Client,
        reconnect: Option<Reconnect>,
        max_batch: usize,
        epoch: Option<std::sync::Arc<crate::storage::access_epoch::AccessEpoch>>,
    ) -> (PgWriter, thread::JoinHandle<()>) {
        let (tx, rx) = mpsc::channel::<Box<dyn Job>>();
        let handle = thread::Builder::new()
            .name("docsync-pg-writer".into())
            .spawn(move || run_loop(client, reconnect, rx, max_batch.max(1), epoch))
            .expect("spawn writer thread");
        (PgWriter { tx }, handle)
    }

    /// Queues `f` for the next transaction; resolves once that transaction committed.
    pub fn call<T, F>(&self, f: F) -> impl std::future::Future<Output = Result<T>> + use<T, F>
    where
        T: Send + 'static,
        F: FnOnce(&mut Transaction<'_>) -> Result<T> + Send + 'static,
    {
        self.call_kept(move |tx, _| f(tx))
    }

    /// `call`, with the statements kept prepared on the writer's connection.
    pub fn call_kept<T, F>(&self, f: F) -> impl std::future::Future<Output = Result<T>> + use<T, F>
    where
        T: Send + 'static,
        F: FnOnce(&mut Transaction<'_>, &mut Kept) -> Result<T> + Send + 'static,
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
}

/// Opens a new connection for the writer.
pub type Reconnect = Box<dyn Fn() -> std::result::Result<Client, postgres::Error> + Send>;

fn run_loop(
    mut client: Client,
    reconnect: Option<Reconnect>,
    rx: mpsc::Receiver<Box<dyn Job>>,
    max_batch: usize,
    epoch: Option<std::sync::Arc<crate::storage::access_epoch::AccessEpoch>>,
) {
    let mut kept = Kept::default();
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        while batch.len() < max_batch {
            match rx.try_recv() {
                Ok(j) => batch.push(j),
                Err(_) => break,
            }
        }
        if client.is_closed() {
            if let Some(connect) = &reconnect {
                match connect() {
                    Ok(c) => {
                        client = c;
                        // What was prepared went with the old connection.
                        kept = Kept::default();
                    }
                    Err(e) => tracing::warn!(error = %e, "the writer cannot reconnect yet"),
                }
            }
        }
        let committed = run_batch(&mut client, &mut kept, &mut batch, epoch.is_some());
        if committed.is_err() {
            // A statement may be what failed (a schema changed under it): prepared again.
            kept = Kept::default();
        }
        let committed = committed
            .map(|n| {
                if let (Some(e), Some(n)) = (&epoch, n) {
                    e.observe(n);
                }
            })
            .map_err(|e| e.to_string());
        for job in batch {
            job.finish(committed.clone());
        }
    }
}

/// Runs and commits one batch; with `read_epoch`, answers the access epoch as committed.
fn run_batch(
    client: &mut Client,
    kept: &mut Kept,
    batch: &mut [Box<dyn Job>],
    read_epoch: bool,
) -> std::result::Result<Option<u64>, postgres::Error> {
    let mut tx = client.transaction()?;
    // What ends the last job's savepoint, sent with the next statement (one round trip
    // fewer per job: every round trip is what a slow database multiplies).
    let mut end_savepoint = "";
    if let [job] = batch {
        // One job: the transaction is its savepoint (two round trips to the database fewer,
        // the usual case below full load). A failed job leaves nothing behind.
        if !job.run(&mut tx, kept) {
            tx.rollback()?;
            return Ok(None);
        }
    } else {
        for job in batch.iter_mut() {
            tx.batch_execute(&format!("{end_savepoint}SAVEPOINT job"))?;
            end_savepoint = if job.run(&mut tx, kept) {
                "RELEASE SAVEPOINT job; "
            } else {
                "ROLLBACK TO SAVEPOINT job; RELEASE SAVEPOINT job; "
            };
        }
    }
    let epoch = if read_epoch {
        // The simple protocol: one round trip (a prepared query takes two).
        let n = tx
            .simple_query(&format!(
                "{end_savepoint}SELECT n FROM access_epoch WHERE id = 1"
            ))?
            .into_iter()
            .find_map(|m| match m {
                postgres::SimpleQueryMessage::Row(r) => {
                    r.get(0).and_then(|v| v.parse::<i64>().ok())
                }
                _ => None,
            })
            .unwrap_or(0);
        Some(n.max(0) as u64)
    } else {
        if !end_savepoint.is_empty() {
            tx.batch_execute(end_savepoint)?;
        }
        None
    };
    tx.commit()?;
    Ok(epoch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::postgres::testing::TempPostgres;

    fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
        std::thread::spawn(f).join().unwrap()
    }

    #[tokio::test]
    async fn jobs_share_commits_fail_alone_and_are_answered_only_once_committed() {
        let pg = std::sync::Arc::new(blocking(TempPostgres::start));
        let p = pg.clone();
        let client = blocking(move || {
            let mut c = p.client();
            c.batch_execute(
                "CREATE TABLE t (k INT PRIMARY KEY);
                 CREATE TABLE child (k INT REFERENCES t(k) DEFERRABLE INITIALLY DEFERRED)",
            )
            .unwrap();
            c
        });
        let (w, _thread) = PgWriter::start(client, 64);
        // Many jobs at once: they land in fewer transactions than jobs (group commit); the
        // one that breaks a key is undone alone.
        let mut calls = Vec::new();
        for k in 0..50 {
            let key = if k == 25 { 0 } else { k };
            calls.push(w.call(move |tx| {
                tx.execute("INSERT INTO t (k) VALUES ($1)", &[&key])?;
                let xid: i64 = tx.query_one("SELECT txid_current()", &[])?.get(0);
                Ok(xid)
            }));
        }
        let mut xids = std::collections::BTreeSet::new();
        let mut failed = 0;
        for c in calls {
            match c.await {
                Ok(x) => {
                    xids.insert(x);
                }
                Err(StorageError::Postgres(_)) => failed += 1,
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(failed, 1, "only the duplicate key failed");
        assert!(
            xids.len() < 49,
            "49 jobs in {} transactions: no group commit",
            xids.len()
        );
        let p = pg.clone();
        let n: i64 = blocking(move || {
            p.client()
                .query_one("SELECT count(*) FROM t", &[])
                .unwrap()
                .get(0)
        });
        assert_eq!(n, 49);
        // A job that succeeded is still not answered Ok when its commit fails (a deferred
        // foreign key is checked at COMMIT): nothing of the batch is kept.
        let bad = w.call(|tx| {
            tx.execute("INSERT INTO child (k) VALUES (999)", &[])?;
            Ok(())
        });
        assert!(matches!(bad.await, Err(StorageError::Commit(_))));
        let p = pg.clone();
        let n: i64 = blocking(move || {
            p.client()
                .query_one("SELECT count(*) FROM child", &[])
                .unwrap()
                .get(0)
        });
        assert_eq!(n, 0);
        // One job alone (its transaction is its savepoint): a failure after a write leaves
        // nothing behind, and the writer goes on.
        let alone = w.call(|tx| -> Result<()> {
            tx.execute("INSERT INTO t (k) VALUES (1000)", &[])?;
            Err(StorageError::DocNotFound("refused after a write".into()))
        });
        assert!(matches!(alone.await, Err(StorageError::DocNotFound(_))));
        let next = w.call(|tx| Ok(tx.execute("INSERT INTO t (k) VALUES (1001)", &[])?));
        assert_eq!(next.await.unwrap(), 1);
        let p = pg.clone();
        let kept: Vec<i32> = blocking(move || {
            p.client()
                .query("SELECT k FROM t WHERE k >= 1000 ORDER BY k", &[])
                .unwrap()
                .iter()
                .map(|r| r.get(0))
                .collect()
        });
        assert_eq!(kept, vec![1001]);
        drop(w);
    }
}
