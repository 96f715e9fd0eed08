//! Membership on a real PostgreSQL: a node joins; the database goes away and the node fences
//! itself before its TTL could have run out on the database's side; the database comes
//! back and the node joins as a new incarnation; leaving ends the incarnation at once.

use std::time::{Duration, Instant};

use actix::prelude::*;
use tokio::sync::mpsc;

use super::*;
use crate::storage::postgres::testing::TempPostgres;
use crate::storage::postgres::{self, migrate};

struct Listener(mpsc::UnboundedSender<(Instant, MembershipEvent)>);

impl Actor for Listener {
    type Context = Context<Self>;
}

impl Handler<MembershipEvent> for Listener {
    type Result = ();

    fn handle(&mut self, e: MembershipEvent, _: &mut Context<Self>) {
        let _ = self.0.send((Instant::now(), e));
    }
}

/// Runs blocking database code off the test's runtime.
fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::spawn(f).join().expect("blocking call")
}

async fn next(
    rx: &mut mpsc::UnboundedReceiver<(Instant, MembershipEvent)>,
) -> (Instant, MembershipEvent) {
    tokio::time::timeout(Duration::from_secs(30), rx.recv())
        .await
        .expect("a membership event within 30 s")
        .expect("listener alive")
}

#[actix::test]
async fn a_node_that_cannot_renew_fences_itself_and_rejoins_as_a_new_incarnation() {
    let pg = std::sync::Arc::new(blocking(TempPostgres::start));
    let url = pg.url();
    let live = move || {
        let url = url.clone();
        blocking(move || {
            let mut c = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
            crate::storage::cluster::membership::live(&mut c).unwrap()
        })
    };
    let p = pg.clone();
    blocking(move || migrate::apply(&mut p.client()).unwrap());
    let pool = postgres::pool(&pg.url(), 2).unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let listener = Listener(tx).start();
    // Fencing at TTL − 3 s leaves 3 s of slack before the TTL for a busy test machine.
    let ttl = Duration::from_secs(6);
    let cfg = MembershipConfig {
        node_id: "node-a".into(),
        internal_addr: "127.0.0.1:9001".into(),
        ttl,
        renew_every: Duration::from_millis(100),
        margin: Duration::from_secs(3),
    };
    let member = Membership::new(pool, cfg, listener.recipient()).start();
    let (_, joined) = next(&mut rx).await;
    let MembershipEvent::Joined(first) = joined else {
        panic!("expected Joined, got {joined:?}")
    };
    assert_eq!(live(), vec![first.clone()]);

    // The database goes away: renewals fail, and the node fences itself while the database
    // (had it stayed up) would still count it alive — the last renewal began before the stop,
    // so its expiry on the database's clock is after `stopped + ttl`.
    let stopped = Instant::now();
    let p = pg.clone();
    blocking(move || p.stop());
    let (at, fenced) = next(&mut rx).await;
    assert_eq!(fenced, MembershipEvent::Fenced(first.clone()));
    assert!(
        at < stopped + ttl,
        "fenced {:?} after the stop: past the TTL",
        at - stopped
    );

    // Back: the fenced incarnation is marked so (its row had not expired yet) and a new one
    // joins; the old one can never renew.
    let p = pg.clone();
    blocking(move || p.start_again());
    let (_, rejoined) = next(&mut rx).await;
    let MembershipEvent::Joined(second) = rejoined else {
        panic!("expected Joined, got {rejoined:?}")
    };
    assert_ne!(second.inc, first.inc);
    let (p, old) = (pg.clone(), first.clone());
    assert!(!blocking(move || {
        crate::storage::cluster::membership::renew(&mut p.client(), &old, ttl).unwrap()
    }));

    member.send(Leave).await.unwrap();
    assert!(live().is_empty());
}
