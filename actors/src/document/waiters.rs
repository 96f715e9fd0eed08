//! Long-poll waiters of one document: each is a oneshot answered once the document passes
//! the head it has seen or its lease/presence state differs. Owned by the actor.
//!
//! A waiter whose HTTP request went away (the client vanished and the handler dropped the
//! receiver) must not stay registered until its document happens to change: the actor
//! prunes closed waiters on every tick as well as on every wake-up.

use tokio::sync::oneshot;

struct Waiter {
    since: i64,
    lease_seq: u64,
    reply: oneshot::Sender<(i64, u64)>,
}

#[derive(Default)]
pub(super) struct Waiters {
    list: Vec<Waiter>,
}

impl Waiters {
    /// Registers a waiter; the receiver fires with `(headSeq, leaseSeq)` on the first change
    /// past `since`/`lease_seq`.
    pub(super) fn add(&mut self, since: i64, lease_seq: u64) -> oneshot::Receiver<(i64, u64)> {
        let (reply, rx) = oneshot::channel();
        self.list.push(Waiter {
            since,
            lease_seq,
            reply,
        });
        rx
    }

    /// Answers every waiter whose condition now holds; keeps the others that still listen.
    pub(super) fn answer(&mut self, head: i64, lease: u64) {
        self.list.retain_mut(|w| {
            if head > w.since || lease != w.lease_seq {
                // A oneshot can be sent once: take it out with a placeholder.
                let (placeholder, _) = oneshot::channel();
                let reply = std::mem::replace(&mut w.reply, placeholder);
                let _ = reply.send((head, lease));
                false
            } else {
                !w.reply.is_closed()
            }
        });
    }

    /// Forgets waiters whose receiver is gone.
    pub(super) fn prune_closed(&mut self) {
        self.list.retain(|w| !w.reply.is_closed());
    }

    pub(super) fn len(&self) -> usize {
        self.list.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_only_waiters_whose_condition_holds() {
        let mut w = Waiters::default();
        let mut behind = w.add(3, 7);
        let mut current = w.add(5, 7);
        w.answer(5, 7);
        assert_eq!(behind.try_recv(), Ok((5, 7)));
        assert!(current.try_recv().is_err());
        assert_eq!(w.len(), 1);
        w.answer(5, 8);
        assert_eq!(current.try_recv(), Ok((5, 8)));
        assert!(w.is_empty());
    }

    #[test]
    fn a_vanished_waiter_is_pruned_without_any_change() {
        let mut w = Waiters::default();
        let gone = w.add(5, 7);
        let _kept = w.add(5, 7);
        drop(gone);
        w.prune_closed();
        assert_eq!(w.len(), 1);
    }
}
