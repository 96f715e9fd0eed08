//! One live owner per document. A claim succeeds only when the document has no owner, or its
//! owner's incarnation is dead or expired (or is the claimer itself); it moves
//! `owner_epoch`, the fencing token every head-moving write of the new owner carries. A
//! release (graceful hand-off, an idle actor) moves it too, so the old owner's writes can
//! never land after someone else took over — safety never depends on clocks or timeouts.

use postgres::GenericClient;

use super::super::error::{Result, StorageError};
use super::membership::Member;

/// What a successful claim gives its owner: the epoch to fence every write with, and the
/// head at the moment of the claim (everything below is durable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Claim {
    pub epoch: i64,
    pub head_seq: i64,
}

/// Who owns a document now, for routing: `None` when nobody live does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub node_id: String,
    pub inc: String,
    pub internal_addr: String,
    pub epoch: i64,
}

/// Claims `doc_id` for `me`. `Ok(None)`: another live incarnation owns it (route there).
/// Claiming a document one already owns moves the epoch too: a node's new actor for a
/// document fences the old one still draining (its writes are all queued ahead of the claim
/// on the same writer, and its release at the old epoch then changes nothing).
pub fn claim(c: &mut impl GenericClient, doc_id: &str, me: &Member) -> Result<Option<Claim>> {
    let claimed = c.query_opt(
        "UPDATE documents d SET owner_node = $2, owner_inc = $3, owner_epoch = d.owner_epoch + 1
          WHERE d.id = $1
            AND (d.owner_inc IS NULL OR d.owner_inc = $3 OR NOT EXISTS (
                  SELECT 1 FROM nodes n
                   WHERE n.inc = d.owner_inc
                     AND docsync_alive(n.status, n.expires_at, n.presence_key)))
         RETURNING owner_epoch, head_seq",
        &[&doc_id, &me.node_id, &me.inc],
    )?;
    if let Some(r) = claimed {
        return Ok(Some(Claim {
            epoch: r.get(0),
            head_seq: r.get(1),
        }));
    }
    let exists = c.query_opt("SELECT 1 FROM documents WHERE id = $1", &[&doc_id])?;
    if exists.is_none() {
        return Err(StorageError::DocNotFound(doc_id.to_string()));
    }
    Ok(None)
}

/// Gives a document up (epoch + 1), if `me` still owns it at `epoch`; false otherwise.
pub fn release(c: &mut impl GenericClient, doc_id: &str, me: &Member, epoch: i64) -> Result<bool> {
    Ok(c.execute(
        "UPDATE documents SET owner_node = NULL, owner_inc = NULL, owner_epoch = owner_epoch + 1
          WHERE id = $1 AND owner_inc = $2 AND owner_epoch = $3",
        &[&doc_id, &me.inc, &epoch],
    )? == 1)
}

/// The document's live owner, if it has one.
pub fn owner(c: &mut impl GenericClient, doc_id: &str) -> Result<Option<Owner>> {
    let r = c.query_opt(
        "SELECT n.node_id, n.inc, n.internal_addr, d.owner_epoch
           FROM documents d JOIN nodes n ON n.inc = d.owner_inc
          WHERE d.id = $1 AND docsync_alive(n.status, n.expires_at, n.presence_key)",
        &[&doc_id],
    )?;
    Ok(r.map(|r| Owner {
        node_id: r.get(0),
        inc: r.get(1),
        internal_addr: r.get(2),
        epoch: r.get(3),
    }))
}

/// Gives up every document `me` owns (graceful shutdown: each one's epoch moves, so another
/// node claims it at once instead of waiting for this incarnation to expire). Returns them.
pub fn release_all(c: &mut impl GenericClient, me: &Member) -> Result<Vec<String>> {
    Ok(c.query(
        "UPDATE documents SET owner_node = NULL, owner_inc = NULL, owner_epoch = owner_epoch + 1
              WHERE owner_inc = $1 RETURNING id",
        &[&me.inc],
    )?
    .iter()
    .map(|r| r.get(0))
    .collect())
}

/// The key of the advisory lock that lets one node at a time run compaction.
const COMPACTION_LOCK: i64 = 7_275_636_524;

/// Takes the cluster-wide compaction lock for this connection's session if nobody has it;
/// it is released with `unlock_compaction` or when the connection ends (a node that died
/// mid-pass does not keep it).
/// The same lock for the rest of the transaction `c` is in (released at its commit): the
/// cluster-wide parts of a compaction pass run on one node at a time, job by job.
pub fn try_lock_compaction_here(c: &mut impl GenericClient) -> Result<bool> {
    Ok(
        c.query_one("SELECT pg_try_advisory_xact_lock($1)", &[&COMPACTION_LOCK])?
            .get(0),
    )
}

pub fn try_lock_compaction(c: &mut impl GenericClient) -> Result<bool> {
    Ok(
        c.query_one("SELECT pg_try_advisory_lock($1)", &[&COMPACTION_LOCK])?
            .get(0),
    )
}

pub fn unlock_compaction(c: &mut impl GenericClient) -> Result<()> {
    c.execute("SELECT pg_advisory_unlock($1)", &[&COMPACTION_LOCK])?;
    Ok(())
}
