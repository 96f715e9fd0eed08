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
        self.subscribers.announce(Wake {
            doc_id: self.doc_id.clone(),
            head_seq: head,
            lease_seq: lease,
            entries,
        });
        self.waiters.answer(head, lease);
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
            if self.sessions.touch(c, &msg.user_id, now) {
                self.presence_changed();
            }
        }
        self.settle();
        let id = self
            .subscribers
            .add(msg.channel, msg.client_id, msg.user_id, msg.sink);
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
            if self.sessions.touch(c, &msg.user_id, now) {
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

    fn handle(&mut self, _msg: AccessChanged, ctx: &mut Context<Self>) {
        let change = self.subscribers.access_changed(&self.doc_id);
        // `shared` may have flipped: everyone syncs and sees the new mode.
        self.presence_changed();
        self.settle();
        // Someone who lost write access must not keep blocking editors with leases, someone
        // who lost read access is no longer present, and streams get log entries again only
        // once their user is known to still read the document.
        let mut users: Vec<String> = self
            .leases
            .holders()
            .into_iter()
            .chain(self.sessions.users())
            .chain(self.subscribers.users().map(str::to_string))
            .collect();
        users.sort();
        users.dedup();
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
            actix::fut::wrap_future::<_, Self>(check).map(move |res, act, _ctx| {
                let Ok(roles) = res else { return };
                let mut changed = false;
                let mut readers = Vec::new();
                for (user, role) in roles {
                    if !role.is_some_and(|r| r.can_write()) {
                        changed |= act.leases.release_user(&user);
                    }
                    if role.is_none() {
                        changed |= act.sessions.remove_user(&user);
                    } else {
                        readers.push(user);
                    }
                }
                act.subscribers.confirm_readers(change, &readers);
                if changed {
                    act.presence_changed();
                    act.settle();
                }
            }),
        );
    }
}
