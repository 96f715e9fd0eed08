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
//! - `Cluster::leave` (SIGTERM) stops every actor — each releases its document behind its
//!   last write — and ends the incarnation, so other nodes claim at once.

pub mod hop;
pub mod relay;
pub mod routing;

use std::sync::Arc;
use std::time::Duration;

use actix::prelude::*;
use docsync_actors::membership::{Leave, Membership, MembershipConfig, MembershipEvent, ThisNode};
use docsync_actors::registry::{Documents, RelinquishAll};
use docsync_actors::storage::cluster::ownership;
use docsync_actors::storage::Storage;

use crate::config::Settings;

/// Where a document's request is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    Here,
    /// At the live owner's internal address.
    Owner {
        node_id: String,
        addr: String,
    },
}

pub struct Cluster {
    pub this_node: Arc<ThisNode>,
    node_id: String,
    secret: String,
    http: reqwest::Client,
    membership: Addr<Membership>,
    registry: Documents,
    storage: Storage,
    metrics: Arc<docsync_actors::metrics::Metrics>,
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
        Ok(Arc::new(Cluster {
            this_node,
            node_id,
            secret: settings.cluster.secret.clone(),
            http,
            membership,
            registry,
            storage,
            metrics,
        }))
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
    /// its requests go now. The forwarding of requests and the WebSocket relay both follow
    /// a document this way.
    pub async fn ask_again(&self, doc_id: &str) -> Route {
        tokio::time::sleep(RESOLVE_AGAIN).await;
        self.route(doc_id).await
    }

    /// Whether this node is in the cluster now (not fenced, registered).
    pub fn is_member(&self) -> bool {
        self.this_node.current().is_some()
    }

    /// Where `doc_id`'s requests go: here when an actor of this node holds it, or when no
    /// live node does (this node's actor will claim it); else to its live owner. The answer
    /// may be stale by the time the request arrives — the fence, not the route, keeps the
    /// log whole: a wrong "here" ends in a refused claim (503 `not_owner`, asked again).
    pub async fn route(&self, doc_id: &str) -> Route {
        if self.this_node.holds(doc_id) {
            return Route::Here;
        }
        let me = self.this_node.current();
        let doc = doc_id.to_string();
        match self
            .storage
            .read(move |db| ownership::owner(db, &doc))
            .await
        {
            Ok(Some(o)) if me.as_ref().is_none_or(|m| m.inc != o.inc) => Route::Owner {
                node_id: o.node_id,
                addr: o.internal_addr,
            },
            _ => Route::Here,
        }
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
