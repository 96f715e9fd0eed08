//! `RelayedDocument`: cluster mode's stand-in for a document another node owns, on a node
//! where wake-up channels listen to it. The owner sends this node one stream of the
//! document (its `Channel::Relay` subscriber); this actor fans each change out to the
//! streams that subscribed here and answers the long-polls waiting here — however many,
//! one stream between the two nodes.
//!
//! Rights are this node's to keep, with the document actor's own parts and rule: a stream
//! was authorised by the role function when it subscribed, hears a change only while the
//! access epoch it was confirmed at is the current one (and its login session has not ended
//! by the clock), and is re-checked in one read when that stops holding (`Subscribers`,
//! `RecheckGate`, `read_standing`). Each change arrives with the owner's access epoch, which
//! this node takes (`observe`: one counter in the one database) before fanning out: a right
//! revoked through any node is re-checked here before the owner's next change goes out,
//! never after.
//!
//! How the owner's stream is read is not this crate's business: whoever starts the actor
//! passes it as a future (`Upstream`), which runs while the actor runs and is dropped with
//! it. When it ends — the document is served on this node now, or is gone — every stream
//! hears `Moved` (subscribe again), a waiting long-poll is answered with what it had (it
//! asks again), and the actor stops. It also stops after `LINGER_MS` without a subscriber or
//! a waiting long-poll. Long-polls (`WaitChanges`) are answered from the owner's newest head
//! and by its next change; their handler checks their rights itself, before and after the
//! wait. A bullet guest's stream is never relayed here: the owner cuts their view, one
//! stream each.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use actix::WeakAddr;

use crate::clock::SharedClock;
use crate::collab::validate::DocId;
use crate::metrics::Metrics;
use crate::storage::roles::Reach;
use crate::storage::Storage;

use super::actor::streams::{
    Changes, Subscribe, Subscribed, Subscription, Unsubscribe, WaitChanges,
};
use super::actor::AccessChanged;
use super::messages::{DocError, Wake};
use super::recheck::{read_standing, RecheckGate};
use super::subscribers::{GuestWake, Subscribers};
use super::waiters::Waiters;

/// How long a relay with no subscriber keeps the owner's stream open (a socket that
/// reconnects, or the next tab, finds it still there).
const LINGER_MS: i64 = 10_000;
const TICK: Duration = Duration::from_secs(1);

/// Reads the owner's stream into `Heard` messages to the relay until the relay is over.
pub type Upstream = Pin<Box<dyn Future<Output = ()>>>;

/// One change from the owner's stream, with the owner's access epoch when it sent it.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Heard {
    pub wake: Wake,
    pub epoch: u64,
}

pub struct RelayedDocument {
    doc_id: DocId,
    storage: Storage,
    clock: SharedClock,
    metrics: Arc<Metrics>,
    upstream: Option<Box<dyn FnOnce(WeakAddr<RelayedDocument>) -> Upstream>>,
    subscribers: Subscribers,
    /// Long-polls (their handler checks their rights, before and after the wait).
    waiters: Waiters,
    recheck: RecheckGate,
    /// The newest head heard from the owner (without entries): what a stream subscribing
    /// now, or confirmed after missing a change, is told.
    latest: Option<Wake>,
    /// Since when nobody has subscribed (server clock).
    empty_since: Option<i64>,
    over: bool,
}

impl RelayedDocument {
    /// A relay of `doc_id` whose owner's stream `upstream` reads, given the relay's address.
    pub fn new(
        doc_id: DocId,
        storage: Storage,
        clock: SharedClock,
        metrics: Arc<Metrics>,
        upstream: impl FnOnce(WeakAddr<RelayedDocument>) -> Upstream + 'static,
    ) -> RelayedDocument {
        RelayedDocument {
            doc_id,
            storage,
            clock,
            metrics,
            upstream: Some(Box::new(upstream)),
            subscribers: Subscribers::default(),
            waiters: Waiters::default(),
            recheck: RecheckGate::default(),
            latest: None,
            empty_since: None,
            over: false,
        }
    }

    fn latest_or_nothing(&self) -> Wake {
        self.latest.clone().unwrap_or(Wake {
            doc_id: self.doc_id.clone(),
            head_seq: 0,
            lease_seq: 0,
            entries: None,
            since: None,
        })
    }

    /// The same re-check as a document actor's, of streams only (no leases or sessions live
    /// here): one read at a time, again when the epoch moved meanwhile.
    fn recheck_access(&mut self, ctx: &mut Context<Self>) {
        if !self.recheck.may_start() {
            return;
        }
        let epoch = self.storage.access_epoch().current();
        let now = self.clock.now_ms();
        let streams = self.subscribers.stale(epoch, now);
        if streams.is_empty() {
            self.recheck.confirmed(epoch);
            return;
        }
        self.recheck.started();
        let (doc, storage) = (self.doc_id.clone(), self.storage.clone());
        let check = async move {
            storage
                .read(move |c| read_standing(c, doc.as_str(), streams, Vec::new(), now))
                .await
        };
        ctx.spawn(
            actix::fut::wrap_future::<_, Self>(check).map(move |res, act, ctx| {
                let standing = match res {
                    Ok((standing, _)) => standing,
                    Err(e) => {
                        tracing::warn!(doc = %act.doc_id, error = %e, "re-checking relayed streams");
                        act.recheck.failed();
                        return;
                    }
                };
                let current = act.storage.access_epoch().current();
                let latest = act.latest_or_nothing();
                let ended = act.subscribers.settle(epoch, current, standing, &latest);
                if !ended.is_empty() {
                    act.metrics.streams_revoked.inc_by(ended.len() as u64);
                }
                act.recheck.confirmed(epoch);
                if act.recheck.finished() || current != epoch {
                    act.recheck_access(ctx);
                }
            }),
        );
    }

