//! Full-text search, tags and backlinks over the documents a user can read.

use super::db::dispatch;
use super::postgres::derived as pg;
use super::sqlite::search as lite;

pub use lite::{fts_query, BlockHit, TagCount};

dispatch! {
    pub fn search(user_id: &str, q: &str, limit: usize) -> Vec<BlockHit> => lite::search, pg::search;
    pub fn tags(user_id: &str) -> Vec<TagCount> => lite::tags, pg::tags;
    pub fn blocks_with_tag(user_id: &str, tag: &str, limit: usize) -> Vec<BlockHit>
        => lite::blocks_with_tag, pg::blocks_with_tag;
    pub fn backlinks(user_id: &str, target: &str, limit: usize) -> Vec<BlockHit>
        => lite::backlinks, pg::backlinks;
}
