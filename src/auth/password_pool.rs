//! Password checks run on a few threads of their own, with a short queue. argon2id costs
//! ~19 MiB and tens of milliseconds per run by design; on the shared blocking pool, 200
//! concurrent logins took 3.8 GB and stalled every snapshot behind them. Here at most
//! `threads` runs exist at once, at most `queue` more wait, and any further attempt is
//! refused at once (the caller answers 503 with `Retry-After`) instead of piling up.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread;

use tokio::sync::oneshot;

type Job = Box<dyn FnOnce() + Send>;

/// The queue is full: try again in a moment.
#[derive(Debug)]
pub struct Busy;

pub struct PasswordPool {
    tx: SyncSender<Job>,
}

impl PasswordPool {
    /// Starts `threads` workers sharing a queue of `queue` waiting jobs.
    pub fn start(threads: usize, queue: usize) -> PasswordPool {
        let (tx, rx) = sync_channel::<Job>(queue);
        let rx = Arc::new(Mutex::new(rx));
        for n in 0..threads.max(1) {
            let rx = rx.clone();
            thread::Builder::new()
                .name(format!("docsync-argon2-{n}"))
                .spawn(move || work(&rx))
                .expect("spawn password thread");
        }
        PasswordPool { tx }
    }

    /// Queues `f` for a password thread now (refused at once when the queue is full); the
    /// future resolves to its result.
    pub fn run<T, F>(&self, f: F) -> impl std::future::Future<Output = Result<T, Busy>> + use<T, F>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let (reply, rx) = oneshot::channel();
        let job: Job = Box::new(move || {
            let _ = reply.send(f());
        });
        let queued = match self.tx.try_send(job) {
            Ok(()) => true,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
        };
        async move {
            if !queued {
                return Err(Busy);
            }
            rx.await.map_err(|_| Busy)
        }
    }
}

fn work(rx: &Mutex<Receiver<Job>>) {
    loop {
        // The lock is held only while taking a job, never while running it.
        let job = match rx.lock() {
            Ok(rx) => rx.recv(),
            Err(_) => return,
        };
        match job {
            Ok(job) => job(),
            Err(_) => return, // the pool is gone
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;

    #[tokio::test]
    async fn beyond_the_threads_and_the_queue_it_refuses_at_once() {
        let pool = PasswordPool::start(1, 1);
        let gate = Arc::new(Barrier::new(2));
        let (started_tx, started) = std::sync::mpsc::channel();
        let g = gate.clone();
        let first = pool.run(move || {
            let _ = started_tx.send(());
            g.wait();
            1
        });
        started.recv().unwrap(); // the one thread runs the first job
        let second = pool.run(|| 2); // waits in the queue of one
        let third = pool.run(|| 3); // nowhere to go
        assert!(third.await.is_err(), "a third job is refused at once");
        gate.wait();
        assert_eq!(first.await.unwrap(), 1);
        assert_eq!(second.await.unwrap(), 2);
    }
}
