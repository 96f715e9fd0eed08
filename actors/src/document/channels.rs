//! Wake-up channels as the document sees them: subscribers (WebSocket, SSE) get every
//! headSeq/leaseSeq change, long-poll waiters are answered once their condition holds, and
//! share changes make channels re-check access and drop leases of users who lost rights.

use actix::prelude::*;

use super::actor::DocumentActor;
use super::messages::*;

pub(super) struct Subscriber {
    pub(super) channel: Channel,
    pub(super) client_id: Option<String>,
    pub(super) user_id: String,
    pub(super) sink: tokio::sync::mpsc::UnboundedSender<DocEvent>,
}

pub(super) struct Waiter {
    pub(super) since: i64,
    pub(super) lease_seq: u64,
    pub(super) reply: tokio::sync::oneshot::Sender<(i64, u64)>,
}

impl DocumentActor {
    /// Tells every wake-up channel that headSeq or leaseSeq moved, and answers the
    /// long-polls whose condition now holds. Closed channels are dropped here.
    pub(super) fn wake(&mut self) {
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

    pub(super) fn count_channel(&self, channel: Channel) -> usize {
        self.subscribers
            .values()
            .filter(|s| s.channel == channel)
            .count()
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
