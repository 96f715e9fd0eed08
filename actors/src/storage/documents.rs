//! Documents: create, load, the fenced write of a sync's effects, icon, delete.

use super::db::dispatch;
use super::db::Db;
use super::error::Result;
use super::postgres::{documents as pg, roles as pg_roles};
use super::sqlite::documents as lite;

use crate::collab::document::DocState;

pub use lite::{DocSummary, DocWrite};

dispatch! {
    pub fn create(id: &str, owner: &str, title: &str, folder: Option<&str>, now: i64) -> ()
        => lite::create, pg::create;
    pub fn load(doc_id: &str) -> DocState => lite::load, pg::load;
    pub fn set_icon(doc_id: &str, icon: Option<&str>, now: i64) -> () => lite::set_icon, pg::set_icon;
    pub fn delete(doc_id: &str) -> bool => lite::delete, pg::delete;
    pub fn list_readable(user_id: &str) -> Vec<DocSummary>
        => lite::list_readable, pg_roles::readable_documents;
    pub fn load_floor(doc_id: &str) -> i64 => lite::load_floor, pg::load_floor;
    pub fn meta_title(doc_id: &str) -> Option<String> => lite::meta_title, pg::meta_title;
}

/// Writes one sync's effects, fenced by the head it expects — and in cluster mode by the
/// owner's epoch: a node whose epoch is stale gets `NotOwner` and nothing is written.
/// SQLite has one node; the epoch is not stored there.
pub fn apply_write(db: &mut Db, w: &DocWrite, epoch: i64) -> Result<()> {
    match db {
        Db::Sqlite(c) => lite::apply_write(c, w),
        Db::Postgres(t) => pg::apply_write(t, w, epoch),
    }
}
