//! Wake-up channels as the document sees them (PROTOCOL §4): streams (WebSocket, SSE)
//! subscribe and hear every change until they drop their `Subscription`; long-poll waiters
//! are answered once their condition holds. The bookkeeping is `Subscribers` and `Waiters`.

use std::sync::Arc;

use actix::prelude::*;
use tokio::sync::oneshot;

use crate::collab::validate::ClientId;
use crate::document::grant::{Confirmed, StreamGrant};
use crate::document::messages::{Channel, DocError, EventSink};
use crate::document::subscribers::Opened;
use crate::document::waiters::Waiters;
use crate::storage::roles::Reach;

use super::DocumentActor;

/// Registers a wake-up channel. The reply holds the current `(headSeq, leaseSeq)` and the
/// registration itself: dropping the `Subscription` unsubscribes.
#[derive(Message, Clone)]
#[rtype(result = "Result<Subscribed, DocError>")]
pub struct Subscribe {
    pub channel: Channel,
    /// The tab behind the channel, kept present while the channel is open.
    pub client: Option<ClientId>,
    pub user_id: String,
    pub sink: EventSink,
    /// What opened the channel: asked again whenever the access epoch moves.
    pub grant: Arc<dyn StreamGrant>,
    /// When the opener's rights were checked (the epoch read *before* that check).
    pub confirmed: Confirmed,
    /// What of the document the opener sees (a bullet guest hears only its subtrees).
    pub reach: Reach,
}

impl Subscribe {
    /// The stream as `Subscribers` keeps it, and when its rights were confirmed.
    pub(crate) fn into_opened(self) -> (Opened, Confirmed) {
        let opened = Opened {
            channel: self.channel,
            client: self.client,
            user_id: self.user_id,
            sink: self.sink,
            grant: self.grant,
            reach: self.reach,
        };
        (opened, self.confirmed)
    }
}

pub struct Subscribed {
    pub head_seq: i64,
    pub lease_seq: u64,
    pub subscription: Subscription,
}

/// A registered stream. Dropping it (the socket or stream went away) unsubscribes; the
/// address of what it is registered with (a document actor, or the relay of a document
/// another node owns) stays inside, so no handler ever holds one.
pub struct Subscription {
    to: Recipient<Unsubscribe>,
    id: u64,
}

impl Subscription {
    pub(crate) fn new(to: Recipient<Unsubscribe>, id: u64) -> Subscription {
        Subscription { to, id }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.to.do_send(Unsubscribe { id: self.id });
    }
}

/// Sent by a `Subscription` when it is dropped.
#[derive(Message)]
#[rtype(result = "()")]
pub(crate) struct Unsubscribe {
    pub(crate) id: u64,
}

/// Long-polling: answered at once when `headSeq > since` or `leaseSeq != lease_seq`, otherwise
/// the receiver fires on the next such change. The caller owns the timeout.
#[derive(Message, Clone)]
#[rtype(result = "Result<Changes, DocError>")]
pub struct WaitChanges {
    pub since: i64,
    pub lease_seq: u64,
    pub client: Option<ClientId>,
    pub user_id: String,
    /// What of the document the caller sees: a bullet guest's long-poll is answered at once
    /// only when their view has news, else by the first change that touches it.
    pub reach: Reach,
}

pub enum Changes {
    Now {
        head_seq: i64,
        lease_seq: u64,
    },
    Later {
        head_seq: i64,
        lease_seq: u64,
        rx: oneshot::Receiver<(i64, u64)>,
    },
}

impl Handler<Subscribe> for DocumentActor {
    type Result = Result<Subscribed, DocError>;

    fn handle(&mut self, msg: Subscribe, ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Err(e);
        }
        let now = self.clock.now_ms();
        self.see(msg.client.as_ref(), &msg.user_id, "", now);
        self.settle();
        let (opened, confirmed) = msg.into_opened();
        let id = self.subscribers.add(opened, confirmed);
        // The rights were checked at an epoch that has moved since: check them again.
        let epoch = self.storage.access_epoch().current();
        if !confirmed.holds(epoch, now) {
            self.recheck_access(ctx);
        }
        Ok(Subscribed {
            head_seq: self.announcer.durable_head(),
            lease_seq: self.announcer.lease_seq(),
            subscription: Subscription::new(ctx.address().recipient(), id),
        })
    }
}

impl Handler<Unsubscribe> for DocumentActor {
    type Result = ();

    fn handle(&mut self, msg: Unsubscribe, _ctx: &mut Context<Self>) {
        self.subscribers.remove(msg.id);
    }
}

impl Handler<WaitChanges> for DocumentActor {
    type Result = Result<Changes, DocError>;

    fn handle(&mut self, msg: WaitChanges, _ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Err(e);
        }
        let now = self.clock.now_ms();
        self.see(msg.client.as_ref(), &msg.user_id, "", now);
        self.settle();
        let (head, lease) = (self.announcer.durable_head(), self.announcer.lease_seq());
        if let Reach::Bullets(roots) = msg.reach {
            let client = msg.client.as_ref().map(ClientId::as_str);
            let news = self
                .state
                .as_ref()
                .is_none_or(|doc| self.guests.has_news(client, doc, &roots, msg.since));
            if news {
                return Ok(Changes::Now {
                    head_seq: head,
                    lease_seq: lease,
                });
            }
            // Nothing new for them: what the answer says when the wait runs out is their own
            // cursor back (no pull), not the document's head.
            return Ok(Changes::Later {
                head_seq: msg.since,
                lease_seq: msg.lease_seq,
                rx: self.waiters.add_guest(msg.client, roots),
            });
        }
        Ok(Changes::for_reader(
            (head, lease),
            msg.since,
            msg.lease_seq,
            &mut self.waiters,
        ))
    }
}

impl Changes {
    /// A whole-document reader's long-poll against `(head, lease)`: now when the head passed
    /// `since` or the lease state differs from `lease_seq`, else once `waiters` answers it.
    pub(crate) fn for_reader(
        (head, lease): (i64, u64),
        since: i64,
        lease_seq: u64,
        waiters: &mut Waiters,
    ) -> Changes {
        if head > since || lease != lease_seq {
            return Changes::Now {
                head_seq: head,
                lease_seq: lease,
            };
        }
        Changes::Later {
            head_seq: head,
            lease_seq: lease,
            rx: waiters.add(since, lease_seq),
        }
    }
}
