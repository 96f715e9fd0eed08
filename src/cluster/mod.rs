//! Cluster mode on this node (`storage.backend = "postgres"`): membership, what happens when
//! it changes, and where a document's requests are served.
//!
//! - The `Membership` actor (actors crate) registers and renews this node's incarnation; its
//!   events land in `Listener`, which keeps `ThisNode` current. Fenced (could not renew in
//!   time): `ThisNode` is cleared at once — no actor of this node can start or claim — every
//!   document actor stops (streams end, callers are told to ask again) and `/readyz` answers
//!   503 until the node has joined again as a new incarnation.
//! - `Cluster::route` tells the HTTP layer whether a document's request is served here (an
//!   actor of this node holds the document, or nobody live does and this node will claim it)
//!   or forwarded one hop to the live owner (`routing.rs`).
//! - Reachability: every node tries every other live node now and then, whether or not
//!   requests go there, and at once a node some other node suspects or doubts (`peers.rs`,
//!   started by the server beside the cluster); a node whose request to a document's owner
//!   waits too long asks every node to try that owner now (`doubt`, a notification) and
//!   tries it itself. A node that cannot reach another says so in the database
//!   (`Cluster::unreachable`); a majority of the other live nodes evicts the unreachable
//!   one, which fences itself — so an owner paused or cut from the other nodes but not from
//!   the database loses its documents within about a try's interval and a probe's
//!   patience, even when no request went to it through another node. Waiting requests hear
//!   of the eviction by notification and ask again.
//! - Wake-up streams of a document another node owns are relayed: one stream per document
//!   from its owner (`node_stream.rs`), fanned out here by a relay that checks each
//!   stream's rights itself (`listen.rs`, `relays.rs`); a bullet guest's WebSocket room has
//!   a stream of its own (`guest_relay.rs`), their SSE stream is forwarded.
//! - `Cluster::leave` (SIGTERM) stops every actor — each releases its document behind its
//!   last write — and ends the incarnation, so other nodes claim at once.

mod doubts;
pub mod guest_relay;
pub mod hop;
pub mod listen;
pub mod member;
pub mod node_stream;
pub mod owners;
pub mod peers;
pub mod relays;
pub mod routing;

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use docsync_actors::membership::{Leave, Membership, MembershipConfig, MembershipEvent, ThisNode};
use docsync_actors::registry::{Documents, RelinquishAll};
use docsync_actors::storage::cluster::{ownership, reachability};
use docsync_actors::storage::Storage;

use crate::config::Settings;

pub use owners::Route;

pub struct Cluster {
    pub this_node: Arc<ThisNode>,
    node_id: String,
    secret: String,
    http: reqwest::Client,
    membership: Addr<Membership>,
    registry: Documents,
    storage: Storage,
    metrics: Arc<docsync_actors::metrics::Metrics>,
    ttl: Duration,
    owners: owners::KnownOwners,
    /// The documents other nodes own whose streams this node relays.
    relays: Arc<relays::Relays>,
    /// The owners this node told the others it doubts, lately.
    doubts: doubts::Doubts,
}

/// How long a node may take to say which incarnation it is before it counts as unreachable:
/// a third of the TTL, at least a second (a busy node still answers that within this).
fn probe_patience(ttl: Duration) -> Duration {
    (ttl / 3).max(Duration::from_secs(1))
}

