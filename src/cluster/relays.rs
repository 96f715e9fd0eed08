//! Cluster mode: this node's relays, by document — each a `RelayedDocument` (actors crate)
//! fanning out one stream from the document's owner to the streams that listen here
//! (`listen.rs` starts them and reads the owner's stream into them). Only a map of running
//! actors: a stopped relay is forgotten the next time anyone looks it up.

use std::collections::HashMap;
use std::sync::{Mutex, Weak};

use actix::prelude::*;
use tokio::sync::watch;

use docsync_actors::collab::validate::DocId;
use docsync_actors::document::{AccessChanged, RelayedDocument};

/// The relays of this node, by document.
#[derive(Default)]
pub struct Relays {
    open: Mutex<HashMap<DocId, Addr<RelayedDocument>>>,
}

impl Relays {
    /// The relay of `doc`, if one runs.
    pub fn running(&self, doc: &DocId) -> Option<Addr<RelayedDocument>> {
        let open = self.open.lock().expect("relays lock");
        open.get(doc).filter(|a| a.connected()).cloned()
    }

    /// Every relay running now.
    fn all(&self) -> Vec<Addr<RelayedDocument>> {
        let mut open = self.open.lock().expect("relays lock");
        open.retain(|_, a| a.connected());
        open.values().cloned().collect()
    }

    /// `addr` turned out to be over: the next look-up starts a fresh relay.
    pub fn forget(&self, doc: &DocId, addr: &Addr<RelayedDocument>) {
        let mut open = self.open.lock().expect("relays lock");
        if open.get(doc) == Some(addr) {
            open.remove(doc);
        }
    }

    /// `addr` was just started for `doc`; returns the relay to use (another one, if a stream
    /// started one meanwhile).
    pub fn started(&self, doc: &DocId, addr: Addr<RelayedDocument>) -> Addr<RelayedDocument> {
        let mut open = self.open.lock().expect("relays lock");
        match open.get(doc).filter(|a| a.connected()) {
            // Another room started one meanwhile: use that; this one lingers and stops.
            Some(first) => first.clone(),
            None => {
                open.insert(doc.clone(), addr.clone());
                addr
            }
        }
    }
}

/// Tells every relay that the access epoch moved (their streams are re-checked), for as
/// long as the relays exist.
pub async fn follow_access(relays: Weak<Relays>, mut moved: watch::Receiver<u64>) {
    while moved.changed().await.is_ok() {
        let Some(r) = relays.upgrade() else {
            return;
        };
        for relay in r.all() {
            relay.do_send(AccessChanged { shares: false });
        }
    }
}
