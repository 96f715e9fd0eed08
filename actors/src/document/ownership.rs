//! Cluster mode: the actor's claim on its document. The claim is made in the same writer
//! transaction as the load, and every head-moving write carries its epoch; a write refused
//! for a stale epoch (`StorageError::NotOwner`) means another node took the document over —
//! the actor stops for good and its callers are told to ask again (`DocError::NotOwner`),
//! which routes them to the new owner. On SQLite there is no cluster: epoch 0, no claim.

use std::sync::Arc;

use crate::membership::ThisNode;
use crate::storage::cluster::membership::Member;
use crate::storage::cluster::ownership;
use crate::storage::{Db, Result, StorageError};

#[derive(Default)]
pub struct Ownership {
    doc_id: String,
    node: Option<Arc<ThisNode>>,
    held: Option<(Member, i64)>,
}

impl Ownership {
    pub fn new(doc_id: &str, node: Option<Arc<ThisNode>>) -> Ownership {
        Ownership {
            doc_id: doc_id.to_string(),
            node,
            held: None,
        }
    }

    /// Who to claim as: None on SQLite; `NotOwner` while this node is out of the cluster.
    pub fn claimant(&self, doc_id: &str) -> Result<Option<Member>> {
        match &self.node {
            None => Ok(None),
            Some(node) => node.current().map(Some).ok_or(StorageError::NotOwner {
                doc: doc_id.to_string(),
                epoch: -1,
            }),
        }
    }

    /// In the load's transaction: claims the document as `me`, or refuses (`NotOwner`) while
    /// another live node holds it. Answers the epoch to fence writes with.
    pub fn claim_in(db: &mut Db, doc_id: &str, me: Option<&Member>) -> Result<i64> {
        let Some(me) = me else {
            return Ok(0);
        };
        match ownership::claim(db, doc_id, me)? {
            Some(c) => Ok(c.epoch),
            None => Err(StorageError::NotOwner {
                doc: doc_id.to_string(),
                epoch: -1,
            }),
        }
    }

    pub fn claimed(&mut self, me: Option<Member>, epoch: i64) {
        if let (Some(node), Some(_)) = (&self.node, &me) {
            node.hold(&self.doc_id);
        }
        self.held = me.map(|m| (m, epoch));
    }

    /// The epoch every write of this actor carries (0 on SQLite).
    pub fn epoch(&self) -> i64 {
        self.held.as_ref().map_or(0, |h| h.1)
    }

    /// What to release when the actor stops (taken: released once).
    pub fn take(&mut self) -> Option<(Member, i64)> {
        self.let_go();
        self.held.take()
    }

    /// The document was taken over: nothing is held any more.
    pub fn lost(&mut self) {
        self.let_go();
        self.held = None;
    }

    /// Requests for the document stop being served here from now on.
    pub fn let_go(&self) {
        if let Some(node) = &self.node {
            node.let_go(&self.doc_id);
        }
    }
}
