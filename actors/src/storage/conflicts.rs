//! Open conflict copies, with both texts, for the conflict review.

use super::db::dispatch;
use super::postgres::upkeep as pg;
use super::sqlite::conflicts as lite;

pub use lite::OpenConflict;

dispatch! {
    pub fn in_document(doc_id: &str, limit: usize) -> Vec<OpenConflict>
        => lite::in_document, pg::conflicts_in_document;
    pub fn readable(user_id: &str, limit: usize) -> Vec<OpenConflict>
        => lite::readable, pg::conflicts_readable;
}
