//! Long-poll waiters of one document: each is a oneshot answered once the document passes
//! the head it has seen or its lease/presence state differs — or, for a bullet guest, once
//! a change touches their view (the actor decides which). Owned by the actor.
//!
//! A waiter whose HTTP request went away (the client vanished and the handler dropped the
//! receiver) must not stay registered until its document happens to change: the actor
//! prunes closed waiters on every tick as well as on every wake-up.

use std::sync::Arc;

use tokio::sync::oneshot;

use crate::collab::validate::ClientId;
use crate::storage::roles::BulletRoot;

struct Waiter {
    since: i64,
    lease_seq: u64,
    /// A bullet guest's tab and roots: answered only for a change that concerns them.
    guest: Option<(Option<ClientId>, Arc<[BulletRoot]>)>,
    reply: oneshot::Sender<(i64, u64)>,
}

#[derive(Default)]
pub(crate) struct Waiters {
    list: Vec<Waiter>,
}

impl Waiters {
    /// Registers a waiter; the receiver fires with `(headSeq, leaseSeq)` on the first change
    /// past `since`/`lease_seq`.
    pub(super) fn add(&mut self, since: i64, lease_seq: u64) -> oneshot::Receiver<(i64, u64)> {
        self.push(since, lease_seq, None)
    }

    /// Registers a bullet guest's waiter: answered by the first change `concerns` says
    /// touches the view of `client` with `roots` (see `answer`).
    pub(super) fn add_guest(
        &mut self,
        client: Option<ClientId>,
        roots: Arc<[BulletRoot]>,
    ) -> oneshot::Receiver<(i64, u64)> {
        self.push(i64::MAX, 0, Some((client, roots)))
    }

    fn push(
        &mut self,
        since: i64,
        lease_seq: u64,
        guest: Option<(Option<ClientId>, Arc<[BulletRoot]>)>,
    ) -> oneshot::Receiver<(i64, u64)> {
        let (reply, rx) = oneshot::channel();
        self.list.push(Waiter {
            since,
            lease_seq,
            guest,
            reply,
        });
        rx
    }

    /// Answers every waiter whose condition now holds (a guest's: `concerns` of its tab and
    /// roots); keeps the others that still listen.
    pub(super) fn answer(
        &mut self,
        head: i64,
        lease: u64,
        concerns: impl Fn(Option<&ClientId>, &[BulletRoot]) -> bool,
    ) {
        self.list.retain_mut(|w| {
            let due = match &w.guest {
                None => head > w.since || lease != w.lease_seq,
                Some((client, roots)) => concerns(client.as_ref(), roots),
            };
            if due {
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
        w.answer(5, 7, |_, _| false);
        assert_eq!(behind.try_recv(), Ok((5, 7)));
        assert!(current.try_recv().is_err());
        assert_eq!(w.len(), 1);
        w.answer(5, 8, |_, _| false);
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
