//! `DocumentActor`: applies a document's syncs strictly in mailbox order on its in-memory
//! state (pure rules, microseconds), queues the resulting rows on the writer without waiting,
//! and answers each request only once the transaction holding it has committed. Requests of a
//! hot document therefore pipeline into shared commits while order stays exactly the mailbox
//! order. If anything goes wrong (a failed write, a panic in the rules) the state is thrown
//! away and the actor stops; the next request starts a fresh actor that reloads from SQLite
//! through the writer queue, behind every write of the old one.
//!
//! The actor is a small owner of parts, each keeping its own state behind a few methods
//! (`Sessions`, `Subscribers`, `Waiters`, `RecentResults`, `Announcer`, `LogTail`,
//! `BlocksCache`, `GuestViews`, `RecheckGate`, `ActorStats`, and the pure `DocState` and
//! `LeaseTable`).
//! This file holds what several messages share: the lifecycle, the tick, presence and
//! telling the wake-up channels; the messages it sends itself or others hear (`Stopped`,
//! `AccessChanged`) are declared here. Each message is handled in `actor/` (the re-check of
//! rights in `actor/access.rs`); those files use this one, never the other way round — the
//! tick asks for a re-check by message, as a wake-up that found a stream unconfirmed does.

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use serde_json::value::RawValue;

use crate::clock::SharedClock;
use crate::collab::document::DocState;
use crate::collab::lease::LeaseTable;
use crate::collab::validate::{ClientId, DocId};
use crate::storage::cluster::ownership;
use crate::storage::roles::BulletRoot;
use crate::storage::versions::{self as stored_versions, VersionKind, VersionMeta};
use crate::storage::{documents, log};
use crate::storage::{Storage, StorageError};

use super::announcer::{Announcer, News};
use super::config::ActorConfig;
use super::encoded::BlocksCache;
use super::guests::GuestViews;
use super::keep_version;
use super::messages::{Caller, DocError, Mode, Wake};
use super::ownership::Ownership;
use super::recent::{op_hash, RecentResults};
use super::recheck::RecheckGate;
use super::sessions::Person;
use super::sessions::Sessions;
use super::stats::ActorStats;
use super::subscribers::{GuestWake, Subscribers};
use super::tail::LogTail;
use super::version_clock::VersionClock;
use super::waiters::Waiters;
use crate::collab::lease::OtherLease;

pub(super) mod access;
pub(super) mod compact;
pub(super) mod first_rows;
pub(super) mod icon;
pub(super) mod leave;
pub(super) mod operator;
pub(super) mod snapshot;
pub(super) mod streams;
pub(super) mod sync;
pub(super) mod versions;

/// After this long without requests an open actor drops its in-memory log tail and results.
const IDLE_TRIM_MS: i64 = 30_000;

/// How long a stopping actor lingers so replies it already produced are delivered.
const STOP_GRACE: Duration = Duration::from_millis(20);

/// Sent by a document actor to whoever started it (the registry) when it stops taking work:
/// that owner must stop handing out `addr` for `doc_id`. Declared here, next to the actor,
/// so the actor needs to know nothing about who listens.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Stopped {
    pub doc_id: DocId,
    pub addr: Addr<DocumentActor>,
}

pub struct DocumentActor {
    doc_id: DocId,
    storage: Storage,
    clock: SharedClock,
    cfg: Arc<ActorConfig>,
    /// Told when this actor stops taking work (the registry, which then forgets it).
    owner: Option<Recipient<Stopped>>,
    /// This actor's own address, to ask itself for a re-check from code without a context.
    me: Option<actix::WeakAddr<DocumentActor>>,
    /// The document as the rules see it; `None` until loaded and after a failure.
    state: Option<DocState>,
    failed: Option<DocError>,
    stopping: bool,
    /// Writes queued and not yet answered: the actor stops only when this is 0.
    inflight: usize,
    leases: LeaseTable,
    sessions: Sessions,
    subscribers: Subscribers,
    waiters: Waiters,
    recent: RecentResults,
    announcer: Announcer,
    tail: LogTail,
    blocks: BlocksCache,
    /// What each bullet guest's tab has been sent of its view (PROTOCOL §10).
    guests: GuestViews,
    recheck: RecheckGate,
    stats: ActorStats,
    versions: VersionClock,
    ownership: Ownership,
}

