//! Cluster mode: one live owner per document (see `claims.rs` for the fence).
//! SQLite is one node: it owns every document, always at epoch 0.

use super::claims as pg;
use super::membership::Member;
use crate::storage::db::Db;
use crate::storage::error::Result;

pub use pg::{Claim, Owner};

/// Claims `doc_id` for `me` (epoch + 1 unless `me` holds it already); None while another
/// live incarnation owns it. On SQLite: always this node's, at epoch 0.
pub fn claim(db: &mut Db, doc_id: &str, me: &Member) -> Result<Option<Claim>> {
    match db {
        Db::Sqlite(_) => Ok(Some(Claim {
            epoch: 0,
            head_seq: 0,
        })),
        Db::Postgres(t, _) => pg::claim(&mut **t, doc_id, me),
    }
}

/// Gives the document up (epoch + 1) if `me` still holds it at `epoch`.
pub fn release(db: &mut Db, doc_id: &str, me: &Member, epoch: i64) -> Result<bool> {
    match db {
        Db::Sqlite(_) => Ok(true),
        Db::Postgres(t, _) => pg::release(&mut **t, doc_id, me, epoch),
    }
}

/// The document's live owner, if any (None on SQLite: there is no other node).
pub fn owner(db: &mut Db, doc_id: &str) -> Result<Option<Owner>> {
    match db {
        Db::Sqlite(_) => Ok(None),
        Db::Postgres(t, _) => pg::owner(&mut **t, doc_id),
    }
}

/// Gives up every document `me` holds (graceful leave); their IDs.
pub fn release_all(db: &mut Db, me: &Member) -> Result<Vec<String>> {
    match db {
        Db::Sqlite(_) => Ok(Vec::new()),
        Db::Postgres(t, _) => pg::release_all(&mut **t, me),
    }
}

/// Whether this transaction may do the cluster-wide part of a compaction pass (purging the
/// trash, expiring versions): on PostgreSQL one node's transaction at a time; on SQLite always.
pub fn compaction_turn(db: &mut Db) -> Result<bool> {
    match db {
        Db::Sqlite(_) => Ok(true),
        Db::Postgres(t, _) => pg::try_lock_compaction_here(&mut **t),
    }
}
