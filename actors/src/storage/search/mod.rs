//! Full-text search, tags and backlinks over what a user can read: whole documents, then
//! the bullets shared with them in documents they cannot read whole (PROTOCOL §10; such a
//! hit is titled by its shared bullet, never by the document). What counts as a word and
//! as a tag is decided here once; each backend turns the words into its own query syntax
//! (`sqlite.rs`: FTS5, `postgres.rs`: `tsquery`).

mod postgres;
mod rows;
mod sqlite;
mod types;

pub use types::{BlockHit, TagCount};

use super::db::Db;
use super::error::Result;
use super::roles::then_guest_part;

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
    let found = rows::matching_blocks(db, user_id, &words, limit)?;
    then_guest_part(found, limit, |room| {
        rows::guest_matching_blocks(db, user_id, &words, room)
    })
}

/// Each tag with its bullets and documents, most used first.
pub fn tags(db: &mut Db, user_id: &str) -> Result<Vec<TagCount>> {
    let mut all = rows::tags(db, user_id)?;
    let guest = rows::guest_tags(db, user_id)?;
    if guest.is_empty() {
        return Ok(all);
    }
    // The guest part lies in other documents than the whole ones: counts add up.
    for g in guest {
        match all.iter_mut().find(|t| t.tag == g.tag) {
            Some(t) => {
                t.blocks += g.blocks;
                t.documents += g.documents;
            }
            None => all.push(g),
        }
    }
    all.sort_by(|a, b| b.blocks.cmp(&a.blocks).then_with(|| a.tag.cmp(&b.tag)));
    Ok(all)
}

/// Bullets linking to `target` (`[[target]]`) from other documents the user reads (or
/// from bullets shared with them), most recently changed documents first.
pub fn backlinks(db: &mut Db, user_id: &str, target: &str, limit: usize) -> Result<Vec<BlockHit>> {
    let found = rows::backlinks(db, user_id, target, limit)?;
    then_guest_part(found, limit, |room| {
        rows::guest_backlinks(db, user_id, target, room)
    })
}

/// Bullets of readable documents tagged `tag` (`#` and case do not matter).
pub fn blocks_with_tag(
    db: &mut Db,
    user_id: &str,
    tag: &str,
    limit: usize,
) -> Result<Vec<BlockHit>> {
    let tag = tag.trim_start_matches('#').to_lowercase();
    let found = rows::blocks_with_tag(db, user_id, &tag, limit)?;
    then_guest_part(found, limit, |room| {
        rows::guest_blocks_with_tag(db, user_id, &tag, room)
    })
}
