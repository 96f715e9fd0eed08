//! `DocumentActor`: applies a document's syncs strictly in mailbox order on its in-memory
//! state (pure rules, microseconds), queues the resulting rows on the writer without waiting,
//! and answers each request only once the transaction holding it has committed. Requests of a
//! hot document therefore pipeline into shared commits while order stays exactly the mailbox
//! order. If anything goes wrong (a failed write, a panic in the rules) the state is thrown
//! away and the actor stops; the next request starts a fresh actor that reloads from SQLite
//! through the writer queue, behind every write of the old one.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;

use crate::clock::SharedClock;
use crate::collab::document::DocState;
use crate::collab::lease::LeaseTable;
use crate::collab::op::OpResult;
use crate::metrics::Metrics;
use crate::storage::documents;
use crate::storage::{Storage, StorageError};

use super::messages::*;
use super::sessions::Sessions;
use super::subscribers::Subscribers;
use super::tail::LogTail;
use super::waiters::Waiters;

/// After this long without requests an open actor drops its in-memory log tail and results.
pub(super) const IDLE_TRIM_MS: i64 = 30_000;

/// How long a stopping actor lingers so replies it already produced are delivered.
pub(super) const STOP_GRACE: Duration = Duration::from_millis(20);

#[derive(Debug, Clone)]
pub struct ActorConfig {
    pub lease_ttl_ms: i64,
    pub session_ttl_ms: i64,
    /// Stop after this long with no session and no activity.
    pub idle_stop_ms: i64,
    /// Log entries kept in memory for catching up clients without a database read.
    pub log_tail: usize,
    /// At most this many log entries per `/sync` reply (PROTOCOL: 500).
    pub log_page: usize,
    /// Wake-ups carry the new log entries when they encode to at most this many bytes
    /// (PROTOCOL §4: "a few KiB"); bigger changes are pulled. 0 turns entries off.
    pub wake_entries_bytes: usize,
    /// Op results kept in memory for idempotency before falling back to the pre-check.
    pub recent_results: usize,
    pub tick: Duration,
    /// `limits.max_depth`: most levels a block tree may have (the rules enforce it).
    pub max_depth: usize,
    /// `limits.max_document_bytes`: most bytes of text a document may hold (0: no limit).
    pub max_document_bytes: usize,
    /// `limits.max_tags_per_block`: most `#tags` indexed per block.
    pub max_tags_per_block: usize,
    /// Test hook: content equal to this makes the rules panic. Only debug builds look at it
    /// (the service refuses to start a release build with it set).
    pub panic_marker: Option<String>,
    pub metrics: Arc<Metrics>,
}

impl Default for ActorConfig {
    fn default() -> Self {
        ActorConfig {
            lease_ttl_ms: 20_000,
            session_ttl_ms: 60_000,
            idle_stop_ms: 300_000,
            log_tail: 2_000,
            log_page: 500,
            wake_entries_bytes: 4096,
            recent_results: 20_000,
            tick: Duration::from_secs(1),
            max_depth: crate::collab::rules::DEFAULT_MAX_DEPTH,
            max_tags_per_block: crate::storage::derived::DEFAULT_MAX_TAGS_PER_BLOCK,
            max_document_bytes: 0,
            panic_marker: None,
            metrics: Arc::new(Metrics::new()),
        }
    }
}

/// Where the re-check of open streams' rights stands (`channels.rs::recheck_access`).
#[derive(Default)]
pub(super) struct Recheck {
    /// A read is on its way.
    pub(super) running: bool,
    /// Asked for again while running: once more when it is done.
    pub(super) again: bool,
    /// A message asking for one is in the mailbox.
    pub(super) asked: bool,
}

#[derive(Default)]
pub(super) struct Counters {
    pub(super) applied: u64,
    pub(super) conflicts: u64,
    pub(super) rejected: u64,
}

