//! The registry finds a document's actor, starting it on first use on one of a fixed set of
//! arbiters (threads), and forgets it when the actor stops. It never touches document data:
//! it only maps IDs to addresses, so its messages are tiny and it cannot become a lock.

use std::collections::HashMap;
use std::sync::Arc;

use actix::prelude::*;

use crate::clock::SharedClock;
use crate::document::{AccessChanged, ActorConfig, ActorStats, Close, DocumentActor, GetStats};
use crate::storage::Storage;

/// Find or start the actor of a document.
#[derive(Message)]
#[rtype(result = "Addr<DocumentActor>")]
pub struct Open {
    pub doc_id: String,
}

/// Sent by an actor that is stopping; ignored when the address is not the current one.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Unregister {
    pub doc_id: String,
    pub addr: Addr<DocumentActor>,
}

/// The document was deleted: close its actor if it is open.
#[derive(Message)]
#[rtype(result = "()")]
pub struct CloseDocument {
    pub doc_id: String,
}

#[derive(Message)]
#[rtype(result = "usize")]
pub struct OpenCount;

/// Shares changed for these documents: tell their open actors (mode may flip, streams must
/// re-check access). Documents without an open actor need nothing.
#[derive(Message)]
#[rtype(result = "()")]
pub struct AccessChangedFor {
    pub doc_ids: Vec<String>,
}

/// Addresses of every open actor (operator views).
#[derive(Message)]
#[rtype(result = "Vec<Addr<DocumentActor>>")]
pub struct ListActors;

pub struct Registry {
    docs: HashMap<String, Addr<DocumentActor>>,
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
            docs: HashMap::new(),
            arbiters,
            storage,
            clock,
            cfg: Arc::new(cfg),
            started: 0,
        }
    }

    fn arbiter_for(&self, doc_id: &str) -> &ArbiterHandle {
        // FNV-1a: stable, cheap, spreads IDs evenly enough over a handful of threads.
        let mut h: u64 = 0xcbf29ce484222325;
        for b in doc_id.bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
        &self.arbiters[(h % self.arbiters.len() as u64) as usize]
    }
}

impl Actor for Registry {
    type Context = Context<Self>;
}

impl Handler<Open> for Registry {
    type Result = MessageResult<Open>;

    fn handle(&mut self, msg: Open, ctx: &mut Context<Self>) -> Self::Result {
        if let Some(addr) = self.docs.get(&msg.doc_id) {
            if addr.connected() {
                return MessageResult(addr.clone());
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
        self.docs.insert(msg.doc_id, addr.clone());
        MessageResult(addr)
    }
}

impl Handler<Unregister> for Registry {
    type Result = ();

    fn handle(&mut self, msg: Unregister, _ctx: &mut Context<Self>) {
        if self.docs.get(&msg.doc_id).is_some_and(|a| *a == msg.addr) {
            self.docs.remove(&msg.doc_id);
        }
    }
}

impl Handler<CloseDocument> for Registry {
    type Result = ();

    fn handle(&mut self, msg: CloseDocument, _ctx: &mut Context<Self>) {
        if let Some(addr) = self.docs.remove(&msg.doc_id) {
            addr.do_send(Close);
        }
    }
}

impl Handler<AccessChangedFor> for Registry {
    type Result = ();

    fn handle(&mut self, msg: AccessChangedFor, _ctx: &mut Context<Self>) {
        for id in msg.doc_ids {
            if let Some(addr) = self.docs.get(&id) {
                addr.do_send(AccessChanged);
            }
        }
    }
}

impl Handler<OpenCount> for Registry {
    type Result = usize;

    fn handle(&mut self, _msg: OpenCount, _ctx: &mut Context<Self>) -> usize {
        self.docs.len()
    }
}

impl Handler<ListActors> for Registry {
    type Result = MessageResult<ListActors>;

    fn handle(&mut self, _msg: ListActors, _ctx: &mut Context<Self>) -> Self::Result {
        MessageResult(self.docs.values().cloned().collect())
    }
}

/// Convenience for callers that want every actor's stats.
pub async fn all_stats(registry: &Addr<Registry>) -> Vec<ActorStats> {
    let Ok(addrs) = registry.send(ListActors).await else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(addrs.len());
    for a in addrs {
        if let Ok(s) = a.send(GetStats).await {
            out.push(s);
        }
    }
    out
}
