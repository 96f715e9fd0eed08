//! `DocumentActor`: applies a document's syncs strictly in mailbox order on its in-memory
//! state (pure rules, microseconds), queues the resulting rows on the writer without waiting,
//! and answers each request only once the transaction holding it has committed. Requests of a
//! hot document therefore pipeline into shared commits while order stays exactly the mailbox
//! order. If anything goes wrong (a failed write, a panic in the rules) the state is thrown
//! away and the actor stops; the next request starts a fresh actor that reloads from SQLite
//! through the writer queue, behind every write of the old one.

use std::collections::{HashMap, HashSet, VecDeque};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::{Duration, Instant};

use actix::prelude::*;

use crate::clock::SharedClock;
use crate::collab::block::Block;
use crate::collab::document::DocState;
use crate::collab::lease::{HoldOutcome, LeaseTable};
use crate::collab::op::{Effect, LogEntry, OpResult, OpStatus};
use crate::collab::rules::{apply_op, OpContext};
use crate::metrics::Metrics;
use crate::registry::Unregister;
use crate::storage::compaction;
use crate::storage::documents::{self, DocWrite};
use crate::storage::log::LogRecord;
use crate::storage::{Storage, StorageError};

use super::messages::*;
use super::sessions::Sessions;

/// After this long without requests an open actor drops its in-memory log tail and results.
const IDLE_TRIM_MS: i64 = 30_000;

/// How long a stopping actor lingers so replies it already produced are delivered.
const STOP_GRACE: Duration = Duration::from_millis(20);

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
    /// Op results kept in memory for idempotency before falling back to the pre-check.
    pub recent_results: usize,
    pub tick: Duration,
    /// Test hook: content equal to this makes the rules panic (unset in production).
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
            recent_results: 20_000,
            tick: Duration::from_secs(1),
            panic_marker: None,
            metrics: Arc::new(Metrics::new()),
        }
    }
}

#[derive(Default)]
struct Counters {
    applied: u64,
    conflicts: u64,
    rejected: u64,
}

pub struct DocumentActor {
    doc_id: String,
    storage: Storage,
    clock: SharedClock,
    cfg: Arc<ActorConfig>,
    registry: Option<Recipient<Unregister>>,
    state: Option<DocState>,
    failed: Option<DocError>,
    leases: LeaseTable,
    sessions: Sessions,
    lease_seq: u64,
    durable_seq: i64,
    log_tail: VecDeque<Arc<LogRecord>>,
    recent: HashMap<String, (OpResult, u64)>,
    recent_order: VecDeque<String>,
    write_no: u64,
    durable_write_no: u64,
    inflight: usize,
    trust_precheck_after: Instant,
    stopping: bool,
    last_activity: i64,
    counters: Counters,
    subscribers: HashMap<u64, Subscriber>,
    waiters: Vec<Waiter>,
    started_at: i64,
    /// Latencies (ms) of the most recent syncs with ops: receipt to reply.
    latencies: VecDeque<f64>,
}

const LATENCY_WINDOW: usize = 256;

struct Subscriber {
    channel: Channel,
    client_id: Option<String>,
    user_id: String,
    sink: tokio::sync::mpsc::UnboundedSender<DocEvent>,
}

struct Waiter {
    since: i64,
    lease_seq: u64,
    reply: tokio::sync::oneshot::Sender<(i64, u64)>,
}

impl DocumentActor {
    pub fn new(
        doc_id: String,
        storage: Storage,
        clock: SharedClock,
        cfg: Arc<ActorConfig>,
        registry: Option<Recipient<Unregister>>,
    ) -> DocumentActor {
        let now = clock.now_ms();
        DocumentActor {
            doc_id,
            storage,
            leases: LeaseTable::new(cfg.lease_ttl_ms),
            sessions: Sessions::new(cfg.session_ttl_ms),
            clock,
            cfg,
            registry,
            state: None,
            failed: None,
            lease_seq: 0,
            durable_seq: 0,
            log_tail: VecDeque::new(),
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
            subscribers: HashMap::new(),
            waiters: Vec::new(),
            started_at: now,
            latencies: VecDeque::new(),
        }
    }