pub struct DocumentActor {
    pub(super) doc_id: String,
    pub(super) storage: Storage,
    pub(super) clock: SharedClock,
    pub(super) cfg: Arc<ActorConfig>,
    /// Told when this actor stops taking work (the registry, which then forgets it).
    pub(super) owner: Option<Recipient<Stopped>>,
    pub(super) state: Option<DocState>,
    pub(super) failed: Option<DocError>,
    pub(super) leases: LeaseTable,
    pub(super) sessions: Sessions,
    pub(super) lease_seq: u64,
    pub(super) durable_seq: i64,
    /// `(headSeq, leaseSeq)` as last told to the wake-up channels.
    pub(super) announced: (i64, u64),
    /// Syncs queued on the writer: each announces what changed once it committed.
    pub(super) sync_writes: usize,
    pub(super) tail: LogTail,
    pub(super) recent: HashMap<String, (OpResult, u64)>,
    pub(super) recent_order: VecDeque<String>,
    pub(super) write_no: u64,
    pub(super) durable_write_no: u64,
    pub(super) inflight: usize,
    pub(super) trust_precheck_after: Instant,
    pub(super) stopping: bool,
    pub(super) last_activity: i64,
    pub(super) counters: Counters,
    pub(super) subscribers: Subscribers,
    pub(super) waiters: Waiters,
    /// Re-checks of open streams' rights: at most one read at a time.
    pub(super) recheck: Recheck,
    /// This actor's own address, to ask itself for a re-check from code without a context.
    pub(super) me: Option<actix::WeakAddr<DocumentActor>>,
    pub(super) started_at: i64,
    /// Latencies (ms) of the most recent syncs with ops: receipt to reply.
    pub(super) latencies: VecDeque<f64>,
    /// The snapshot's blocks at the head they were taken at (and their encodings once a
    /// request made them), shared by every snapshot at that head. Blocks change only with
    /// the head; a newer head, a reload or an idle trim drops them.
    pub(super) shared_blocks: Option<Arc<super::encoded::SharedBlocks>>,
}

pub(super) const LATENCY_WINDOW: usize = 256;

impl DocumentActor {
    pub fn new(
        doc_id: String,
        storage: Storage,
        clock: SharedClock,
        cfg: Arc<ActorConfig>,
        owner: Option<Recipient<Stopped>>,
    ) -> DocumentActor {
        let now = clock.now_ms();
        DocumentActor {
            doc_id,
            storage,
            leases: LeaseTable::new(cfg.lease_ttl_ms),
            sessions: Sessions::new(cfg.session_ttl_ms),
            clock,
            cfg,
            owner,
            state: None,
            failed: None,
            lease_seq: 0,
            durable_seq: 0,
            announced: (0, 0),
            sync_writes: 0,
            tail: LogTail::default(),
            recent: HashMap::new(),
            recent_order: VecDeque::new(),
            write_no: 0,
            durable_write_no: 0,
            inflight: 0,
            // Results written by an earlier actor of this document are only in the database;
            // a pre-check older than this actor might have missed the newest of them.
            trust_precheck_after: Instant::now(),
            stopping: false,
            last_activity: now,
            counters: Counters::default(),
            subscribers: Subscribers::default(),
            waiters: Waiters::default(),
            recheck: Recheck::default(),
            me: None,
            started_at: now,
            latencies: VecDeque::new(),
            shared_blocks: None,
        }
    }

    /// Stops taking work; the actor ends once its writes are answered.
    pub(super) fn begin_stop(&mut self, ctx: &mut Context<Self>) {
        if !self.stopping {
            self.stopping = true;
            if let Some(r) = &self.owner {
                r.do_send(Stopped {
                    doc_id: self.doc_id.clone(),
                    addr: ctx.address(),
                });
            }
        }
        if self.inflight == 0 {
            // Not `ctx.stop()` at once: replies already produced must still go out.
            ctx.run_later(STOP_GRACE, |act, ctx| act.stop_if_idle(ctx));
        }
    }

