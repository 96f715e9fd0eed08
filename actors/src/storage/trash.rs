//! The owner's trash: deleted documents, restorable until purged.

use super::db::dispatch;
use super::postgres::upkeep as pg;
use super::sqlite::trash as lite;

pub use lite::TrashedDoc;

dispatch! {
    pub fn trash(doc_id: &str, by: &str, now: i64) -> bool => lite::trash, pg::trash;
    pub fn list(owner: &str, keep_ms: i64) -> Vec<TrashedDoc> => lite::list, pg::list_trash;
    pub fn is_trashed_by_owner(doc_id: &str, owner: &str) -> bool
        => lite::is_trashed_by_owner, pg::is_trashed_by_owner;
    pub fn untrash(doc_id: &str, owner: &str) -> bool => lite::untrash, pg::untrash;
    pub fn due(cutoff: i64) -> Vec<String> => lite::due, pg::trash_due;
}
