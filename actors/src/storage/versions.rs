//! Versions of a document: reserved in op order, filled once compressed, listed, named,
//! retained by policy (see `sqlite/versions.rs` for the two-step write).

use super::db::dispatch;
use super::db::Db;
use super::error::Result;
use super::postgres::versions as pg;
use super::sqlite::versions as lite;

pub use lite::{
    encode, expired, NewVersion, Retained, VersionKind, VersionMeta, VersionPolicy, VersionState,
};

dispatch! {
    pub fn fill(doc_id: &str, version_id: &str, body: &[u8], raw: usize) -> VersionMeta
        => lite::fill, pg::fill;
    pub fn forget_unfilled(before: i64) -> usize => lite::forget_unfilled, pg::forget_unfilled;
    pub fn list(doc_id: &str) -> Vec<VersionMeta> => lite::list, pg::list;
    pub fn meta(doc_id: &str, version_id: &str) -> Option<VersionMeta> => lite::meta, pg::meta;
    pub fn get(doc_id: &str, version_id: &str) -> Option<(VersionMeta, VersionState)> => lite::get, pg::get;
    pub fn states_at_or_below(doc_id: &str, seq: i64, limit: usize) -> Vec<(VersionMeta, VersionState)>
        => lite::states_at_or_below, pg::states_at_or_below;
    pub fn latest(doc_id: &str) -> Option<(i64, i64)> => lite::latest, pg::latest;
    pub fn rename(doc_id: &str, version_id: &str, name: &str) -> bool => lite::rename, pg::rename;
    pub fn delete_named(doc_id: &str, version_id: &str) -> Option<bool>
        => lite::delete_named, pg::delete_named;
    pub fn automatic_older_than(older_than: i64) -> Vec<Retained>
        => lite::automatic_older_than, pg::automatic_older_than;
    pub fn delete_ids(ids: &[String]) -> usize => lite::delete_ids, pg::delete_ids;
    pub fn totals() -> (i64, i64) => lite::totals, pg::totals;
}

/// Reserves a version's row, refused unless the head on disk is its `seq` (and, in cluster
/// mode, unless this node still owns the document at `epoch`).
pub fn reserve(db: &mut Db, v: &NewVersion, epoch: i64) -> Result<()> {
    match db {
        Db::Sqlite(c) => lite::reserve(c, v),
        Db::Postgres(t) => pg::reserve(&mut **t, v, epoch),
    }
}

/// Reserves and fills in one go (tests, tools): the same checks, compressed in place.
pub fn insert(db: &mut Db, v: &NewVersion, epoch: i64) -> Result<VersionMeta> {
    reserve(db, v, epoch)?;
    let (body, raw) = encode(&v.state)?;
    fill(db, &v.doc_id, &v.version_id, &body, raw)
}