    pub(super) fn stop_if_idle(&mut self, ctx: &mut Context<Self>) {
        if self.inflight == 0 {
            ctx.stop();
        }
    }

    pub(super) fn record_latency(&mut self, since: Instant) {
        if self.latencies.len() == LATENCY_WINDOW {
            self.latencies.pop_front();
        }
        self.latencies
            .push_back(since.elapsed().as_secs_f64() * 1000.0);
    }

    pub(super) fn percentile(&self, p: f64) -> f64 {
        if self.latencies.is_empty() {
            return 0.0;
        }
        let mut v: Vec<f64> = self.latencies.iter().copied().collect();
        v.sort_by(|a, b| a.total_cmp(b));
        v[((v.len() as f64 - 1.0) * p).round() as usize]
    }

    /// Something went wrong mid-flight: the in-memory state can no longer be trusted.
    pub(super) fn poison(&mut self, ctx: &mut Context<Self>, why: &str) {
        self.cfg.metrics.actor_restarts.inc();
        tracing::error!(doc = %self.doc_id, %why, "document actor reloads from the database");
        self.state = None;
        self.shared_blocks = None;
        self.failed = Some(DocError::Restarting);
        self.begin_stop(ctx);
    }

    pub(super) fn refuse(&self) -> Option<DocError> {
        if let Some(e) = &self.failed {
            return Some(e.clone());
        }
        if self.stopping || self.state.is_none() {
            return Some(DocError::Restarting);
        }
        None
    }

    pub(super) fn mode(&self, shared: bool) -> Mode {
        if shared || self.sessions.len() > 1 {
            Mode::Full
        } else {
            Mode::Private
        }
    }

    /// Lease or presence news. Not announced here: `settle` (or the commit of the sync
    /// that caused it) announces it together with the head it belongs to.
    pub(super) fn presence_changed(&mut self) {
        self.lease_seq += 1;
    }

    pub(super) fn see(&mut self, caller: &Caller, now: i64) {
        self.last_activity = now;
        // No clientId (a plain read, server-side seeding) opens no session.
        if !caller.client_id.is_empty()
            && self.sessions.touch(
                &caller.client_id,
                &caller.author.user_id,
                &caller.author.name,
                now,
            )
        {
            self.presence_changed();
        }
    }

    pub(super) fn tick(&mut self, ctx: &mut Context<Self>) {
        let now = self.clock.now_ms();
        // An open stream keeps its tab present; long-polls that gave up are forgotten.
        self.subscribers.prune_closed();
        self.waiters.prune_closed();
        for (client, user) in self.subscribers.present() {
            if self.sessions.touch(&client, &user, "", now) {
                self.presence_changed();
            }
        }
        let mut changed = self.leases.expire(now);
        for client in self.sessions.expire(now) {
            self.leases.release_client(&client);
            changed = true;
        }
        if changed {
            self.presence_changed();
        }
        self.settle();
        // A login session behind a stream may have ended by the clock; a failed re-check
        // is retried here too.
        let epoch = self.storage.writer.access_epoch().current();
        if !self.subscribers.stale(epoch, now).is_empty() {
            self.recheck_access(ctx);
        }
        if now - self.last_activity >= IDLE_TRIM_MS && self.inflight == 0 {
            self.trim_idle();
        }
        let idle = now - self.last_activity >= self.cfg.idle_stop_ms;
        let unused =
            self.sessions.is_empty() && self.subscribers.is_empty() && self.waiters.is_empty();
        if idle && unused && self.inflight == 0 && !self.stopping {
            tracing::debug!(doc = %self.doc_id, "document actor idle, stopping");
            self.begin_stop(ctx);
        }
    }