impl DocumentActor {
    pub fn new(
        doc_id: DocId,
        storage: Storage,
        clock: SharedClock,
        cfg: Arc<ActorConfig>,
        owner: Option<Recipient<Stopped>>,
    ) -> DocumentActor {
        let now = clock.now_ms();
        let ownership = Ownership::new(doc_id.as_str(), cfg.this_node.clone());
        DocumentActor {
            doc_id,
            storage,
            leases: LeaseTable::new(cfg.lease_ttl_ms),
            sessions: Sessions::new(cfg.session_ttl_ms),
            recent: RecentResults::new(cfg.recent_results),
            clock,
            cfg,
            owner,
            me: None,
            state: None,
            failed: None,
            stopping: false,
            inflight: 0,
            subscribers: Subscribers::default(),
            waiters: Waiters::default(),
            announcer: Announcer::default(),
            tail: LogTail::default(),
            blocks: BlocksCache::default(),
            guests: GuestViews::default(),
            recheck: RecheckGate::default(),
            stats: ActorStats::new(now),
            versions: VersionClock::default(),
            ownership,
        }
    }

    /// Stops taking work; the actor ends once its writes are answered.
    fn begin_stop(&mut self, ctx: &mut Context<Self>) {
        if !self.stopping {
            self.stopping = true;
            if let Some(r) = &self.owner {
                r.do_send(Stopped {
                    doc_id: self.doc_id.clone(),
                    addr: ctx.address(),
                });
            }
        }
        self.stop_when_answered(ctx);
    }

    /// A stopping actor ends once no write is in flight — not at once: replies already
    /// produced must still go out.
    fn stop_when_answered(&mut self, ctx: &mut Context<Self>) {
        if self.stopping && self.inflight == 0 {
            ctx.run_later(STOP_GRACE, |act, ctx| {
                if act.inflight == 0 {
                    ctx.stop();
                }
            });
        }
    }

    /// A write was queued on the writer.
    fn write_queued(&mut self) {
        self.inflight += 1;
    }

    /// A queued write was answered; a stopping actor may end now.
    fn write_answered(&mut self, ctx: &mut Context<Self>) {
        self.inflight -= 1;
        self.stop_when_answered(ctx);
    }

    /// Something went wrong mid-flight: the in-memory state can no longer be trusted.
    fn poison(&mut self, ctx: &mut Context<Self>, why: &str) {
        self.cfg.metrics.actor_restarts.inc();
        tracing::error!(doc = %self.doc_id, %why, "document actor reloads from the database");
        self.state = None;
        self.blocks.clear();
        self.failed = Some(DocError::Restarting);
        self.begin_stop(ctx);
    }

    /// Another node took the document over (a write was refused for a stale epoch):
    /// this actor stops for good; its callers ask again and are routed to the new owner,
    /// and its streams end so their clients re-home.
    pub(super) fn lost_ownership(&mut self, ctx: &mut Context<Self>) {
        self.cfg.metrics.stale_writes_refused.inc();
        tracing::warn!(doc = %self.doc_id, "another node owns this document now; stopping");
        self.ownership.lost();
        self.give_up(ctx);
    }

    /// Stops serving the document at once (taken over, or this node fenced): state dropped,
    /// callers told to ask again, streams end with the actor.
    pub(super) fn give_up(&mut self, ctx: &mut Context<Self>) {
        self.ownership.let_go();
        self.state = None;
        self.blocks.clear();
        self.failed = Some(DocError::NotOwner);
        self.begin_stop(ctx);
    }

    /// Why this actor cannot take a request now, if it cannot.
    fn refuse(&self) -> Option<DocError> {
        if let Some(e) = &self.failed {
            return Some(e.clone());
        }
        if self.stopping || self.state.is_none() {
            return Some(DocError::Restarting);
        }
        None
    }

