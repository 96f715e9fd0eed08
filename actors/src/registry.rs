//! The registry finds a document's actor, starting it on first use on one of a fixed set of
//! arbiters (threads), and forgets it when the actor stops. It never touches document data:
//! it only maps IDs to addresses, so its messages are tiny and it cannot become a lock.
//! Nobody outside this crate sees an actor's address: requests go through `ask` (retrying
//! while an actor restarts), streams hold a `Subscription`.
//!
//! Only the registry actor changes the map of open actors, but anyone holding `Documents`
//! reads it directly: a request to a running actor is one message (to that actor), not two.

use std::collections::HashMap;
use std::ops::Deref;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, RwLock};

use actix::prelude::*;

use crate::clock::SharedClock;
use crate::collab::validate::DocId;
use crate::document::{
    AccessChanged, ActorConfig, ActorReport, Close, DocumentActor, GetStats, Stopped,
};
use crate::metrics::Metrics;
use crate::storage::Storage;

/// Find or start the actor of a document (through `ask`, which retries while it restarts).
#[derive(Message)]
#[rtype(result = "DocHandle")]
pub(crate) struct Open {
    pub(crate) doc_id: DocId,
}

/// A document actor's address plus the count of requests sent to it and not yet answered
/// (its mailbox depth as operators see it).
#[derive(Clone)]
pub(crate) struct DocHandle {
    addr: Addr<DocumentActor>,
    outstanding: Arc<AtomicI64>,
    metrics: Arc<Metrics>,
}

impl DocHandle {
    /// Sends a request, counting it as outstanding until the answer (or failure) is back.
    pub(crate) async fn request<M>(&self, msg: M) -> Result<M::Result, MailboxError>
    where
        M: Message + Send + 'static,
        M::Result: Send,
        DocumentActor: Handler<M>,
    {
        self.outstanding.fetch_add(1, Ordering::Relaxed);
        self.metrics.mailbox_depth.inc();
        let out = self.addr.send(msg).await;
        self.outstanding.fetch_sub(1, Ordering::Relaxed);
        self.metrics.mailbox_depth.dec();
        out
    }
}

/// The document was deleted: close its actor if it is open.
#[derive(Message)]
#[rtype(result = "()")]
pub struct CloseDocument {
    pub doc_id: DocId,
}

/// Handles of every open actor (operator views).
#[derive(Message)]
#[rtype(result = "Vec<DocHandle>")]
struct ListActors;

/// The map of open actors, written only by the registry actor.
type OpenActors = Arc<RwLock<HashMap<DocId, DocHandle>>>;

/// Handle to the document actors: the registry's address (for `do_send` of its messages)
/// plus a read view of its map, so `ask` finds a running actor without asking the registry.
#[derive(Clone)]
pub struct Documents {
    registry: Addr<Registry>,
    open: OpenActors,
}

impl Documents {
    /// Starts the registry actor.
    pub fn start(registry: Registry) -> Documents {
        let open = registry.docs.clone();
        Documents {
            registry: registry.start(),
            open,
        }
    }

    /// Rights to these documents may have changed (a share, a folder, a team): each open
    /// actor re-checks its streams, leases and sessions, and everyone hears the news (the
    /// document's `shared` and mode may have flipped). Sent from the caller straight to the
    /// actors' mailboxes, and done once each has re-checked the rights as they are now: the
    /// caller answers its own request after that, so whatever anyone sends next meets the
    /// new rights (a revoked writer's lease is gone). Documents without an open actor need
    /// nothing.
    pub async fn access_changed(&self, doc_ids: Vec<String>) {
        let asked: Vec<_> = {
            let open = self.open.read().unwrap_or_else(|e| e.into_inner());
            doc_ids
                .iter()
                .filter_map(|id| DocId::parse(id).ok())
                .filter_map(|id| {
                    open.get(&id)
                        .map(|h| h.addr.send(AccessChanged { shares: true }))
                })
                .collect()
        };
        // Each open document answers once it re-checked: a stopped one is done too.
        for answer in asked {
            let _ = answer.await;
        }
    }

    /// The running actor of `doc_id`, if the registry has one.
    pub(crate) fn running(&self, doc_id: &DocId) -> Option<DocHandle> {
        let open = self.open.read().unwrap_or_else(|e| e.into_inner());
        open.get(doc_id).filter(|h| h.addr.connected()).cloned()
    }
}

impl Deref for Documents {
    type Target = Addr<Registry>;

    fn deref(&self) -> &Addr<Registry> {
        &self.registry
    }
}

pub struct Registry {
    docs: OpenActors,
    arbiters: Vec<ArbiterHandle>,
    storage: Storage,
    clock: SharedClock,
    cfg: Arc<ActorConfig>,
    started: u64,
}