    /// An open document nobody is typing in keeps only its state: the log tail and the
    /// idempotency map are rebuilt from SQLite on demand (both are on disk by now).
    pub(super) fn trim_idle(&mut self) {
        self.tail.clear();
        self.shared_blocks = None;
        if !self.recent.is_empty() {
            self.recent = HashMap::new();
            self.recent_order = VecDeque::new();
            self.trust_precheck_after = Instant::now();
        }
    }
}

impl Actor for DocumentActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        self.cfg.metrics.actor_starts.inc();
        self.cfg.metrics.actors_open.inc();
        self.me = Some(ctx.address().downgrade());
        // Loading goes through the writer queue: it sees every write any earlier actor of
        // this document queued, which is what makes a restart lose nothing.
        let doc_id = self.doc_id.clone();
        let load = self.storage.write(move |c| documents::load(c, &doc_id));
        ctx.wait(
            actix::fut::wrap_future::<_, Self>(load).map(|res, act, ctx| match res {
                Ok(state) => {
                    act.durable_seq = state.head_seq;
                    act.announced = (state.head_seq, act.lease_seq);
                    act.state = Some(state);
                }
                Err(StorageError::DocNotFound(_)) => {
                    act.failed = Some(DocError::NotFound);
                    act.begin_stop(ctx);
                }
                Err(e) => {
                    act.failed = Some(DocError::Storage(e.to_string()));
                    act.begin_stop(ctx);
                }
            }),
        );
        ctx.run_interval(self.cfg.tick, |act, ctx| act.tick(ctx));
    }

    fn stopped(&mut self, _ctx: &mut Self::Context) {
        self.cfg.metrics.actor_stops.inc();
        self.cfg.metrics.actors_open.dec();
        tracing::debug!(doc = %self.doc_id, "document actor stopped");
    }
}

impl Handler<Close> for DocumentActor {
    type Result = ();

    fn handle(&mut self, _msg: Close, ctx: &mut Context<Self>) {
        self.failed = Some(DocError::NotFound);
        self.state = None;
        self.shared_blocks = None;
        self.begin_stop(ctx);
    }
}

impl Handler<GetSize> for DocumentActor {
    type Result = Result<DocSize, DocError>;

    fn handle(&mut self, _msg: GetSize, _ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Err(e);
        }
        let state = self.state.as_ref().expect("checked by refuse()");
        Ok(DocSize {
            content_bytes: state.content_bytes(),
            max_bytes: self.cfg.max_document_bytes,
            blocks: state.block_count(),
        })
    }
}

impl Handler<GetStats> for DocumentActor {
    type Result = MessageResult<GetStats>;

    fn handle(&mut self, _msg: GetStats, _ctx: &mut Context<Self>) -> Self::Result {
        let now = self.clock.now_ms();
        MessageResult(ActorStats {
            doc_id: self.doc_id.clone(),
            mailbox_depth: 0,
            uptime_ms: now - self.started_at,
            idle_ms: now - self.last_activity,
            sync_p50_ms: self.percentile(0.5),
            sync_p99_ms: self.percentile(0.99),
            recent_sync_ms: self
                .latencies
                .iter()
                .rev()
                .take(60)
                .rev()
                .copied()
                .collect(),
            loaded: self.state.is_some(),
            blocks: self.state.as_ref().map_or(0, |s| s.block_count()),
            content_bytes: self.state.as_ref().map_or(0, |s| s.content_bytes()),
            head_seq: self.state.as_ref().map_or(0, |s| s.head_seq),
            durable_seq: self.durable_seq,
            sessions: self.sessions.len(),
            leases: self.leases.len(),
            inflight_writes: self.inflight,
            websocket: self.subscribers.count(Channel::WebSocket),
            sse: self.subscribers.count(Channel::Sse),
            long_poll: self.waiters.len() + self.subscribers.count(Channel::LongPoll),
            ops_applied: self.counters.applied,
            conflicts: self.counters.conflicts,
            rejected: self.counters.rejected,
        })
    }
}
