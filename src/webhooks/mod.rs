//! Webhooks (PROTOCOL §11): the change feed pushed to receivers. `Webhooks` is what the
//! HTTP handlers hold: it seals new secrets and wakes the deliverers when a webhook is
//! made, resumed or deleted. Behind it one supervisor task keeps one deliverer task per
//! active webhook (`deliverer.rs`); each cuts batches from the feed, sends them
//! (`attempt.rs`) and retries with backoff — on tasks of their own, reading the database
//! through the read pool, so no receiver, however slow, ever holds up a document's actor
//! or an edit. Which webhook a node delivers is decided by a lease on its row (cluster
//! mode: one node at a time; on SQLite the one process always has it).

mod attempt;
mod context;
mod deliverer;
mod public_dns;
pub mod sealing;
pub mod signature;
pub mod target;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use docsync_actors::clock::SharedClock;
use docsync_actors::storage::Storage;

use crate::config::Settings;
use crate::shutdown::Shutdown;
use context::Context;
use sealing::{Sealer, SealingError};

pub struct Webhooks {
    sealer: Option<Arc<Sealer>>,
    wake: watch::Sender<u64>,
    /// The thread the deliverers run on (kept for as long as the server runs).
    _thread: actix::Arbiter,
}

impl Webhooks {
    /// Opens the sealing key and starts the supervisor (on the current actix runtime).
    pub fn start(
        settings: &Settings,
        storage: Storage,
        clock: SharedClock,
        shutdown: Shutdown,
        node: Option<String>,
    ) -> anyhow::Result<Arc<Webhooks>> {
        let sealer = sealer(settings)?.map(Arc::new);
        let (wake, wake_rx) = watch::channel(0);
        let builder = || {
            reqwest::Client::builder()
                .timeout(Duration::from_secs(settings.webhooks.timeout_secs))
                .connect_timeout(Duration::from_secs(settings.webhooks.timeout_secs))
                // A redirect is an answer the webhook's owner must look at, not a hop to
                // take with a signed body.
                .redirect(reqwest::redirect::Policy::none())
                .user_agent(concat!("docsync-webhooks/", env!("CARGO_PKG_VERSION")))
        };
        let client = builder().build()?;
        let public_client = builder()
            .dns_resolver(Arc::new(public_dns::PublicOnly))
            .build()?;
        let ctx = Arc::new(Context {
            clustered: storage.is_postgres(),
            storage,
            clock,
            settings: settings.webhooks.clone(),
            sealer: sealer.clone(),
            client,
            public_client,
            node: node.unwrap_or_else(|| format!("node-{}", uuid::Uuid::new_v4())),
            shutdown,
            wake: wake_rx,
        });
        // A thread of their own at a lower priority: a backlog being drained takes the CPU
        // edits leave, not theirs. The feed is read on this runtime's blocking threads,
        // which are started from it and so inherit its priority.
        let thread = actix::Arbiter::new();
        let nice = settings.webhooks.nice;
        thread.spawn(async move {
            lower_priority(nice);
            deliverer::supervise(ctx).await;
        });
        Ok(Arc::new(Webhooks {
            sealer,
            wake,
            _thread: thread,
        }))
    }

    /// The secret sealed for storage; None when this server has no key (cluster mode
    /// without `webhooks.key`).
    pub fn seal(&self, id: &str, secret: &str) -> Option<String> {
        self.sealer.as_ref().map(|s| s.seal(id, secret))
    }

    /// A webhook was made, resumed or deleted: the deliverers look again now.
    pub fn poke(&self) {
        self.wake.send_modify(|n| *n += 1);
    }
}

/// Lowers this thread's scheduling priority to `nice` (Linux keeps one per thread; threads
/// started from it inherit it).
fn lower_priority(nice: i32) {
    // SAFETY: plain system calls on the calling thread's own ID.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) } as libc::id_t;
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, tid, nice) } != 0 {
        tracing::warn!(nice, "webhooks: could not lower the deliverers' priority");
    }
}

/// `webhooks.key`, else (SQLite) the key file beside the database; cluster mode without a
/// key has none: webhooks cannot be made there (a key file would differ per node).
fn sealer(settings: &Settings) -> Result<Option<Sealer>, SealingError> {
    if !settings.webhooks.key.is_empty() {
        return Sealer::from_hex(&settings.webhooks.key).map(Some);
    }
    if settings.storage.backend == crate::config::BackendKind::Postgres {
        return Ok(None);
    }
    let mut path = settings.storage.path.clone().into_os_string();
    path.push(".webhook-key");
    Sealer::from_file(std::path::Path::new(&path)).map(Some)
}
