//! The document's open streams (WebSocket rooms, SSE): who listens, for which tab, and
//! whether they may be sent log entries. Owned by the actor; nothing else reaches inside.

use std::collections::HashMap;
use std::sync::Arc;

use actix::Addr;
use tokio::sync::mpsc::UnboundedSender;

use super::actor::DocumentActor;
use super::messages::{Channel, DocEvent, Unsubscribe, Wake};

struct Subscriber {
    channel: Channel,
    client_id: Option<String>,
    user_id: String,
    sink: UnboundedSender<DocEvent>,
    /// False from a share change until the actor has re-read this user's role: a subscriber
    /// that may have lost read access hears that something moved, but never what.
    may_read: bool,
}

#[derive(Default)]
pub(super) struct Subscribers {
    by_id: HashMap<u64, Subscriber>,
    next_id: u64,
    /// Counts share changes, so a role check that a newer change overtook confirms nothing.
    access_changes: u64,
}

impl Subscribers {
    /// Adds a subscriber and returns its ID.
    pub(super) fn add(
        &mut self,
        channel: Channel,
        client_id: Option<String>,
        user_id: String,
        sink: UnboundedSender<DocEvent>,
    ) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        let s = Subscriber {
            channel,
            client_id,
            user_id,
            sink,
            may_read: true,
        };
        self.by_id.insert(id, s);
        id
    }

    pub(super) fn remove(&mut self, id: u64) {
        self.by_id.remove(&id);
    }

    /// Forgets streams whose other end is gone.
    pub(super) fn prune_closed(&mut self) {
        self.by_id.retain(|_, s| !s.sink.is_closed());
    }

    /// `(clientId, userId)` of every tab with an open stream (they count as present).
    pub(super) fn present(&self) -> Vec<(String, String)> {
        self.by_id
            .values()
            .filter_map(|s| s.client_id.clone().map(|c| (c, s.user_id.clone())))
            .collect()
    }

    /// Sends one change to everyone. `wake.entries` goes only to subscribers known to
    /// still read the document; the others get the same wake-up without them.
    pub(super) fn announce(&mut self, wake: Wake) {
        let with = Arc::new(wake);
        let without = if with.entries.is_some() {
            Arc::new(Wake {
                entries: None,
                ..(*with).clone()
            })
        } else {
            with.clone()
        };
        self.by_id.retain(|_, s| {
            let w = if s.may_read { &with } else { &without };
            s.sink.send(DocEvent::Seq(w.clone())).is_ok()
        });
    }

    /// Shares changed: every stream re-checks access, and until the actor confirms a user
    /// still reads the document (`confirm_readers` with the returned number) no entries go
    /// to them.
    pub(super) fn access_changed(&mut self, doc_id: &str) -> u64 {
        self.access_changes += 1;
        let event = DocEvent::AccessChanged {
            doc_id: doc_id.to_string(),
        };
        self.by_id.retain(|_, s| {
            s.may_read = false;
            s.sink.send(event.clone()).is_ok()
        });
        self.access_changes
    }

    /// Users behind the streams.
    pub(super) fn users(&self) -> impl Iterator<Item = &str> {
        self.by_id.values().map(|s| s.user_id.as_str())
    }

    /// After share change number `change`: `readers` still read the document and get
    /// entries again — unless shares changed once more since that role check began.
    pub(super) fn confirm_readers(&mut self, change: u64, readers: &[String]) {
        if change != self.access_changes {
            return;
        }
        for s in self.by_id.values_mut() {
            if readers.contains(&s.user_id) {
                s.may_read = true;
            }
        }
    }

    pub(super) fn count(&self, channel: Channel) -> usize {
        self.by_id.values().filter(|s| s.channel == channel).count()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

/// A registered stream. Dropping it (the socket or stream went away) unsubscribes; the
/// actor's address stays inside, so no handler ever holds one.
pub struct Subscription {
    addr: Addr<DocumentActor>,
    id: u64,
}

impl Subscription {
    pub(super) fn new(addr: Addr<DocumentActor>, id: u64) -> Subscription {
        Subscription { addr, id }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.addr.do_send(Unsubscribe { id: self.id });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::value::RawValue;

    fn wake(entries: Option<&str>) -> Wake {
        Wake {
            doc_id: "doc_a".into(),
            head_seq: 2,
            lease_seq: 0,
            entries: entries.map(|e| RawValue::from_string(e.to_string()).unwrap().into()),
        }
    }

    fn entries_of(rx: &mut tokio::sync::mpsc::UnboundedReceiver<DocEvent>) -> Vec<Option<String>> {
        let mut out = Vec::new();
        while let Ok(ev) = rx.try_recv() {
            if let DocEvent::Seq(w) = ev {
                out.push(w.entries_json().map(str::to_string));
            }
        }
        out
    }

    #[test]
    fn entries_are_withheld_between_a_share_change_and_the_role_check() {
        let mut subs = Subscribers::default();
        let (tx_a, mut rx_a) = tokio::sync::mpsc::unbounded_channel();
        let (tx_b, mut rx_b) = tokio::sync::mpsc::unbounded_channel();
        subs.add(Channel::WebSocket, None, "usr_a".into(), tx_a);
        subs.add(Channel::Sse, None, "usr_b".into(), tx_b);
        subs.announce(wake(Some("[1]")));
        let first = subs.access_changed("doc_a");
        subs.announce(wake(Some("[2]")));
        let second = subs.access_changed("doc_a");
        // A check that began before the second change confirms nothing.
        subs.confirm_readers(first, &["usr_a".to_string(), "usr_b".to_string()]);
        subs.announce(wake(Some("[4]")));
        // Only usr_a's role was confirmed: usr_b lost read access.
        subs.confirm_readers(second, &["usr_a".to_string()]);
        subs.announce(wake(Some("[3]")));
        assert_eq!(
            entries_of(&mut rx_a),
            [Some("[1]".into()), None, None, Some("[3]".into())]
        );
        assert_eq!(
            entries_of(&mut rx_b),
            [Some("[1]".into()), None, None, None]
        );
    }

    #[test]
    fn closed_streams_are_pruned() {
        let mut subs = Subscribers::default();
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        subs.add(Channel::Sse, Some("cl_1".into()), "usr_a".into(), tx);
        assert_eq!(subs.present().len(), 1);
        drop(rx);
        subs.prune_closed();
        assert!(subs.is_empty());
    }
}
