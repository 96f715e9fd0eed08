//! Wake-up channels as the document sees them: streams (WebSocket, SSE) subscribe and hear
//! every change, long-poll waiters are answered once their condition holds, and share
//! changes make channels re-check access and drop leases of users who lost rights. The
//! bookkeeping lives in `subscribers.rs` and `waiters.rs`; this file is the messages.

use std::sync::Arc;

use actix::prelude::*;
use serde_json::value::RawValue;

use super::actor::DocumentActor;
use super::messages::*;
use super::subscribers::Subscription;

impl DocumentActor {
    /// One change is one wake-up (PROTOCOL §4): handlers only record news (`durable_seq`,
    /// `presence_changed`), and it is announced once, at the end of the message — or, while
    /// a sync's write is on its way to the disk, by that write's commit, so the lease and
    /// presence news of a sync travel with the head it produced.
    pub(super) fn settle(&mut self) {
        if self.sync_writes == 0 {
            self.announce();
        }
    }

    /// Tells every wake-up channel the durable head and leaseSeq, if either moved since the
    /// last time, and answers the long-polls whose condition now holds. Closed channels are
    /// dropped here.
    pub(super) fn announce(&mut self) {
        let (head, lease) = (self.durable_seq, self.lease_seq);
        if (head, lease) == self.announced {
            return;
        }
        let entries = self.wake_entries(self.announced.0, head);
        self.announced = (head, lease);
        // Read after the commit that moved the head: a revocation whose answer went out
        // before has moved the epoch already, so its streams hear nothing of this change.
        let epoch = self.storage.writer.access_epoch().current();
        let wake = Wake {
            doc_id: self.doc_id.clone(),
            head_seq: head,
            lease_seq: lease,
            entries,
        };
        let stale = self.subscribers.announce(wake, epoch, self.clock.now_ms());
        self.waiters.answer(head, lease);
        if stale {
            self.ask_recheck();
        }
    }

    /// Asks this actor (by message: no context here) to re-check streams whose rights no
    /// longer hold.
    fn ask_recheck(&mut self) {
        if self.recheck.running {
            self.recheck.again = true;
        } else if !self.recheck.asked {
            if let Some(me) = self.me.as_ref().and_then(|m| m.upgrade()) {
                self.recheck.asked = true;
                me.do_send(AccessChanged { shares: false });
            }
        }
    }

    /// Re-checks, in one read, every stream whose rights do not hold at the current access
    /// epoch (or whose login session ended), and the roles of every lease holder and
    /// present user. Streams that lost their credential or access are ended; leases of
    /// users who cannot write any more and sessions of users who cannot read are dropped.
    /// One read at a time; asked again meanwhile, it runs once more after.
    pub(super) fn recheck_access(&mut self, ctx: &mut Context<Self>) {
        if self.recheck.running {
            self.recheck.again = true;
            return;
        }
        // Read before the database: a right confirmed by this read holds at this epoch only.
        let epoch = self.storage.writer.access_epoch().current();
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
            return;
        }
        self.recheck.running = true;
        let doc = self.doc_id.clone();
        let storage = self.storage.clone();
        let check = async move {
            storage
                .read(move |c| {
                    let mut standing = Vec::with_capacity(streams.len());
                    let mut by_key: std::collections::HashMap<String, super::grant::Standing> =
                        std::collections::HashMap::new();
                    for (id, grant) in streams {
                        let s = match by_key.get(grant.key()) {
                            Some(s) => *s,
                            None => {
                                let s = grant.recheck(c, &doc, now)?;
                                by_key.insert(grant.key().to_string(), s);
                                s
                            }
                        };
                        standing.push((id, s));
                    }
                    let mut roles = Vec::with_capacity(users.len());
                    for u in users {
                        let role = crate::storage::roles::doc_role(c, &u, &doc)?;
                        roles.push((u, role));
                    }
                    Ok((standing, roles))
                })
                .await
        };
        ctx.spawn(
            actix::fut::wrap_future::<_, Self>(check).map(move |res, act, ctx| {
                act.recheck.running = false;
                let (standing, roles) = match res {
                    Ok(r) => r,
                    Err(e) => {
                        // Streams stay unconfirmed (they hear nothing); the tick retries.
                        tracing::warn!(doc = %act.doc_id, error = %e, "re-checking stream rights");
                        act.recheck.again = false;
                        return;
                    }
                };
                let current = act.storage.writer.access_epoch().current();
                let latest = Wake {
                    doc_id: act.doc_id.clone(),
                    head_seq: act.announced.0,
                    lease_seq: act.announced.1,
                    entries: None,
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
                if changed {
                    act.presence_changed();
                    act.settle();
                }
                if current != epoch || act.recheck.again {
                    act.recheck.again = false;
                    act.recheck_access(ctx);
                }
            }),
        );
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
}

impl Handler<Subscribe> for DocumentActor {
    type Result = Result<Subscribed, DocError>;

    fn handle(&mut self, msg: Subscribe, ctx: &mut Context<Self>) -> Self::Result {
        if let Some(e) = self.refuse() {
            return Err(e);
        }
        let now = self.clock.now_ms();
        self.last_activity = now;
        if let Some(c) = &msg.client_id {
            if self.sessions.touch(c, &msg.user_id, "", now) {
                self.presence_changed();
            }
        }
        self.settle();
        let id = self.subscribers.add(
            msg.channel,
            msg.client_id,
            msg.user_id,
            msg.sink,
            msg.grant,
            msg.confirmed,
        );
        // The rights were checked at an epoch that has moved since: check them again.
        let epoch = self.storage.writer.access_epoch().current();
        if !msg.confirmed.holds(epoch, now) {
            self.recheck_access(ctx);
        }
        Ok(Subscribed {
            head_seq: self.durable_seq,
            lease_seq: self.lease_seq,
            subscription: Subscription::new(ctx.address(), id),
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
        self.last_activity = now;
        if let Some(c) = &msg.client_id {
            if self.sessions.touch(c, &msg.user_id, "", now) {
                self.presence_changed();
            }
        }
        self.settle();
        let (head, lease) = (self.durable_seq, self.lease_seq);
        if head > msg.since || lease != msg.lease_seq {
            return Ok(Changes::Now {
                head_seq: head,
                lease_seq: lease,
            });
        }
        Ok(Changes::Later {
            head_seq: head,
            lease_seq: lease,
            rx: self.waiters.add(msg.since, msg.lease_seq),
        })
    }
}

impl Handler<AccessChanged> for DocumentActor {
    type Result = ();

    fn handle(&mut self, msg: AccessChanged, ctx: &mut Context<Self>) {
        self.recheck.asked = false;
        if msg.shares {
            // `shared` may have flipped: everyone syncs and sees the new mode.
            self.presence_changed();
            self.settle();
        }
        self.recheck_access(ctx);
    }
}