impl Cluster {
    /// Starts membership for this node. Actors started with `this_node` claim as it.
    pub fn start(
        settings: &Settings,
        storage: Storage,
        registry: Documents,
        this_node: Arc<ThisNode>,
        metrics: Arc<docsync_actors::metrics::Metrics>,
    ) -> anyhow::Result<Arc<Cluster>> {
        let node_id = if settings.cluster.node_id.is_empty() {
            hostname()
        } else {
            settings.cluster.node_id.clone()
        };
        let pool = docsync_actors::storage::postgres::pool(&settings.storage.postgres_url, 2)?;
        let cfg = MembershipConfig {
            node_id: node_id.clone(),
            internal_addr: settings.cluster.internal_addr.clone(),
            ttl: Duration::from_secs_f64(settings.cluster.ttl_secs),
            renew_every: Duration::from_millis(settings.cluster.renew_ms),
            margin: Duration::from_secs(1),
        };
        let listener = Listener {
            this_node: this_node.clone(),
            registry: registry.clone(),
        }
        .start();
        let membership = Membership::new(pool, cfg, listener.recipient()).start();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(1))
            .pool_idle_timeout(Duration::from_secs(30))
            .build()?;
        let cluster = Arc::new(Cluster {
            this_node,
            node_id,
            secret: settings.cluster.secret.clone(),
            http,
            membership,
            registry,
            storage,
            metrics,
            ttl: Duration::from_secs_f64(settings.cluster.ttl_secs),
            owners: owners::KnownOwners::default(),
            relays: Arc::new(relays::Relays::default()),
            doubts: doubts::Doubts::default(),
        });
        actix_web::rt::spawn(relays::follow_access(
            Arc::downgrade(&cluster.relays),
            cluster.storage.access_epoch().changes(),
        ));
        Ok(cluster)
    }

    /// Whether the node at `addr` answers within the probe's patience as the incarnation
    /// `inc` (`Hop::answers_as`).
    pub async fn answers_as(&self, addr: &str, inc: &str) -> bool {
        self.hop()
            .answers_as(addr, inc, probe_patience(self.ttl))
            .await
    }

    /// This node could not reach the incarnation `inc`: says so in the database (see
    /// `reachability`); with the others who said so, a majority evicts it. True when this
    /// report made the majority (the node is out now).
    pub async fn unreachable(&self, node_id: &str, inc: &str) -> bool {
        let Some(me) = self.this_node.current() else {
            return false;
        };
        let (inc, ttl) = (inc.to_string(), self.ttl);
        match self
            .storage
            .write(move |db| reachability::suspect(db, &me, &inc, ttl))
            .await
        {
            Ok(true) => {
                tracing::warn!(node = %node_id, "evicted from the cluster: its majority cannot reach it");
                self.metrics.nodes_evicted.inc();
                true
            }
            Ok(false) => false,
            Err(e) => {
                tracing::warn!(error = %e, "recording an unreachable node");
                false
            }
        }
    }

    /// Waits while the request sent to `owner` (an incarnation at `addr`) has no answer:
    /// returns once the document's requests should go elsewhere — the owner was evicted, its
    /// membership expired, or the document moved — so the request is asked again there.
    /// Meanwhile an owner that does not answer as itself either (`answers_as`) is reported;
    /// before trying it, this node asks every node to try it too (`doubt`), so their reports
    /// come together and a majority forms in one probe's time.
    pub async fn while_owner(&self, doc_id: &str, owner: &str, addr: &str, node_id: &str) {
        let mut news = self.storage.node_news().map(|n| n.changes());
        let mut reported = false;
        loop {
            news_or_sleep(&mut news, OWNER_CHECK_EVERY).await;
            match self.route_fresh(doc_id).await {
                Route::Owner { inc, .. } if inc == owner => {}
                _ => return,
            }
            if !reported {
                // Side by side: the probe does not wait for the notification's commit.
                let (_, answered) =
                    futures::future::join(self.doubt(owner), self.answers_as(addr, owner)).await;
                if !answered {
                    reported = true;
                    if self.unreachable(node_id, owner).await {
                        return;
                    }
                }
            }
        }
    }

    /// Asks every node to try the incarnation `inc` now (at most once per probe's patience
    /// from this node): a request to it has waited too long.
    async fn doubt(&self, inc: &str) {
        let now = std::time::Instant::now();
        if !self.doubts.first_in(inc, now, probe_patience(self.ttl)) {
            return;
        }
        let inc = inc.to_string();
        if let Err(e) = self
            .storage
            .write(move |db| reachability::doubt(db, &inc))
            .await
        {
            tracing::warn!(error = %e, "asking the other nodes to try a node");
        }
    }

    /// How this node speaks to the others: its name, the cluster secret, its HTTP client.
    pub fn hop(&self) -> hop::Hop<'_> {
        hop::Hop {
            me: &self.node_id,
            secret: &self.secret,
            http: &self.http,
        }
    }

    /// The document's node did not answer (gone: a crash makes its documents claimable at
    /// once; stopping: it releases them in a moment; or paused): after a short wait, where
    /// its requests go now. The forwarding of requests and the WebSocket relays all follow
    /// a document this way.
    pub async fn ask_again(&self, doc_id: &str) -> Route {
        tokio::time::sleep(RESOLVE_AGAIN).await;
        self.route_fresh(doc_id).await
    }

    /// The owner of `doc_id` did not answer as one: the next route asks the database.
    pub fn forget_owner(&self, doc_id: &str) {
        self.owners.forget(doc_id);
    }

    /// Whether this node is in the cluster now (not fenced, registered).
    pub fn is_member(&self) -> bool {
        self.this_node.current().is_some()
    }

    /// Where `doc_id`'s requests go: here when an actor of this node holds it, or when no
    /// live node does (this node's actor will claim it); else to its live owner — as last
    /// found (`owners.rs`), or as the database says now. The answer may be stale by the time
    /// the request arrives — the fence, not the route, keeps the log whole: a wrong "here"
    /// ends in a refused claim (503 `not_owner`, asked again), a wrong owner in a forward
    /// that fails or is refused, after which the database is asked.
    pub async fn route(&self, doc_id: &str) -> Route {
        if self.this_node.holds(doc_id) {
            return Route::Here;
        }
        match self.owners.get(doc_id) {
            Some(known) => known,
            None => self.route_fresh(doc_id).await,
        }
    }

    /// `route`, asking the database (and remembering what it says).
    pub async fn route_fresh(&self, doc_id: &str) -> Route {
        if self.this_node.holds(doc_id) {
            return Route::Here;
        }
        let me = self.this_node.current();
        let doc = doc_id.to_string();
        let route = match self
            .storage
            .read(move |db| ownership::owner(db, &doc))
            .await
        {
            Ok(Some(o)) if me.as_ref().is_none_or(|m| m.inc != o.inc) => Route::Owner {
                node_id: o.node_id,
                inc: o.inc,
                addr: o.internal_addr,
            },
            _ => Route::Here,
        };
        self.owners.found(doc_id, &route);
        route
    }

    /// Graceful leave: every actor stops (each releases its document after its last write),
    /// then the incarnation ends so the other nodes claim at once.
    pub async fn leave(&self) {
        let stopped = self.registry.send(RelinquishAll).await.unwrap_or(0);
        tracing::info!(
            documents = stopped,
            "leaving the cluster: handing documents on"
        );
        // Each actor queues its release when it has stopped (after its last write); wait for
        // them, bounded — ending the incarnation makes the rest claimable anyway.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while self.metrics.actors_open.get() > 0 && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        // The releases queue on the one writer; a write through it afterwards means they
        // are all committed.
        let _ = self.storage.write(|_| Ok(())).await;
        let _ = self.membership.send(Leave).await;
        self.this_node.set(None);
    }
}

