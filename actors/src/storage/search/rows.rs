//! The rows search reads, asked of whichever backend holds the data (same names in
//! `sqlite.rs` and `postgres.rs`). Each reads only documents `user_id` can read, or — the
//! `guest_` ones — only the bullets shared with them in documents they cannot.

use super::postgres;
use super::sqlite;
use super::types::{BlockHit, TagCount};
use crate::storage::db::{row_questions, Db};
use crate::storage::error::Result;

row_questions! {
    /// Bullets with every word (`words` not empty; the last as a prefix), best first.
    pub fn matching_blocks(user_id: &str, words: &[String], limit: usize) -> Vec<BlockHit>;
    /// Each tag with its bullets and documents, most used first.
    pub fn tags(user_id: &str) -> Vec<TagCount>;
    /// Bullets carrying `tag` (lower case, without `#`), most recently changed documents first.
    pub fn blocks_with_tag(user_id: &str, tag: &str, limit: usize) -> Vec<BlockHit>;
    /// Bullets linking to `target` from other documents, most recently changed first.
    pub fn backlinks(user_id: &str, target: &str, limit: usize) -> Vec<BlockHit>;
    /// `matching_blocks` over the bullets the user sees only as a bullet guest, each hit
    /// titled by its shared bullet's text (never the document's title).
    pub fn guest_matching_blocks(user_id: &str, words: &[String], limit: usize) -> Vec<BlockHit>;
    /// `tags` over those bullets (unordered).
    pub fn guest_tags(user_id: &str) -> Vec<TagCount>;
    /// `blocks_with_tag` over those bullets.
    pub fn guest_blocks_with_tag(user_id: &str, tag: &str, limit: usize) -> Vec<BlockHit>;
    /// `backlinks` from those bullets.
    pub fn guest_backlinks(user_id: &str, target: &str, limit: usize) -> Vec<BlockHit>;
}
