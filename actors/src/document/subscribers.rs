//! The document's open streams (WebSocket rooms, SSE): who listens, for which tab, what of
//! the document they see, and whether they may be sent log entries. Owned by the actor;
//! nothing else reaches inside.
//!
//! A bullet guest's stream (PROTOCOL §10) hears only changes that concern its view — the
//! actor decides which — and never the log's entries (they would name what lies outside):
//! at most its own view's entry, which the actor builds from its view alone.

use std::collections::HashMap;
use std::sync::Arc;

use crate::collab::validate::{ClientId, DocId};
use crate::storage::roles::{BulletRoot, Reach};

use super::grant::{Confirmed, Revoked, Standing, StreamGrant};
use super::messages::{Channel, DocEvent, EventSink, Wake};

struct Subscriber {
    channel: Channel,
    client: Option<ClientId>,
    user_id: String,
    sink: EventSink,
    /// What opened the stream, asked again whenever `confirmed` stops holding.
    grant: Arc<dyn StreamGrant>,
    /// Rights confirmed at an access epoch: wake-ups (and their entries) go only to
    /// subscribers whose confirmation holds at the current epoch and time.
    confirmed: Confirmed,
    /// A wake-up was held back while the rights were unconfirmed: once confirmed, the
    /// subscriber hears the newest head (without entries; it pulls the gap).
    behind: bool,
    /// What of the document the stream's user sees, as last confirmed.
    reach: Reach,
    /// Its tab said `leave`: the stream, about to close, no longer keeps the tab present
    /// (else the next tick would bring back the session `leave` just ended, and with it
    /// the full flow for the tab left alone, until the session's TTL).
    left: bool,
}

/// What a bullet guest's stream hears of one change.
pub(super) enum GuestWake {
    /// Nothing: the change does not touch its view.
    Quiet,
    /// A wake-up without entries (it pulls).
    Plain,
    /// A wake-up with its view's entry (a JSON array of one), continuing cursor `since`.
    View {
        since: i64,
        entries: Arc<serde_json::value::RawValue>,
    },
}

/// One stream to re-check: its ID and what opened it.
pub(super) type ToCheck = (u64, Arc<dyn StreamGrant>);

#[derive(Default)]
pub(super) struct Subscribers {
    by_id: HashMap<u64, Subscriber>,
    next_id: u64,
}

/// A stream as it subscribes: its kind, its tab and user, where its events go, what
/// opened it and what of the document that lets it see.
pub(crate) struct Opened {
    pub(super) channel: Channel,
    pub(super) client: Option<ClientId>,
    pub(super) user_id: String,
    pub(super) sink: EventSink,
    pub(super) grant: Arc<dyn StreamGrant>,
    pub(super) reach: Reach,
}

