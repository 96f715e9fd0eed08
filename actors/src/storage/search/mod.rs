//! Full-text search, tags and backlinks over the documents a user can read. What counts as
//! a word and as a tag is decided here once; each backend turns the words into its own
//! query syntax (`sqlite.rs`: FTS5, `postgres.rs`: `tsquery`).

mod postgres;
mod rows;
mod sqlite;
mod types;

pub use rows::{backlinks, tags};
pub use types::{BlockHit, TagCount};

use super::db::Db;
use super::error::Result;

/// The words of a search: runs of letters and digits, lower case, at most 16.
pub fn query_words(q: &str) -> Vec<String> {
    q.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(16)
        .map(str::to_lowercase)
        .collect()
}

/// Bullets of readable documents with every word of `q` (the last as a prefix, so results
/// appear while typing), best first; nothing for a query without words.
pub fn search(db: &mut Db, user_id: &str, q: &str, limit: usize) -> Result<Vec<BlockHit>> {
    let words = query_words(q);
    if words.is_empty() {
        return Ok(Vec::new());
    }
    rows::matching_blocks(db, user_id, &words, limit)
}

/// Bullets of readable documents tagged `tag` (`#` and case do not matter).
pub fn blocks_with_tag(
    db: &mut Db,
    user_id: &str,
    tag: &str,
    limit: usize,
) -> Result<Vec<BlockHit>> {
    let tag = tag.trim_start_matches('#').to_lowercase();
    rows::blocks_with_tag(db, user_id, &tag, limit)
}
