//! `AccessChanged`: rights may have changed. The re-check of the document's open streams and
//! of the people in it — one read at a time (`RecheckGate`) — asked for by this message
//! (from the registry when the access epoch moves, from the actor itself when a wake-up
//! found a stream unconfirmed or the tick found a login session ended) and by a stream
//! subscribing with rights checked at an older epoch.

use actix::prelude::*;

use crate::document::messages::Wake;
use crate::document::recheck::read_standing;

use super::{AccessChanged, DocumentActor};

impl DocumentActor {
    /// Re-checks, in one read, every stream whose rights do not hold at the current access
    /// epoch (or whose login session ended), and the roles of every lease holder and
    /// present user. Streams that lost their credential or access are ended; leases of
    /// users who cannot write any more and sessions of users who cannot read are dropped.
    /// One read at a time (`RecheckGate`).
    pub(super) fn recheck_access(&mut self, ctx: &mut Context<Self>) {
        if !self.recheck.may_start() {
            return;
        }
        // Read before the database: a right confirmed by this read holds at this epoch only.
        let epoch = self.storage.access_epoch().current();
        let now = self.clock.now_ms();
        let streams = self.subscribers.stale(epoch, now);
        let mut users: Vec<String> = self
            .leases
            .holders()
            .into_iter()
            .chain(self.sessions.users())
            .collect();
        users.sort();
        users.dedup();
        if streams.is_empty() && users.is_empty() {
            self.recheck.confirmed(epoch);
            return;
        }
        self.recheck.started();
        let doc = self.doc_id.clone();
        let storage = self.storage.clone();
        let check = async move {
            storage
                .read(move |c| read_standing(c, doc.as_str(), streams, users, now))
                .await
        };
        ctx.spawn(
            actix::fut::wrap_future::<_, Self>(check).map(move |res, act, ctx| {
                let (standing, roles) = match res {
                    Ok(r) => r,
                    Err(e) => {
                        tracing::warn!(doc = %act.doc_id, error = %e, "re-checking stream rights");
                        act.recheck.failed();
                        return;
                    }
                };
                let current = act.storage.access_epoch().current();
                let (head, lease) = act.announcer.told();
                let latest = Wake {
                    doc_id: act.doc_id.clone(),
                    head_seq: head,
                    lease_seq: lease,
                    entries: None,
                    since: None,
                };
                let ended = act.subscribers.settle(epoch, current, standing, &latest);
                if !ended.is_empty() {
                    act.cfg.metrics.streams_revoked.inc_by(ended.len() as u64);
                }
                let mut changed = false;
                for (user, role) in roles {
                    if !role.is_some_and(|r| r.can_write()) {
                        changed |= act.leases.release_user(&user);
                    }
                    if role.is_none() {
                        changed |= act.sessions.remove_user(&user);
                    }
                }
                let sessions = &act.sessions;
                act.guests.retain(|client| sessions.has(client));
                if changed {
                    act.announcer.presence_changed();
                    act.settle();
                }
                act.recheck.confirmed(epoch);
                if act.recheck.finished() || current != epoch {
                    act.recheck_access(ctx);
                }
            }),
        );
    }
}

impl Handler<AccessChanged> for DocumentActor {
    type Result = ResponseActFuture<Self, ()>;

    /// Answered once the rights as they are now are re-checked (streams ended, leases of
    /// those who may not write any more released).
    fn handle(&mut self, msg: AccessChanged, ctx: &mut Context<Self>) -> Self::Result {
        self.recheck.message_arrived();
        if msg.shares {
            // `shared` may have flipped: everyone syncs and sees the new mode.
            self.announcer.presence_changed();
            self.settle();
        }
        let done = self.recheck.wait(self.storage.access_epoch().current());
        self.recheck_access(ctx);
        Box::pin(actix::fut::wrap_future(async move {
            let _ = done.await;
        }))
    }
}