impl Subscribers {
    /// Adds a subscriber whose rights were confirmed as `confirmed`; returns its ID.
    pub(super) fn add(&mut self, opened: Opened, confirmed: Confirmed) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        let Opened {
            channel,
            client,
            user_id,
            sink,
            grant,
            reach,
        } = opened;
        let s = Subscriber {
            channel,
            client,
            user_id,
            sink,
            grant,
            confirmed,
            behind: false,
            reach,
            left: false,
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

    /// `(clientId, userId)` of every tab with an open stream (they count as present),
    /// unless the tab left since the stream opened.
    pub(super) fn present(&self) -> Vec<(ClientId, String)> {
        self.by_id
            .values()
            .filter(|s| !s.left)
            .filter_map(|s| s.client.clone().map(|c| (c, s.user_id.clone())))
            .collect()
    }

    /// The tab `client` said `leave`: its streams open now stop counting it present (a
    /// stream it opens later, after a reload, counts again).
    pub(super) fn left(&mut self, client: &ClientId) {
        for s in self.by_id.values_mut() {
            if s.client.as_ref() == Some(client) {
                s.left = true;
            }
        }
    }

    /// Sends one change to every subscriber whose rights hold at `epoch` and `now`; a
    /// bullet guest's stream only what `guest(its tab, its roots)` says — nothing when the
    /// change does not touch its view, else a wake-up with its own view entry or none (never
    /// the log's entries). The others hear nothing until they are re-checked (`settle`);
    /// returns whether there are any.
    pub(super) fn announce(
        &mut self,
        wake: Wake,
        epoch: u64,
        now: i64,
        mut guest: impl FnMut(Option<&ClientId>, &[BulletRoot]) -> GuestWake,
    ) -> bool {
        let plain = Arc::new(Wake {
            entries: None,
            ..wake.clone()
        });
        let wake = Arc::new(wake);
        let mut stale = false;
        self.by_id.retain(|_, s| {
            if !s.confirmed.holds(epoch, now) {
                s.behind = true;
                stale = true;
                return !s.sink.is_closed();
            }
            match &s.reach {
                Reach::Document => s.sink.unbounded_send(DocEvent::Seq(wake.clone())).is_ok(),
                Reach::Bullets(roots) => match guest(s.client.as_ref(), roots) {
                    GuestWake::Quiet => !s.sink.is_closed(),
                    GuestWake::Plain => s.sink.unbounded_send(DocEvent::Seq(plain.clone())).is_ok(),
                    GuestWake::View { since, entries } => {
                        let own = Wake {
                            entries: Some(entries),
                            since: Some(since),
                            ..(*plain).clone()
                        };
                        s.sink.unbounded_send(DocEvent::Seq(Arc::new(own))).is_ok()
                    }
                },
            }
        });
        stale
    }

    /// The streams whose rights no longer hold at `epoch` and `now`.
    pub(super) fn stale(&self, epoch: u64, now: i64) -> Vec<ToCheck> {
        self.by_id
            .iter()
            .filter(|(_, s)| !s.confirmed.holds(epoch, now))
            .map(|(id, s)| (*id, s.grant.clone()))
            .collect()
    }

    /// The outcome of re-checking streams on a read begun at access epoch `checked_at`:
    /// those that lost their credential or access hear `Revoked` and are dropped; the others
    /// are confirmed at `checked_at`, and those that missed a wake-up meanwhile get
    /// `latest` — if `checked_at` is still the `current` epoch (otherwise they wait for
    /// the next check). Returns the users whose streams were ended.
    pub(super) fn settle(
        &mut self,
        checked_at: u64,
        current: u64,
        results: Vec<(u64, Standing)>,
        latest: &Wake,
    ) -> Vec<String> {
        let latest = Arc::new(latest.clone());
        let mut ended = Vec::new();
        for (id, standing) in results {
            let Some(s) = self.by_id.get_mut(&id) else {
                continue;
            };
            let why = match standing {
                Standing::Reads { until, reach } => {
                    s.confirmed = Confirmed {
                        epoch: checked_at,
                        until,
                    };
                    s.reach = reach;
                    if s.behind && checked_at == current {
                        s.behind = false;
                        let _ = s.sink.unbounded_send(DocEvent::Seq(latest.clone()));
                    }
                    continue;
                }
                Standing::CredentialEnded => Revoked::CredentialEnded,
                Standing::NoAccess => Revoked::NoAccess,
            };
            let _ = s.sink.unbounded_send(DocEvent::Revoked {
                doc_id: latest.doc_id.clone(),
                why,
            });
            if let Some(s) = self.by_id.remove(&id) {
                ended.push(s.user_id);
            }
        }
        ended
    }

    /// The relay these streams listened through is over (cluster mode): each hears `Moved`
    /// and is forgotten.
    pub(super) fn moved(&mut self, doc_id: &DocId) {
        for (_, s) in self.by_id.drain() {
            let _ = s.sink.unbounded_send(DocEvent::Moved {
                doc_id: doc_id.clone(),
            });
        }
    }

    pub(super) fn count(&self, channel: Channel) -> usize {
        self.by_id.values().filter(|s| s.channel == channel).count()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collab::validate::{DocId, Limits};
    use crate::document::grant::UserGrant;
    use crate::document::tests::events;
    use serde_json::value::RawValue;

    fn wake(head: i64, entries: Option<&str>) -> Wake {
        Wake {
            doc_id: DocId::parse("doc_a").unwrap(),
            head_seq: head,
            lease_seq: 0,
            entries: entries.map(|e| RawValue::from_string(e.to_string()).unwrap().into()),
            since: None,
        }
    }

    fn add(
        subs: &mut Subscribers,
        user: &str,
        epoch: u64,
        until: Option<i64>,
    ) -> (u64, crate::document::messages::Events) {
        let (tx, rx) = crate::document::messages::event_channel();
        let grant = Arc::new(UserGrant(user.into()));
        let id = subs.add(
            Opened {
                channel: Channel::WebSocket,
                client: None,
                user_id: user.into(),
                sink: tx,
                grant,
                reach: Reach::Document,
            },
            Confirmed { epoch, until },
        );
        (id, rx)
    }

    #[test]
    fn nothing_reaches_a_stream_between_an_epoch_move_and_its_recheck() {
        let mut subs = Subscribers::default();
        let (a, mut rx_a) = add(&mut subs, "usr_a", 1, None);
        let (b, mut rx_b) = add(&mut subs, "usr_b", 1, None);
        assert!(!subs.announce(wake(1, Some("[1]")), 1, 0, |_, _| GuestWake::Plain));
        // The epoch moved: nobody hears anything until re-checked.
        assert!(subs.announce(wake(2, Some("[2]")), 2, 0, |_, _| GuestWake::Plain));
        assert_eq!(subs.stale(2, 0).len(), 2);
        // A check begun at epoch 2 while the epoch moved on to 3 confirms, but sends nothing.
        subs.settle(
            2,
            3,
            vec![(
                a,
                Standing::Reads {
                    until: None,
                    reach: Reach::Document,
                },
            )],
            &wake(2, None),
        );
        assert!(subs.announce(wake(3, Some("[3]")), 3, 0, |_, _| GuestWake::Plain));
        let ended = subs.settle(
            3,
            3,
            vec![
                (
                    a,
                    Standing::Reads {
                        until: None,
                        reach: Reach::Document,
                    },
                ),
                (b, Standing::NoAccess),
            ],
            &wake(3, None),
        );
        assert_eq!(ended, ["usr_b"]);
        subs.announce(wake(4, Some("[4]")), 3, 0, |_, _| GuestWake::Plain);
        assert_eq!(events(&mut rx_a), ["1:[1]", "3:-", "4:[4]"]);
        assert_eq!(events(&mut rx_b), ["1:[1]", "revoked:NoAccess"]);
    }

    #[test]
    fn a_session_that_ended_by_the_clock_hears_nothing() {
        let mut subs = Subscribers::default();
        let (_, mut rx) = add(&mut subs, "usr_a", 1, Some(1_000));
        subs.announce(wake(1, Some("[1]")), 1, 999, |_, _| GuestWake::Plain);
        assert!(subs.announce(wake(2, Some("[2]")), 1, 1_000, |_, _| GuestWake::Plain));
        assert_eq!(subs.stale(1, 1_000).len(), 1);
        assert_eq!(events(&mut rx), ["1:[1]"]);
    }

    #[test]
    fn closed_streams_are_pruned() {
        let mut subs = Subscribers::default();
        let (tx, rx) = crate::document::messages::event_channel();
        let grant = Arc::new(UserGrant("usr_a".into()));
        let confirmed = Confirmed {
            epoch: 0,
            until: None,
        };
        subs.add(
            Opened {
                channel: Channel::Sse,
                client: Some(ClientId::parse("cl_1", &Limits::default()).unwrap()),
                user_id: "usr_a".into(),
                sink: tx,
                grant,
                reach: Reach::Document,
            },
            confirmed,
        );
        assert_eq!(subs.present().len(), 1);
        drop(rx);
        subs.prune_closed();
        assert!(subs.is_empty());
    }

    #[test]
    fn a_tab_that_left_is_not_kept_present_by_its_stream_until_it_opens_a_new_one() {
        let mut subs = Subscribers::default();
        let limits = Limits::default();
        let open = |subs: &mut Subscribers, client: &str| {
            let (tx, rx) = crate::document::messages::event_channel();
            subs.add(
                Opened {
                    channel: Channel::WebSocket,
                    client: Some(ClientId::parse(client, &Limits::default()).unwrap()),
                    user_id: "usr_a".into(),
                    sink: tx,
                    grant: Arc::new(UserGrant("usr_a".into())),
                    reach: Reach::Document,
                },
                Confirmed {
                    epoch: 0,
                    until: None,
                },
            );
            rx
        };
        let _one = open(&mut subs, "cl_1");
        let _two = open(&mut subs, "cl_2");
        let clients = |subs: &Subscribers| {
            let mut c: Vec<String> = subs
                .present()
                .into_iter()
                .map(|(c, _)| c.as_str().to_string())
                .collect();
            c.sort();
            c
        };
        assert_eq!(clients(&subs), ["cl_1", "cl_2"]);
        subs.left(&ClientId::parse("cl_2", &limits).unwrap());
        assert_eq!(clients(&subs), ["cl_1"]);
        // the same tab reloaded: its new stream counts
        let _again = open(&mut subs, "cl_2");
        assert_eq!(clients(&subs), ["cl_1", "cl_2"]);
    }
}