impl Registry {
    pub fn new(
        arbiters: Vec<ArbiterHandle>,
        storage: Storage,
        clock: SharedClock,
        cfg: ActorConfig,
    ) -> Registry {
        assert!(!arbiters.is_empty(), "at least one arbiter");
        Registry {
            docs: OpenActors::default(),
            arbiters,
            storage,
            clock,
            cfg: Arc::new(cfg),
            started: 0,
        }
    }

    /// The map, for the registry's own reads and writes (a poisoned lock only means a
    /// panic elsewhere while holding it; the map itself is always whole).
    fn docs(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<DocId, DocHandle>> {
        self.docs.write().unwrap_or_else(|e| e.into_inner())
    }

    fn arbiter_for(&self, doc_id: &DocId) -> &ArbiterHandle {
        // FNV-1a: stable, cheap, spreads IDs evenly enough over a handful of threads.
        let mut h: u64 = 0xcbf29ce484222325;
        for b in doc_id.as_str().bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
        &self.arbiters[(h % self.arbiters.len() as u64) as usize]
    }
}

impl Actor for Registry {
    type Context = Context<Self>;

    /// Every move of the access epoch (a credential, a team, a share… changed, here or in
    /// another process) makes every running actor re-check its open streams.
    fn started(&mut self, ctx: &mut Self::Context) {
        let changes = self.storage.access_epoch().changes();
        let moves = futures::stream::unfold(changes, |mut rx| async move {
            rx.changed().await.ok().map(|()| (EpochMoved, rx))
        });
        ctx.add_stream(moves);
    }
}

struct EpochMoved;

impl StreamHandler<EpochMoved> for Registry {
    fn handle(&mut self, _: EpochMoved, _ctx: &mut Context<Self>) {
        for h in self.docs().values() {
            h.addr.do_send(AccessChanged { shares: false });
        }
    }

    fn finished(&mut self, _ctx: &mut Context<Self>) {}
}

impl Handler<Open> for Registry {
    type Result = MessageResult<Open>;

    fn handle(&mut self, msg: Open, ctx: &mut Context<Self>) -> Self::Result {
        if let Some(h) = self.docs().get(&msg.doc_id) {
            if h.addr.connected() {
                return MessageResult(h.clone());
            }
        }
        let doc_id = msg.doc_id.clone();
        let storage = self.storage.clone();
        let clock = self.clock.clone();
        let cfg = self.cfg.clone();
        let me = ctx.address().recipient();
        let addr = DocumentActor::start_in_arbiter(self.arbiter_for(&doc_id), move |_| {
            DocumentActor::new(doc_id, storage, clock, cfg, Some(me))
        });
        self.started += 1;
        let handle = DocHandle {
            addr,
            outstanding: Arc::new(AtomicI64::new(0)),
            metrics: self.cfg.metrics.clone(),
        };
        self.docs().insert(msg.doc_id, handle.clone());
        MessageResult(handle)
    }
}

/// An actor stopped taking work; ignored when the address is no longer the current one
/// (a fresh actor for the document was started meanwhile).
impl Handler<Stopped> for Registry {
    type Result = ();

    fn handle(&mut self, msg: Stopped, _ctx: &mut Context<Self>) {
        let mut docs = self.docs();
        if docs.get(&msg.doc_id).is_some_and(|h| h.addr == msg.addr) {
            docs.remove(&msg.doc_id);
        }
    }
}

impl Handler<CloseDocument> for Registry {
    type Result = ();

    fn handle(&mut self, msg: CloseDocument, _ctx: &mut Context<Self>) {
        let closed = self.docs().remove(&msg.doc_id);
        if let Some(h) = closed {
            h.addr.do_send(Close);
        }
    }
}

/// This node left the cluster (fenced, or leaving): every actor stops serving now; their
/// callers ask again and are routed to whichever node owns each document next.
#[derive(Message)]
#[rtype(result = "usize")]
pub struct RelinquishAll;

impl Handler<RelinquishAll> for Registry {
    type Result = usize;

    fn handle(&mut self, _msg: RelinquishAll, _ctx: &mut Context<Self>) -> usize {
        let all: Vec<DocHandle> = self.docs().drain().map(|(_, h)| h).collect();
        for h in &all {
            h.addr.do_send(crate::document::Relinquish);
        }
        all.len()
    }
}

impl Handler<ListActors> for Registry {
    type Result = MessageResult<ListActors>;

    fn handle(&mut self, _msg: ListActors, _ctx: &mut Context<Self>) -> Self::Result {
        MessageResult(self.docs().values().cloned().collect())
    }
}

/// Convenience for callers that want every actor's stats.
pub async fn all_stats(registry: &Addr<Registry>) -> Vec<ActorReport> {
    let Ok(addrs) = registry.send(ListActors).await else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(addrs.len());
    for h in addrs {
        if let Ok(mut s) = h.addr.send(GetStats).await {
            s.mailbox_depth = h.outstanding.load(Ordering::Relaxed).max(0) as u64;
            out.push(s);
        }
    }
    out
}