    /// Why `caller`'s request cannot be answered now, if it cannot: `refuse()`, or a bullet
    /// guest whose every shared bullet is deleted (or gone) — their view has ended (PROTOCOL
    /// §10), and they are answered as for a deleted document: nothing of theirs applied,
    /// nothing sent; restoring a shared bullet brings the view back where it was.
    fn refuse_for(&self, caller: &Caller) -> Option<DocError> {
        if let Some(e) = self.refuse() {
            return Some(e);
        }
        let (Some(roots), Some(doc)) = (caller.bullets(), self.state.as_ref()) else {
            return None;
        };
        (!super::guests::any_live_root(doc, roots)).then_some(DocError::NotFound)
    }

    /// `reply`, made from the state at `head`, once `head` is on disk: at once when it is,
    /// else behind the writes still being committed (an empty job behind them in the writer
    /// queue marks that moment). Nobody is shown what a crash could still take back.
    fn when_durable<T: 'static>(
        &self,
        head: i64,
        reply: T,
    ) -> ResponseActFuture<Self, Result<T, DocError>> {
        if head <= self.announcer.durable_head() {
            return Box::pin(actix::fut::ready(Ok(reply)));
        }
        let barrier = self.storage.write(|_| Ok(()));
        Box::pin(
            actix::fut::wrap_future::<_, Self>(barrier).map(move |res, _act, _ctx| {
                res.map(|_| reply)
                    .map_err(|e| DocError::Storage(e.to_string()))
            }),
        )
    }

    fn mode(&self, shared: bool) -> Mode {
        if shared || self.sessions.len() > 1 {
            Mode::Full
        } else {
            Mode::Private
        }
    }

    /// Who else is here, as `caller` may see it: the leases of others, the people with the
    /// document open and how many tabs they have. A bullet guest sees only leases inside
    /// their view, and of the people only those holding them and themselves — nobody
    /// working elsewhere in the document.
    fn presence_for(&self, caller: &Caller, now: i64) -> (Vec<OtherLease>, Vec<Person>, usize) {
        let others = self.leases.others(caller.client_str(), now);
        let (Some(roots), Some(doc)) = (caller.bullets(), self.state.as_ref()) else {
            return (others, self.sessions.people(), self.sessions.len());
        };
        let mine = self
            .sessions
            .people()
            .into_iter()
            .filter(|p| p.user_id == caller.author.user_id);
        super::guests::presence(doc, roots, others, mine)
    }

    /// Someone asked through `client` at `now`: the document is active, and a new tab (or a
    /// name learned) is presence news.
    fn see(&mut self, client: Option<&ClientId>, user_id: &str, name: &str, now: i64) {
        self.stats.active(now);
        if self.sessions.see(client, user_id, name, now) {
            self.announcer.presence_changed();
        }
    }

    /// Tells the news of this message, unless a sync's write is on its way (its commit
    /// tells it). Called at the end of every message that may have news.
    fn settle(&mut self) {
        if let Some(news) = self.announcer.settle() {
            self.tell(news);
        }
    }

    /// Tells the news now (a sync's commit).
    fn announce(&mut self) {
        if let Some(news) = self.announcer.take() {
            self.tell(news);
        }
    }

    /// Sends one change to every wake-up channel whose rights hold and answers the
    /// long-polls whose condition now holds. Streams whose rights are unconfirmed hear
    /// nothing until re-checked.
    fn tell(&mut self, news: News) {
        let entries = self.wake_entries(news.after, news.head);
        // Read after the commit that moved the head: a revocation whose answer went out
        // before has moved the epoch already, so its streams hear nothing of this change.
        let epoch = self.storage.access_epoch().current();
        let wake = Wake {
            doc_id: self.doc_id.clone(),
            head_seq: news.head,
            lease_seq: news.lease_seq,
            entries,
            since: None,
        };
        let now = self.clock.now_ms();
        let (guests, state) = (&mut self.guests, self.state.as_ref());
        let guest_wake = |client: Option<&ClientId>, roots: &[BulletRoot]| match state {
            Some(doc) => guests.wake(
                client.map(ClientId::as_str),
                doc,
                roots,
                &news.touched,
                news.head,
                now,
            ),
            None => GuestWake::Quiet,
        };
        let stale = self.subscribers.announce(wake, epoch, now, guest_wake);
        let guests = &self.guests;
        let concerns = |client: Option<&ClientId>, roots: &[BulletRoot]| {
            state.is_some_and(|doc| {
                guests.concerns(client.map(ClientId::as_str), doc, roots, &news.touched)
            })
        };
        self.waiters.answer(news.head, news.lease_seq, concerns);
        if stale && self.recheck.ask_by_message() {
            if let Some(me) = self.me.as_ref().and_then(|m| m.upgrade()) {
                me.do_send(AccessChanged { shares: false });
            }
        }
    }

    /// The entries `after < seq <= head` for a wake-up, when they are few and small. They
    /// are the very page a reader that had `after` asks `/sync` for, so the encoding is
    /// shared with those pulls (`LogTail::page`).
    fn wake_entries(&mut self, after: i64, head: i64) -> Option<Arc<RawValue>> {
        if head <= after || head - after > self.cfg.log_page as i64 {
            return None;
        }
        let small = self
            .tail
            .encoded_len(after, head)
            .is_some_and(|n| n <= self.cfg.wake_entries_bytes);
        if !small {
            return None;
        }
        self.tail.page(after, head, head)
    }

    /// Keeps a version of the state as it is now (`keep_version`), counted as one write in
    /// flight until it is stored or failed. The caller has checked `refuse()`.
    fn take_version(
        &mut self,
        kind: VersionKind,
        name: Option<String>,
        created_by: Option<String>,
    ) -> ResponseActFuture<Self, Result<VersionMeta, DocError>> {
        let Some(state) = &self.state else {
            return Box::pin(actix::fut::ready(Err(DocError::Restarting)));
        };
        let at = self.clock.now_ms();
        let version =
            keep_version::capture(state, self.doc_id.as_str(), at, kind, name, created_by);
        self.versions.started();
        self.write_queued();
        let keeping = keep_version::keep(&self.storage, version, self.ownership.epoch());
        Box::pin(
            actix::fut::wrap_future::<_, Self>(keeping).map(move |res, act, ctx| {
                act.write_answered(ctx);
                act.versions
                    .finished(res.as_ref().ok().map(|m| (m.seq, m.at)));
                match res {
                    Ok(m) => {
                        act.cfg
                            .metrics
                            .versions_taken
                            .with_label_values(&[kind.as_str()])
                            .inc();
                        Ok(m)
                    }
                    Err(e) => {
                        tracing::warn!(doc = %act.doc_id, error = %e, "keeping a version");
                        Err(e.into())
                    }
                }
            }),
        )
    }

    /// Loads the filter of op IDs that may be retries (`RecentResults::surely_new`) in one
    /// read. Called once the state is loaded: that load went through the writer queue, so
    /// every result an earlier actor of this document queued is committed by now. Until the
    /// filter is in, and if its read fails, every write is pre-checked as before.
    fn load_op_filter(&mut self, ctx: &mut Context<Self>) {
        self.recent.filter_loading();
        let (doc, storage) = (self.doc_id.clone(), self.storage.clone());
        let read = async move {
            storage
                .read(move |c| {
                    let mut hashes = Vec::new();
                    log::for_each_result_op_id(c, doc.as_str(), |id| hashes.push(op_hash(id)))?;
                    Ok(hashes)
                })
                .await
        };
        ctx.spawn(
            actix::fut::wrap_future::<_, Self>(read).map(|res, act, _ctx| match res {
                Ok(hashes) => act.recent.filter_loaded(hashes),
                Err(e) => {
                    tracing::warn!(doc = %act.doc_id, error = %e, "loading the op ID filter")
                }
            }),
        );
    }

    fn tick(&mut self, ctx: &mut Context<Self>) {
        let now = self.clock.now_ms();
        // An open stream keeps its tab present; long-polls that gave up are forgotten.
        self.subscribers.prune_closed();
        self.waiters.prune_closed();
        for (client, user) in self.subscribers.present() {
            if self.sessions.see(Some(&client), &user, "", now) {
                self.announcer.presence_changed();
            }
        }
        let mut changed = self.leases.expire(now);
        for client in self.sessions.expire(now) {
            self.leases.release_client(&client);
            self.guests.forget(&client);
            changed = true;
        }
        if changed {
            self.announcer.presence_changed();
        }
        self.settle();
        let head = self.state.as_ref().map_or(0, |s| s.head_seq);
        if self.refuse().is_none() && self.versions.due(head, now, self.cfg.auto_version_every_ms) {
            let take = self.take_version(VersionKind::Auto, None, None);
            ctx.spawn(take.map(|_, _, _| ()));
        }
        // A login session behind a stream may have ended by the clock; a failed re-check
        // is retried here too.
        let epoch = self.storage.access_epoch().current();
        if !self.subscribers.stale(epoch, now).is_empty() && self.recheck.ask_by_message() {
            ctx.notify(AccessChanged { shares: false });
        }
        if self.stats.idle_ms(now) >= IDLE_TRIM_MS && self.inflight == 0 {
            // Nobody is typing: the log tail and the results are rebuilt from SQLite on
            // demand (both are on disk by now).
            self.tail.clear();
            self.blocks.clear();
            self.recent.forget();
        }
        let idle = self.stats.idle_ms(now) >= self.cfg.idle_stop_ms;
        let unused =
            self.sessions.is_empty() && self.subscribers.is_empty() && self.waiters.is_empty();
        if idle && unused && self.inflight == 0 && !self.stopping {
            tracing::debug!(doc = %self.doc_id, "document actor idle, stopping");
            self.begin_stop(ctx);
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
        // In cluster mode the claim rides in the same transaction: the state loaded is the
        // state at the epoch this actor will write with.
        let doc_id = self.doc_id.clone();
        let me = self.ownership.claimant(doc_id.as_str());
        let load = self.storage.write(move |c| {
            let me = me?;
            let epoch = Ownership::claim_in(c, doc_id.as_str(), me.as_ref())?;
            let state = documents::load(c, doc_id.as_str())?;
            let latest = stored_versions::latest(c, doc_id.as_str())?;
            Ok((state, latest, me, epoch))
        });
        ctx.wait(
            actix::fut::wrap_future::<_, Self>(load).map(|res, act, ctx| match res {
                Ok((state, last_version, me, epoch)) => {
                    act.ownership.claimed(me, epoch);
                    act.versions.loaded(last_version);
                    act.announcer.loaded(state.head_seq);
                    act.state = Some(state);
                    act.load_op_filter(ctx);
                }
                Err(StorageError::DocNotFound(_)) => {
                    act.failed = Some(DocError::NotFound);
                    act.begin_stop(ctx);
                }
                Err(StorageError::NotOwner { .. }) => {
                    act.failed = Some(DocError::NotOwner);
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
        // Hand the document on at once (epoch + 1) rather than when this node's membership
        // expires. Queued behind every write of this actor, so none of them is refused.
        if let Some((me, epoch)) = self.ownership.take() {
            let doc = self.doc_id.clone();
            let release = self
                .storage
                .write(move |c| ownership::release(c, doc.as_str(), &me, epoch));
            actix::spawn(async move {
                if let Err(e) = release.await {
                    tracing::warn!(error = %e, "releasing a document's ownership");
                }
            });
        }
        self.cfg.metrics.actor_stops.inc();
        self.cfg.metrics.actors_open.dec();
        tracing::debug!(doc = %self.doc_id, "document actor stopped");
    }
}

/// Rights may have changed (the access epoch moved): open streams are re-checked, leases of
/// users who lost write access and sessions of users who lost read access dropped. With
/// `shares`, this document's own shares changed, so `shared`/mode may flip: every client
/// hears presence news.
#[derive(Message)]
#[rtype(result = "()")]
pub struct AccessChanged {
    pub shares: bool,
}
