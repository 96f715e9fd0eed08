//! The relay of a document another node owns (`relayed.rs`), on a real (temporary)
//! database, driven by messages as its upstream would: who hears the owner's changes, the
//! re-check at the owner's access epoch, and the end of the relay.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::messages::Events;
use actix::prelude::*;
use serde_json::value::RawValue;

use crate::clock::ManualClock;
use crate::collab::validate::DocId;
use crate::document::grant::{Confirmed, Revoked, UserGrant};
use crate::metrics::Metrics;
use crate::storage::sharing::{self, Access, Share, ShareKind};
use crate::storage::{accounts, Db};

use super::tests::{events as heard, fixture};
use super::*;

fn wake(head: i64, entries: Option<&str>) -> Wake {
    Wake {
        doc_id: DocId::parse("doc_t").unwrap(),
        head_seq: head,
        lease_seq: 0,
        entries: entries.map(|e| Arc::from(RawValue::from_string(e.to_string()).unwrap())),
        since: None,
    }
}

/// Reads `rx` until `want` was heard last (bounded), returning all it heard.
async fn until_heard(rx: &mut Events, want: &str) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut all = Vec::new();
    loop {
        all.extend(heard(rx));
        if all.last().map(String::as_str) == Some(want) {
            return all;
        }
        assert!(
            Instant::now() < deadline,
            "never heard {want}; heard {all:?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[actix::test]
async fn a_relay_tells_readers_rechecked_at_the_owners_epoch_answers_long_polls_and_ends_with_its_upstream(
) {
    let f = fixture();
    let (doc, owner) = (f.doc_id.clone(), f.user.id.clone());
    let (bob, carol) = f
        .storage
        .write(move |c| {
            let bob = accounts::create_user(c, "bob", "Bob", false, 0)?;
            let carol = accounts::create_user(c, "carol", "Carol", false, 0)?;
            let shares: Vec<Share> = [&bob, &carol]
                .iter()
                .map(|u| Share {
                    kind: ShareKind::User,
                    id: u.id.clone(),
                    access: Access::Read,
                })
                .collect();
            sharing::set_doc_shares(c, &doc, &owner, &shares)?;
            Ok((bob, carol))
        })
        .await
        .unwrap();
    let (end_upstream, upstream_ends) = tokio::sync::oneshot::channel::<()>();
    let relay = RelayedDocument::new(
        DocId::parse(&f.doc_id).unwrap(),
        f.storage.clone(),
        ManualClock::new(1_000_000),
        Arc::new(Metrics::new()),
        move |_me| {
            Box::pin(async move {
                let _ = upstream_ends.await;
            })
        },
    )
    .start();
    let subscribe = |user: &accounts::User| {
        let (sink, rx) = super::messages::event_channel();
        let msg = Subscribe {
            channel: Channel::WebSocket,
            client: None,
            user_id: user.id.clone(),
            sink,
            grant: Arc::new(UserGrant(user.id.clone())),
            confirmed: Confirmed {
                epoch: f.storage.access_epoch().current(),
                until: None,
            },
            reach: crate::storage::roles::Reach::Document,
        };
        (relay.send(msg), rx)
    };
    let (sub_bob, mut rx_bob) = subscribe(&bob);
    let (sub_carol, mut rx_carol) = subscribe(&carol);
    let (_sub_bob, _sub_carol) = (sub_bob.await.unwrap(), sub_carol.await.unwrap());

    // The owner's change at the epoch this node knows: both hear it, entries and all.
    let epoch = f.storage.access_epoch().current();
    relay.do_send(Heard {
        wake: wake(2, Some("[2]")),
        epoch,
    });
    assert_eq!(until_heard(&mut rx_bob, "2:[2]").await, ["2:[2]"]);
    assert_eq!(until_heard(&mut rx_carol, "2:[2]").await, ["2:[2]"]);

    // Carol's share is removed by another node: this node has not heard of it yet (the
    // change is made beside its storage, so its epoch stays), but the owner's next change
    // comes with the epoch after it. Carol is re-checked first and never hears it.
    let path = f._dir.path().join("t.db");
    let (doc, owner, bob_id) = (f.doc_id.clone(), f.user.id.clone(), bob.id.clone());
    let moved_to = tokio::task::spawn_blocking(move || {
        let conn = rusqlite::Connection::open(path).unwrap();
        let only_bob = [Share {
            kind: ShareKind::User,
            id: bob_id,
            access: Access::Read,
        }];
        sharing::set_doc_shares(&mut Db::Sqlite(&conn), &doc, &owner, &only_bob).unwrap();
        crate::storage::access_epoch::read(&conn).unwrap()
    })
    .await
    .unwrap();
    assert!(moved_to > epoch);
    assert_eq!(
        f.storage.access_epoch().current(),
        epoch,
        "not seen here yet"
    );
    relay.do_send(Heard {
        wake: wake(3, Some("[3]")),
        epoch: moved_to,
    });
    let carol_heard = until_heard(&mut rx_carol, "revoked:NoAccess").await;
    assert_eq!(carol_heard, [format!("revoked:{:?}", Revoked::NoAccess)]);
    // Bob was re-checked too before hearing it: the newest head, without the entries
    // (they were sent while his rights were unconfirmed; he pulls).
    assert_eq!(until_heard(&mut rx_bob, "3:-").await, ["3:-"]);

    // A stream subscribing now is told the newest head at once.
    let (sub_late, mut rx_late) = subscribe(&bob);
    let _sub_late = sub_late.await.unwrap().unwrap();
    assert_eq!(until_heard(&mut rx_late, "3:-").await, ["3:-"]);

    // A long-poll: answered at once when it is behind the owner's newest head, else by the
    // owner's next change.
    let wait = |since| WaitChanges {
        since,
        lease_seq: 0,
        client: None,
        user_id: bob.id.clone(),
        reach: crate::storage::roles::Reach::Document,
    };
    match relay.send(wait(2)).await.unwrap().unwrap() {
        Changes::Now { head_seq, .. } => assert_eq!(head_seq, 3),
        Changes::Later { .. } => panic!("behind the owner: answered at once"),
    }
    let Changes::Later { rx, .. } = relay.send(wait(3)).await.unwrap().unwrap() else {
        panic!("up to date: it waits");
    };
    relay.do_send(Heard {
        wake: wake(4, None),
        epoch: moved_to,
    });
    assert_eq!(rx.await.unwrap(), (4, 0));
    let Changes::Later {
        rx: left_waiting, ..
    } = relay.send(wait(4)).await.unwrap().unwrap()
    else {
        panic!("up to date: it waits");
    };

    // The upstream ends (the document is served here now, or gone): every stream hears
    // `moved`, a waiting long-poll is let go (its handler answers what it had), and the
    // relay stops.
    end_upstream.send(()).unwrap();
    assert_eq!(until_heard(&mut rx_bob, "moved").await, ["4:-", "moved"]);
    assert_eq!(until_heard(&mut rx_late, "moved").await, ["4:-", "moved"]);
    assert!(left_waiting.await.is_err());
    let deadline = Instant::now() + Duration::from_secs(10);
    while relay.connected() {
        assert!(Instant::now() < deadline, "the relay did not stop");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert!(heard(&mut rx_carol).is_empty(), "nothing after her end");
}