/// How long to wait before asking again who serves a document whose node did not answer.
pub const RESOLVE_AGAIN: Duration = Duration::from_millis(50);

/// How often a request waiting for a document's owner checks that it still is the owner.
pub const OWNER_CHECK_EVERY: Duration = Duration::from_millis(250);

/// Waits `wait`, or less when news of the nodes comes (an eviction, a doubt).
async fn news_or_sleep(news: &mut Option<tokio::sync::watch::Receiver<u64>>, wait: Duration) {
    let Some(rx) = news else {
        return tokio::time::sleep(wait).await;
    };
    if let Ok(Err(_)) = tokio::time::timeout(wait, rx.changed()).await {
        // The storage is gone (shutting down): no more news, only the timer.
        *news = None;
        tokio::time::sleep(wait).await;
    }
}

/// Follows the membership's events.
struct Listener {
    this_node: Arc<ThisNode>,
    registry: Documents,
}

impl Actor for Listener {
    type Context = Context<Self>;
}

impl Handler<MembershipEvent> for Listener {
    type Result = ();

    fn handle(&mut self, event: MembershipEvent, _ctx: &mut Context<Self>) {
        match event {
            MembershipEvent::Joined(m) => {
                tracing::info!(node = %m.node_id, inc = %m.inc, "joined the cluster");
                self.this_node.set(Some(m));
            }
            MembershipEvent::Fenced(m) => {
                tracing::warn!(inc = %m.inc, "fenced: this node stops serving its documents");
                self.this_node.set(None);
                self.registry.do_send(RelinquishAll);
            }
        }
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/etc/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "docsync".into())
}