    /// Stops taking work; the actor ends once its writes are answered.
    fn begin_stop(&mut self, ctx: &mut Context<Self>) {
        if !self.stopping {
            self.stopping = true;
            if let Some(r) = &self.registry {
                r.do_send(Unregister {
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

    fn count_channel(&self, channel: Channel) -> usize {
        self.subscribers
            .values()
            .filter(|s| s.channel == channel)
            .count()
    }

    fn stop_if_idle(&mut self, ctx: &mut Context<Self>) {
        if self.inflight == 0 {
            ctx.stop();
        }
    }

    /// Something went wrong mid-flight: the in-memory state can no longer be trusted.
    fn record_latency(&mut self, since: Instant) {
        if self.latencies.len() == LATENCY_WINDOW {
            self.latencies.pop_front();
        }
        self.latencies
            .push_back(since.elapsed().as_secs_f64() * 1000.0);
    }

    fn percentile(&self, p: f64) -> f64 {
        if self.latencies.is_empty() {
            return 0.0;
        }
        let mut v: Vec<f64> = self.latencies.iter().copied().collect();
        v.sort_by(|a, b| a.total_cmp(b));
        v[((v.len() as f64 - 1.0) * p).round() as usize]
    }

    fn poison(&mut self, ctx: &mut Context<Self>, why: &str) {
        self.cfg.metrics.actor_restarts.inc();
        tracing::error!(doc = %self.doc_id, %why, "document actor reloads from the database");
        self.state = None;
        self.failed = Some(DocError::Restarting);
        self.begin_stop(ctx);
    }

    fn refuse(&self) -> Option<DocError> {
        if let Some(e) = &self.failed {
            return Some(e.clone());
        }
        if self.stopping || self.state.is_none() {
            return Some(DocError::Restarting);
        }
        None
    }

    fn mode(&self, shared: bool) -> Mode {
        if shared || self.sessions.len() > 1 {
            Mode::Full
        } else {
            Mode::Private
        }
    }

    fn presence_changed(&mut self) {
        self.lease_seq += 1;
        self.wake();
    }

    /// Tells every wake-up channel that headSeq or leaseSeq moved, and answers the
    /// long-polls whose condition now holds. Closed channels are dropped here.
    fn wake(&mut self) {
        let (head, lease) = (self.durable_seq, self.lease_seq);
        let event = DocEvent::Seq {
            doc_id: self.doc_id.clone(),
            head_seq: head,
            lease_seq: lease,
        };
        self.subscribers
            .retain(|_, s| s.sink.send(event.clone()).is_ok());
        if !self.waiters.is_empty() {
            let waiters = std::mem::take(&mut self.waiters);
            for w in waiters {
                if head > w.since || lease != w.lease_seq {
                    let _ = w.reply.send((head, lease));
                } else if !w.reply.is_closed() {
                    self.waiters.push(w);
                }
            }
        }
    }

    fn see(&mut self, caller: &Caller, now: i64) {
        self.last_activity = now;
        // No clientId (a plain read, server-side seeding) opens no session.
        if !caller.client_id.is_empty()
            && self
                .sessions
                .touch(&caller.client_id, &caller.author.user_id, now)
        {
            self.presence_changed();
        }
    }

    fn tick(&mut self, ctx: &mut Context<Self>) {
        let now = self.clock.now_ms();
        // An open stream keeps its tab present; long-polls that gave up are forgotten.
        self.subscribers.retain(|_, s| !s.sink.is_closed());
        self.waiters.retain(|w| !w.reply.is_closed());
        let present: Vec<(String, String)> = self
            .subscribers
            .values()
            .filter_map(|s| s.client_id.clone().map(|c| (c, s.user_id.clone())))
            .collect();
        for (client, user) in present {
            if self.sessions.touch(&client, &user, now) {
                self.lease_seq += 1;
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

    fn log_page(&self, last_seq: i64, ahead: bool) -> (LogPage, bool, bool) {
        let head = self.durable_seq;
        let floor = self.state.as_ref().map_or(0, |s| s.log_floor);
        if ahead || last_seq > head || last_seq < floor {
            return (LogPage::Ready(Vec::new()), false, true);
        }
        if last_seq == head {
            return (LogPage::Ready(Vec::new()), false, false);
        }
        let upto = head.min(last_seq + self.cfg.log_page as i64);
        let has_more = head > upto;
        match self.log_tail.front() {
            Some(first) if first.seq <= last_seq + 1 => {
                let start = (last_seq + 1 - first.seq) as usize;
                let n = (upto - last_seq) as usize;
                let page = self.log_tail.iter().skip(start).take(n).cloned().collect();
                (LogPage::Ready(page), has_more, false)
            }
            _ => (
                LogPage::Read {
                    after: last_seq,
                    upto,
                },
                has_more,
                false,
            ),
        }
    }

    /// `ahead`: the client had seen more than this server had when the request arrived
    /// (e.g. a restored backup) — judged before this request's own ops moved the head.
    fn reply(
        &self,
        caller: &Caller,
        last_seq: i64,
        ahead: bool,
        results: Vec<OpResult>,
        hold: HoldOutcome,
    ) -> SyncReply {
        let now = self.clock.now_ms();
        let (ops, has_more, resync) = self.log_page(last_seq, ahead);
        SyncReply {
            results,
            ops,
            has_more,
            head_seq: self.durable_seq,
            lease_seq: self.lease_seq,
            leases: LeasesReply {
                granted: hold.granted,
                denied: hold.denied,
                others: self.leases.others(&caller.client_id, now),
            },
            role: caller.role,
            shared: caller.shared,
            sessions: self.sessions.len(),
            mode: self.mode(caller.shared),
            resync,
            icon: self.state.as_ref().and_then(|s| s.icon.clone()),
        }
    }

    fn remember(&mut self, result: &OpResult) {
        self.recent
            .insert(result.op_id.clone(), (result.clone(), self.write_no + 1));
        self.recent_order.push_back(result.op_id.clone());
    }

    /// Keeps the in-memory idempotency map bounded. Only results already on disk are dropped,
    /// and pre-checks started before now are no longer trusted to have seen them.
    fn trim_recent(&mut self) {
        if self.recent.len() <= self.cfg.recent_results {
            return;
        }
        let mut dropped = false;
        while self.recent.len() > self.cfg.recent_results / 2 {
            let Some(front) = self.recent_order.front() else {
                break;
            };
            match self.recent.get(front) {
                Some((_, w)) if *w > self.durable_write_no => break,
                _ => {}
            }
            let id = self.recent_order.pop_front().expect("front exists");
            self.recent.remove(&id);
            dropped = true;
        }
        if dropped {
            self.trust_precheck_after = Instant::now();
        }
    }

    /// An open document nobody is typing in keeps only its state: the log tail and the
    /// idempotency map are rebuilt from SQLite on demand (both are on disk by now).
    fn trim_idle(&mut self) {
        if !self.log_tail.is_empty() {
            self.log_tail = VecDeque::new();
        }
        if !self.recent.is_empty() {
            self.recent = HashMap::new();
            self.recent_order = VecDeque::new();
            self.trust_precheck_after = Instant::now();
        }
    }

    fn push_tail(&mut self, rec: Arc<LogRecord>) {
        self.log_tail.push_back(rec);
        while self.log_tail.len() > self.cfg.log_tail {
            self.log_tail.pop_front();
        }
    }

    /// Runs the rules for every op of a request; returns the results and the rows to write.
    fn apply_ops(
        &mut self,
        msg: &Sync,
        now: i64,
        leases_enabled: bool,
    ) -> (Vec<OpResult>, DocWrite, bool) {
        let state = self.state.as_mut().expect("checked by refuse()");
        let mut write = DocWrite {
            doc_id: self.doc_id.clone(),
            expect_head: state.head_seq,
            head_after: state.head_seq,
            now,
            ..DocWrite::default()
        };
        let mut results = Vec::with_capacity(msg.ops.len());
        let mut changed: Vec<Arc<Block>> = Vec::new();
        let mut lease_changed = false;
        let mut fresh: Vec<OpResult> = Vec::new();
        let mut seen_in_request: HashSet<&str> = HashSet::new();
        for op in &msg.ops {
            if let Some((r, _)) = self.recent.get(&op.op_id) {
                results.push(r.clone());
                continue;
            }
            if let Some(r) = msg.precheck.known.get(&op.op_id) {
                results.push(r.clone());
                continue;
            }
            if !seen_in_request.insert(op.op_id.as_str()) {
                // Same op twice in one request: the second gets the first's answer.
                let first = fresh.iter().find(|r| r.op_id == op.op_id).cloned();
                results.extend(first);
                continue;
            }
            if let (Some(marker), crate::collab::op::OpKind::SetContent { content, .. }) =
                (&self.cfg.panic_marker, &op.kind)
            {
                if content == marker {
                    panic!("fault injection: panic marker in set_content");
                }
            }
            let ctx = OpContext {
                client_id: &msg.caller.client_id,
                author: &msg.caller.author,
                now,
                foreign: &msg.precheck.foreign,
                leases_enabled,
            };
            let applied = apply_op(state, &self.leases, &ctx, op);
            let mut result = applied.result;
            if !applied.effects.is_empty() {
                state.head_seq += 1;
                result.seq = Some(state.head_seq);
                for e in &applied.effects {
                    match e {
                        Effect::Block { block } => {
                            changed.retain(|b| b.id != block.id);
                            changed.push(block.clone());
                        }
                        Effect::Title {
                            title,
                            title_version,
                        } => write.title = Some((title.clone(), *title_version)),
                        Effect::Purge { block_ids } => {
                            write.purged.extend(block_ids.iter().cloned())
                        }
                    }
                }
                let entry = LogEntry {
                    seq: state.head_seq,
                    op_id: op.op_id.clone(),
                    kind: op.kind.name().to_string(),
                    client_id: msg.caller.client_id.clone(),
                    user_id: msg.caller.author.user_id.clone(),
                    at: now,
                    effects: applied.effects,
                };
                write.log.push(Arc::new(LogRecord::from_entry(&entry)));
            }
            for id in &applied.lease_grants {
                lease_changed |=
                    self.leases
                        .grant(id, &msg.caller.client_id, &msg.caller.author, now);
            }
            match result.status {
                OpStatus::Applied => self.counters.applied += 1,
                OpStatus::Conflict => self.counters.conflicts += 1,
                OpStatus::Rejected => self.counters.rejected += 1,
            }
            let status = match result.status {
                OpStatus::Applied => "applied",
                OpStatus::Conflict => "conflict",
                OpStatus::Rejected => "rejected",
            };
            self.cfg
                .metrics
                .ops
                .with_label_values(&[op.kind.name(), status])
                .inc();
            if let Some(r) = result.reason {
                self.cfg
                    .metrics
                    .rejected
                    .with_label_values(&[r.as_str()])
                    .inc();
            }
            write.results.push((
                result.op_id.clone(),
                serde_json::to_string(&result).expect("result serialises"),
            ));
            fresh.push(result.clone());
            results.push(result);
        }
        write.head_after = state.head_seq;
        write.blocks = changed;
        for r in &fresh {
            self.remember(r);
        }
        (results, write, lease_changed)
    }
}

impl Actor for DocumentActor {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Self::Context) {
        self.cfg.metrics.actor_starts.inc();
        self.cfg.metrics.actors_open.inc();
        // Loading goes through the writer queue: it sees every write any earlier actor of
        // this document queued, which is what makes a restart lose nothing.
        let doc_id = self.doc_id.clone();
        let load = self.storage.write(move |c| documents::load(c, &doc_id));
        ctx.wait(
            actix::fut::wrap_future::<_, Self>(load).map(|res, act, ctx| match res {
                Ok(state) => {
                    act.durable_seq = state.head_seq;
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

impl Handler<Sync> for DocumentActor {
    type Result = ResponseActFuture<Self, Result<SyncReply, DocError>>;

    fn handle(&mut self, msg: Sync, ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Box::pin(actix::fut::ready(Err(e)));
        }
        if !msg.ops.is_empty() && msg.precheck_at < self.trust_precheck_after {
            return Box::pin(actix::fut::ready(Err(DocError::StalePrecheck)));
        }
        let now = self.clock.now_ms();
        let ahead = msg.last_seq > self.durable_seq;
        self.see(&msg.caller, now);
        // Viewers never hold leases: a read-only user must not lock editors out.
        let leases_enabled =
            self.mode(msg.caller.shared) == Mode::Full && msg.caller.role.can_write();
        let hold = match (&msg.hold, leases_enabled) {
            (Some(list), true) => {
                self.leases
                    .hold(&msg.caller.client_id, &msg.caller.author, list, now)
            }
            (Some(_), false) => HoldOutcome {
                changed: self.leases.release_client(&msg.caller.client_id),
                ..HoldOutcome::default()
            },
            (None, _) => HoldOutcome::default(),
        };
        self.cfg
            .metrics
            .lease_grants
            .inc_by(hold.granted.len() as u64);
        self.cfg
            .metrics
            .lease_denials
            .inc_by(hold.denied.len() as u64);
        let received = Instant::now();
        let mut lease_changed = hold.changed;
        if msg.ops.is_empty() {
            if lease_changed {
                self.presence_changed();
            }
            let reply = self.reply(&msg.caller, msg.last_seq, ahead, Vec::new(), hold);
            return Box::pin(actix::fut::ready(Ok(reply)));
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            self.apply_ops(&msg, now, leases_enabled)
        }));
        let (results, write, grants_changed) = match outcome {
            Ok(v) => v,
            Err(_) => {
                self.poison(ctx, "panic while applying ops");
                return Box::pin(actix::fut::ready(Err(DocError::Internal(
                    "the document could not apply this request; it has been reloaded".into(),
                ))));
            }
        };
        lease_changed |= grants_changed;
        if lease_changed {
            self.presence_changed();
        }
        for rec in &write.log {
            self.push_tail(rec.clone());
        }
        self.write_no += 1;
        let my_write = self.write_no;
        self.inflight += 1;
        let head_after = write.head_after;
        let fut = self
            .storage
            .write(move |c| documents::apply_write(c, &write));
        let caller = msg.caller;
        let last_seq = msg.last_seq;
        Box::pin(
            actix::fut::wrap_future::<_, Self>(fut).map(move |res, act, ctx| {
                act.inflight -= 1;
                let out = match res {
                    Ok(()) if act.failed.is_none() => {
                        act.durable_write_no = act.durable_write_no.max(my_write);
                        if head_after > act.durable_seq {
                            act.durable_seq = head_after;
                            act.wake();
                        }
                        act.trim_recent();
                        act.record_latency(received);
                        Ok(act.reply(&caller, last_seq, ahead, results, hold))
                    }
                    Ok(()) => Err(DocError::Restarting),
                    // Already reloading: whatever failed here is retried on the fresh actor.
                    Err(_) if act.failed.is_some() => Err(DocError::Restarting),
                    Err(StorageError::ForeignBlock(id)) => {
                        // Another document took this block ID between our pre-check and our
                        // write; nothing of this request landed. A fresh pre-check turns the
                        // op into `rejected`/`foreign_block`.
                        act.poison(ctx, &format!("block {id} was taken by another document"));
                        Err(DocError::StalePrecheck)
                    }
                    Err(e) => {
                        act.poison(ctx, &e.to_string());
                        Err(DocError::Storage(e.to_string()))
                    }
                };
                if act.stopping && act.inflight == 0 {
                    ctx.run_later(STOP_GRACE, |act, ctx| act.stop_if_idle(ctx));
                }
                out
            }),
        )
    }
}

impl Handler<Snapshot> for DocumentActor {
    type Result = ResponseActFuture<Self, Result<SnapshotReply, DocError>>;

    fn handle(&mut self, msg: Snapshot, _ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Box::pin(actix::fut::ready(Err(e)));
        }
        let now = self.clock.now_ms();
        self.see(&msg.caller, now);
        let state = self.state.as_ref().expect("checked by refuse()");
        let reply = SnapshotReply {
            doc_id: state.doc_id.clone(),
            title: state.title.clone(),
            title_version: state.title_version,
            icon: state.icon.clone(),
            head_seq: state.head_seq,
            log_floor: state.log_floor,
            lease_seq: self.lease_seq,
            role: msg.caller.role,
            shared: msg.caller.shared,
            mode: self.mode(msg.caller.shared),
            sessions: self.sessions.len(),
            blocks: state
                .ordered()
                .into_iter()
                .map(|(depth, block)| SnapshotBlock { block, depth })
                .collect(),
            leases: SnapshotOthers {
                others: self.leases.others(&msg.caller.client_id, now),
            },
        };
        if state.head_seq <= self.durable_seq {
            return Box::pin(actix::fut::ready(Ok(reply)));
        }
        // The state includes writes still being committed: hand it out only once they are
        // on disk (an empty job behind them in the writer queue marks that moment).
        let barrier = self.storage.write(|_| Ok(()));
        Box::pin(
            actix::fut::wrap_future::<_, Self>(barrier).map(move |res, _act, _ctx| {
                res.map(|_| reply)
                    .map_err(|e| DocError::Storage(e.to_string()))
            }),
        )
    }
}

impl Handler<Leave> for DocumentActor {
    type Result = Result<(), DocError>;

    fn handle(&mut self, msg: Leave, _ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Err(e);
        }
        let had_session = self.sessions.remove(&msg.client_id);
        let had_leases = self.leases.release_client(&msg.client_id);
        if had_session || had_leases {
            self.presence_changed();
        }
        Ok(())
    }
}

/// Log rows deleted per writer job, so a big backlog never holds the writer for long.
const COMPACT_CHUNK: usize = 2_000;

impl Handler<Compact> for DocumentActor {
    type Result = ResponseActFuture<Self, Result<CompactOutcome, DocError>>;

    fn handle(&mut self, msg: Compact, ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Box::pin(actix::fut::ready(Err(e)));
        }
        self.tick(ctx);
        let state = self.state.as_mut().expect("checked by refuse()");
        let r = msg.retention;
        let tomb_cutoff = msg.now - r.tombstone_ms;
        let due: HashSet<String> = state
            .blocks()
            .filter(|b| b.deleted && b.deleted_at.is_some_and(|t| t < tomb_cutoff))
            .map(|b| b.id.clone())
            .collect();
        // Only whole tombstone subtrees go, so no block is ever left with a missing parent.
        let mut purge: Vec<String> = due
            .iter()
            .filter(|id| state.subtree(id).iter().all(|b| due.contains(&b.id)))
            .cloned()
            .collect();
        purge.sort();
        let head_before = state.head_seq;
        let mut write = DocWrite {
            doc_id: self.doc_id.clone(),
            expect_head: head_before,
            head_after: head_before,
            now: msg.now,
            ..DocWrite::default()
        };
        if !purge.is_empty() {
            state.head_seq += 1;
            let effect = Effect::Purge {
                block_ids: purge.clone(),
            };
            crate::collab::replay::apply_effect(state, &effect);
            let entry = LogEntry {
                seq: state.head_seq,
                op_id: format!("op_purge_{}", uuid::Uuid::now_v7().simple()),
                kind: "purge".into(),
                client_id: "server".into(),
                user_id: "system".into(),
                at: msg.now,
                effects: vec![effect],
            };
            write.head_after = state.head_seq;
            write.purged = purge.clone();
            write.log.push(Arc::new(LogRecord::from_entry(&entry)));
        }
        for rec in &write.log {
            self.push_tail(rec.clone());
        }
        let tombstones = purge.len() as u64;
        let log_cutoff = msg.now
            - if msg.shared {
                r.shared_log_ms
            } else {
                r.private_log_ms
            };
        let results_cutoff = msg.now - r.results_ms;
        let head_after = write.head_after;
        let doc = self.doc_id.clone();
        let storage = self.storage.clone();
        self.inflight += 1;
        let first = self.storage.write(move |c| {
            if !write.log.is_empty() {
                documents::apply_write(c, &write)?;
            }
            // The purge entry itself is new, so it always stays above the floor.
            compaction::raise_floor(c, &write.doc_id, log_cutoff, head_before)
        });
        let fut = actix::fut::wrap_future::<_, Self>(first)
            .map(move |res, act, ctx| match res {
                Ok(floor) => {
                    if let Some(s) = act.state.as_mut() {
                        s.log_floor = floor;
                    }
                    while act.log_tail.front().is_some_and(|r| r.seq <= floor) {
                        act.log_tail.pop_front();
                    }
                    if head_after > act.durable_seq {
                        act.durable_seq = head_after;
                        act.wake();
                    }
                    Ok(floor)
                }
                Err(e) => {
                    act.poison(ctx, &e.to_string());
                    Err(DocError::Storage(e.to_string()))
                }
            })
            .then(move |res, _act, _ctx| {
                let work = async move {
                    let floor = res?;
                    let mut out = CompactOutcome {
                        tombstones,
                        log_floor: floor,
                        ..CompactOutcome::default()
                    };
                    loop {
                        let d = doc.clone();
                        let n = storage
                            .write(move |c| {
                                compaction::delete_log_chunk(c, &d, floor, COMPACT_CHUNK)
                            })
                            .await
                            .map_err(|e| DocError::Storage(e.to_string()))?;
                        out.log_rows += n as u64;
                        if n < COMPACT_CHUNK {
                            break;
                        }
                    }
                    loop {
                        let d = doc.clone();
                        let n = storage
                            .write(move |c| {
                                compaction::delete_results_chunk(
                                    c,
                                    &d,
                                    results_cutoff,
                                    COMPACT_CHUNK,
                                )
                            })
                            .await
                            .map_err(|e| DocError::Storage(e.to_string()))?;
                        out.results += n as u64;
                        if n < COMPACT_CHUNK {
                            break;
                        }
                    }
                    Ok(out)
                };
                actix::fut::wrap_future::<_, Self>(work)
            })
            .map(|res, act, ctx| {
                act.inflight -= 1;
                if act.stopping && act.inflight == 0 {
                    ctx.run_later(STOP_GRACE, |act, ctx| act.stop_if_idle(ctx));
                }
                res
            });
        Box::pin(fut)
    }
}

impl Handler<Subscribe> for DocumentActor {
    type Result = Result<(i64, u64), DocError>;

    fn handle(&mut self, msg: Subscribe, _ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Err(e);
        }
        let now = self.clock.now_ms();
        self.last_activity = now;
        if let Some(c) = &msg.client_id {
            if self.sessions.touch(c, &msg.user_id, now) {
                self.presence_changed();
            }
        }
        self.subscribers.insert(
            msg.id,
            Subscriber {
                channel: msg.channel,
                client_id: msg.client_id,
                user_id: msg.user_id,
                sink: msg.sink,
            },
        );
        Ok((self.durable_seq, self.lease_seq))
    }
}

impl Handler<Unsubscribe> for DocumentActor {
    type Result = ();

    fn handle(&mut self, msg: Unsubscribe, _ctx: &mut Context<Self>) {
        self.subscribers.remove(&msg.id);
    }
}

impl Handler<WaitChanges> for DocumentActor {
    type Result = Result<Changes, DocError>;

    fn handle(&mut self, msg: WaitChanges, _ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Err(e);
        }
        let now = self.clock.now_ms();
        self.last_activity = now;
        if let Some(c) = &msg.client_id {
            if self.sessions.touch(c, &msg.user_id, now) {
                self.presence_changed();
            }
        }
        let (head, lease) = (self.durable_seq, self.lease_seq);
        if head > msg.since || lease != msg.lease_seq {
            return Ok(Changes::Now {
                head_seq: head,
                lease_seq: lease,
            });
        }
        let (reply, rx) = tokio::sync::oneshot::channel();
        self.waiters.push(Waiter {
            since: msg.since,
            lease_seq: msg.lease_seq,
            reply,
        });
        Ok(Changes::Later {
            head_seq: head,
            lease_seq: lease,
            rx,
        })
    }
}

impl Handler<AccessChanged> for DocumentActor {
    type Result = ();

    fn handle(&mut self, _msg: AccessChanged, ctx: &mut Context<Self>) {
        let event = DocEvent::AccessChanged {
            doc_id: self.doc_id.clone(),
        };
        self.subscribers
            .retain(|_, s| s.sink.send(event.clone()).is_ok());
        // `shared` may have flipped: everyone syncs and sees the new mode.
        self.presence_changed();
        // Someone who lost write access must not keep blocking editors with leases, and
        // someone who lost read access is no longer present.
        let users: Vec<String> = self
            .leases
            .holders()
            .into_iter()
            .chain(self.sessions.users())
            .collect();
        if users.is_empty() {
            return;
        }
        let doc = self.doc_id.clone();
        let storage = self.storage.clone();
        let check = async move {
            storage
                .read(move |c| {
                    let mut out = Vec::new();
                    for u in users {
                        let role = crate::storage::roles::doc_role(c, &u, &doc)?;
                        out.push((u, role));
                    }
                    Ok(out)
                })
                .await
        };
        ctx.spawn(
            actix::fut::wrap_future::<_, Self>(check).map(|res, act, _ctx| {
                let Ok(roles) = res else { return };
                let mut changed = false;
                for (user, role) in roles {
                    if !role.is_some_and(|r| r.can_write()) {
                        changed |= act.leases.release_user(&user);
                    }
                    if role.is_none() {
                        changed |= act.sessions.remove_user(&user);
                    }
                }
                if changed {
                    act.presence_changed();
                }
            }),
        );
    }
}

impl Handler<SetIcon> for DocumentActor {
    type Result = ResponseActFuture<Self, Result<(), DocError>>;

    fn handle(&mut self, msg: SetIcon, _ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Box::pin(actix::fut::ready(Err(e)));
        }
        let state = self.state.as_mut().expect("checked by refuse()");
        state.icon = msg.icon.clone();
        let doc = self.doc_id.clone();
        let now = self.clock.now_ms();
        let fut = self
            .storage
            .write(move |c| documents::set_icon(c, &doc, msg.icon.as_deref(), now));
        self.inflight += 1;
        Box::pin(
            actix::fut::wrap_future::<_, Self>(fut).map(|res, act, ctx| {
                act.inflight -= 1;
                match res {
                    Ok(()) => {
                        act.presence_changed();
                        Ok(())
                    }
                    Err(e) => {
                        act.poison(ctx, &e.to_string());
                        Err(DocError::Storage(e.to_string()))
                    }
                }
            }),
        )
    }
}

impl Handler<Close> for DocumentActor {
    type Result = ();

    fn handle(&mut self, _msg: Close, ctx: &mut Context<Self>) {
        self.failed = Some(DocError::NotFound);
        self.state = None;
        self.begin_stop(ctx);
    }
}

impl Handler<StopIdle> for DocumentActor {
    type Result = ();

    fn handle(&mut self, _msg: StopIdle, ctx: &mut Context<Self>) {
        self.begin_stop(ctx);
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
            head_seq: self.state.as_ref().map_or(0, |s| s.head_seq),
            durable_seq: self.durable_seq,
            sessions: self.sessions.len(),
            leases: self.leases.len(),
            inflight_writes: self.inflight,
            websocket: self.count_channel(Channel::WebSocket),
            sse: self.count_channel(Channel::Sse),
            long_poll: self.waiters.len() + self.count_channel(Channel::LongPoll),
            ops_applied: self.counters.applied,
            conflicts: self.counters.conflicts,
            rejected: self.counters.rejected,
        })
    }
}
