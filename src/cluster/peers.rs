//! Each node tries every other live node now and then, whether or not requests go to it:
//! a node that answers nobody (paused, or cut off by the network) is reported by each node
//! that cannot reach it (`Cluster::unreachable`), and a majority of the others evicts it —
//! within about one try's interval and a probe's patience of the fault, even when every
//! client that wrote to it is still waiting on it and no request was forwarded there.
//! Someone's suspicion or doubt (`reachability::peers` marks those `wanted`) is tried at once.
//!
//! What an unprompted try counts: silence, and an answer as no incarnation or as another one.
//! A refused or closed connection does not: nobody listens there — the process is gone (its
//! presence in the database ended with it) or it is stopping and leaves in a moment; an
//! eviction would only cut its hand-over short. A try asked for (wanted) counts every failure,
//! as the forward that prompted it did.
//!
//! The state is this watcher's own: which tries are under way, when each node was last tried.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use docsync_actors::storage::cluster::reachability::{self, Peer};
use futures::stream::FuturesUnordered;
use futures::StreamExt;

use super::hop::Heard;
use super::{probe_patience, Cluster};

/// How often each node reads the live nodes and whom someone suspects or doubts (one small
/// query). A report makes a majority only once the others tried the suspect too, so this
/// wait is part of how long a node cut from the others keeps its documents.
const LOOK_EVERY: Duration = Duration::from_millis(250);

/// How often each other live node is tried unprompted: half the probe's patience (500 ms at
/// the tests' TTL of 3 s, 833 ms at the default 5 s), at least `LOOK_EVERY`.
fn try_every(ttl: Duration) -> Duration {
    (probe_patience(ttl) / 2).max(LOOK_EVERY)
}

/// Runs until the cluster is dropped (started by the server beside `Cluster::start`).
pub async fn watch_peers(cluster: Weak<Cluster>) {
    let mut tick = tokio::time::interval(LOOK_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let news = cluster
        .upgrade()
        .and_then(|c| c.storage.node_news().cloned());
    let mut heard = news.as_ref().map(|n| n.changes());
    let mut tried_at: HashMap<String, Instant> = HashMap::new();
    let mut trying: HashSet<String> = HashSet::new();
    let mut tries = FuturesUnordered::new();
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            closed = async { heard.as_mut().expect("guarded").changed().await }, if heard.is_some() => {
                if closed.is_err() {
                    heard = None;
                }
            }
            Some(done) = tries.next(), if !tries.is_empty() => {
                trying.remove(&done);
                continue;
            }
        }
        let Some(cluster) = cluster.upgrade() else {
            return;
        };
        let Some(me) = cluster.this_node.current() else {
            continue;
        };
        let doubted = news.as_ref().map(|n| n.take_doubted()).unwrap_or_default();
        let ttl = cluster.ttl;
        let Ok(peers) = cluster
            .storage
            .read(move |db| reachability::peers(db, &me, ttl, &doubted))
            .await
        else {
            continue;
        };
        tried_at.retain(|inc, _| peers.iter().any(|p| &p.member.inc == inc));
        let now = Instant::now();
        for peer in peers {
            let inc = peer.member.inc.clone();
            let due = peer.wanted
                || tried_at
                    .get(&inc)
                    .is_none_or(|at| now.duration_since(*at) >= try_every(ttl));
            if !due || trying.contains(&inc) {
                continue;
            }
            tried_at.insert(inc.clone(), now);
            trying.insert(inc.clone());
            // A task of its own: the try runs on while this loop waits for the database
            // (a slow database must not make the others look silent).
            let task = actix_web::rt::spawn(try_peer(cluster.clone(), peer));
            tries.push(async move {
                let _ = task.await;
                inc
            });
        }
    }
}

/// Tries `peer`; reports it when this try counts against it.
async fn try_peer(cluster: Arc<Cluster>, peer: Peer) {
    let Peer { member, wanted } = peer;
    let heard = cluster
        .hop()
        .ask_member(&member.internal_addr, probe_patience(cluster.ttl))
        .await;
    if counts_against(&heard, &member.inc, wanted) {
        tracing::debug!(node = %member.node_id, ?heard, "a node did not answer as itself");
        cluster.unreachable(&member.node_id, &member.inc).await;
    }
}

/// Whether what a try heard counts against the incarnation `inc` (see the module's text).
fn counts_against(heard: &Heard, inc: &str, wanted: bool) -> bool {
    match heard {
        h if h.is(inc) => false,
        Heard::Closed => wanted,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn silence_and_a_wrong_answer_count_a_closed_door_only_when_asked_for() {
        for wanted in [false, true] {
            assert!(!counts_against(&Heard::As("inc_a".into()), "inc_a", wanted));
            assert!(!counts_against(&Heard::Older, "inc_a", wanted));
            assert!(counts_against(&Heard::As("inc_b".into()), "inc_a", wanted));
            assert!(counts_against(&Heard::NoMember, "inc_a", wanted));
            assert!(counts_against(&Heard::Silent, "inc_a", wanted));
        }
        assert!(
            !counts_against(&Heard::Closed, "inc_a", false),
            "stopping or gone"
        );
        assert!(counts_against(&Heard::Closed, "inc_a", true));
    }
}
