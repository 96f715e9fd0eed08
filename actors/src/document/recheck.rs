//! At most one re-check of the document's open streams' rights at a time (the read is on
//! the pool; the actor goes on meanwhile). Asked again while one runs, it runs once more
//! when that one is done; asked from code that has no context, it is asked by message, and
//! only one such message is ever in the mailbox. Whoever changed rights may wait until a
//! re-check that read at their access epoch or later is done (`wait`): a share change's
//! answer then goes out after the leases of those who lost the right to write are gone.

use std::collections::HashMap;

use tokio::sync::oneshot;

use super::grant::Standing;
use super::subscribers::ToCheck;
use crate::storage::roles::{doc_view, Role};
use crate::storage::{Db, StorageError};

/// What a re-check read: each stream's standing, and each user's role (`None`: no access).
pub(super) type Rechecked = (Vec<(u64, Standing)>, Vec<(String, Option<Role>)>);

/// The re-check's one read: the standing of each stream (asked once per grant key: a
/// user's ten tabs cost one lookup) and the role each of `users` — lease holders and
/// present people — has on the document now (a bullet guest keeps their session and
/// leases with their subtree's role; `None`: no access at all).
pub(super) fn read_standing(
    db: &mut Db,
    doc: &str,
    streams: Vec<ToCheck>,
    users: Vec<String>,
    now: i64,
) -> Result<Rechecked, StorageError> {
    let mut standing = Vec::with_capacity(streams.len());
    let mut by_key: HashMap<String, Standing> = HashMap::new();
    for (id, grant) in streams {
        let s = match by_key.get(grant.key()) {
            Some(s) => s.clone(),
            None => {
                let s = grant.recheck(db, doc, now)?;
                by_key.insert(grant.key().to_string(), s.clone());
                s
            }
        };
        standing.push((id, s));
    }
    let mut roles = Vec::with_capacity(users.len());
    for u in users {
        let view = doc_view(db, &u, doc)?;
        roles.push((u, view.map(|v| v.grant.role)));
    }
    Ok((standing, roles))
}

#[derive(Debug, Default)]
pub(super) struct RecheckGate {
    /// A read is on its way.
    running: bool,
    /// Asked for again while running: once more when it is done.
    again: bool,
    /// A message asking for one is in the mailbox.
    asked: bool,
    /// Told when a re-check that read at this access epoch or later is done.
    waiting: Vec<(u64, oneshot::Sender<()>)>,
}

impl RecheckGate {
    /// A re-check is wanted now: true when it may start (then call `started` if it does);
    /// false when one runs, which will run again after.
    pub(super) fn may_start(&mut self) -> bool {
        if self.running {
            self.again = true;
        }
        !self.running
    }

    pub(super) fn started(&mut self) {
        self.running = true;
    }

    /// The read is done; true when it must run once more.
    pub(super) fn finished(&mut self) -> bool {
        self.running = false;
        std::mem::take(&mut self.again)
    }

    /// The read failed: the tick retries (streams meanwhile hear nothing). Those waiting
    /// are answered anyway: nobody waits on a retry that may be far away.
    pub(super) fn failed(&mut self) {
        self.running = false;
        self.again = false;
        for (_, tx) in self.waiting.drain(..) {
            let _ = tx.send(());
        }
    }

    /// Resolves once a re-check that read at `epoch` or later is done.
    pub(super) fn wait(&mut self, epoch: u64) -> oneshot::Receiver<()> {
        let (tx, rx) = oneshot::channel();
        self.waiting.push((epoch, tx));
        rx
    }

    /// Everything up to `epoch` is re-checked (a read at it is done, or there was nothing to
    /// check): those waiting for it are told.
    pub(super) fn confirmed(&mut self, epoch: u64) {
        let (done, rest): (Vec<_>, Vec<_>) = self.waiting.drain(..).partition(|(e, _)| *e <= epoch);
        self.waiting = rest;
        for (_, tx) in done {
            let _ = tx.send(());
        }
    }

    /// A re-check is wanted where no context is at hand: true when a message asking for
    /// one should be sent now.
    pub(super) fn ask_by_message(&mut self) -> bool {
        if self.running {
            self.again = true;
            return false;
        }
        !std::mem::replace(&mut self.asked, true)
    }

    /// The message asking for a re-check arrived.
    pub(super) fn message_arrived(&mut self) {
        self.asked = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_read_at_a_time_and_once_more_when_asked_meanwhile() {
        let mut g = RecheckGate::default();
        assert!(g.may_start());
        g.started();
        assert!(!g.may_start());
        assert!(
            !g.ask_by_message(),
            "running: no message, it runs again after"
        );
        assert!(g.finished(), "asked meanwhile: once more");
        assert!(!g.finished());
        assert!(g.ask_by_message());
        assert!(!g.ask_by_message(), "one message in the mailbox at most");
        g.message_arrived();
        assert!(g.ask_by_message());
    }

    #[test]
    fn a_wait_ends_with_a_recheck_at_its_epoch_or_a_failure() {
        let mut g = RecheckGate::default();
        let mut at5 = g.wait(5);
        let mut at7 = g.wait(7);
        g.confirmed(6);
        assert!(at5.try_recv().is_ok());
        assert!(
            at7.try_recv().is_err(),
            "read before its epoch: still waiting"
        );
        g.confirmed(7);
        assert!(at7.try_recv().is_ok());
        let mut later = g.wait(9);
        g.failed();
        assert!(
            later.try_recv().is_ok(),
            "a failed read answers those waiting"
        );
    }
}