    /// The owner's stream is over for this node: every stream subscribes again.
    fn relay_ended(&mut self, ctx: &mut Context<Self>) {
        self.over = true;
        self.subscribers.moved(&self.doc_id);
        ctx.stop();
    }

    fn tick(&mut self, ctx: &mut Context<Self>) {
        let now = self.clock.now_ms();
        self.subscribers.prune_closed();
        self.waiters.prune_closed();
        if !self.waiters.is_empty() {
            self.empty_since = None;
        }
        if !self.subscribers.is_empty() {
            self.empty_since = None;
            // A login session behind a stream may have ended by the clock.
            let epoch = self.storage.access_epoch().current();
            if !self.subscribers.stale(epoch, now).is_empty() {
                self.recheck_access(ctx);
            }
            return;
        }
        if !self.waiters.is_empty() {
            return;
        }
        let since = *self.empty_since.get_or_insert(now);
        if now - since >= LINGER_MS {
            self.over = true;
            ctx.stop();
        }
    }
}

impl Actor for RelayedDocument {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        self.metrics.relayed_documents.inc();
        if let Some(start) = self.upstream.take() {
            let reading = start(ctx.address().downgrade());
            ctx.spawn(
                actix::fut::wrap_future::<_, Self>(reading)
                    .map(|(), act, ctx| act.relay_ended(ctx)),
            );
        }
        ctx.run_interval(TICK, |act, ctx| act.tick(ctx));
    }

    fn stopped(&mut self, _ctx: &mut Context<Self>) {
        self.metrics.relayed_documents.dec();
    }
}

impl Handler<Subscribe> for RelayedDocument {
    type Result = Result<Subscribed, DocError>;

    fn handle(&mut self, msg: Subscribe, ctx: &mut Context<Self>) -> Self::Result {
        if self.over {
            return Err(DocError::Restarting);
        }
        if !matches!(msg.reach, Reach::Document) {
            return Err(DocError::Internal(
                "a bullet guest's stream is relayed by the owner on its own".into(),
            ));
        }
        let now = self.clock.now_ms();
        let epoch = self.storage.access_epoch().current();
        let holds = msg.confirmed.holds(epoch, now);
        let sink = msg.sink.clone();
        let (opened, confirmed) = msg.into_opened();
        let id = self.subscribers.add(opened, confirmed);
        self.empty_since = None;
        if !holds {
            self.recheck_access(ctx);
        } else if let Some(latest) = &self.latest {
            // What the owner said last, as a document's own stream would have it at once.
            let _ = sink.unbounded_send(super::messages::DocEvent::Seq(Arc::new(latest.clone())));
        }
        let latest = self.latest_or_nothing();
        Ok(Subscribed {
            head_seq: latest.head_seq,
            lease_seq: latest.lease_seq,
            subscription: Subscription::new(ctx.address().recipient(), id),
        })
    }
}

impl Handler<Unsubscribe> for RelayedDocument {
    type Result = ();

    fn handle(&mut self, msg: Unsubscribe, _ctx: &mut Context<Self>) {
        self.subscribers.remove(msg.id);
    }
}

impl Handler<Heard> for RelayedDocument {
    type Result = ();

    fn handle(&mut self, msg: Heard, ctx: &mut Context<Self>) {
        // The owner told this change at `msg.epoch`: rights changed by then are re-checked
        // here before anyone hears it.
        self.storage.access_epoch().observe(msg.epoch);
        let epoch = self.storage.access_epoch().current();
        let now = self.clock.now_ms();
        self.latest = Some(Wake {
            entries: None,
            ..msg.wake.clone()
        });
        self.waiters
            .answer(msg.wake.head_seq, msg.wake.lease_seq, |_, _| false);
        let stale = self
            .subscribers
            .announce(msg.wake, epoch, now, |_, _| GuestWake::Plain);
        if stale {
            self.recheck_access(ctx);
        }
    }
}

impl Handler<WaitChanges> for RelayedDocument {
    type Result = Result<Changes, DocError>;

    /// Answered at once when the owner's newest head is past `since` or its lease state
    /// differs, else by the next change the owner sends (before its first line arrives,
    /// by that line).
    fn handle(&mut self, msg: WaitChanges, _ctx: &mut Context<Self>) -> Self::Result {
        if self.over {
            return Err(DocError::Restarting);
        }
        if !matches!(msg.reach, Reach::Document) {
            return Err(DocError::Internal(
                "a bullet guest's long-poll waits on the owner".into(),
            ));
        }
        self.empty_since = None;
        let now = self
            .latest
            .as_ref()
            .map_or((msg.since, msg.lease_seq), |l| (l.head_seq, l.lease_seq));
        Ok(Changes::for_reader(
            now,
            msg.since,
            msg.lease_seq,
            &mut self.waiters,
        ))
    }
}

impl Handler<AccessChanged> for RelayedDocument {
    type Result = ();

    fn handle(&mut self, _msg: AccessChanged, ctx: &mut Context<Self>) {
        self.recheck.message_arrived();
        self.recheck_access(ctx);
    }
}
