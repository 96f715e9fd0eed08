//! Search, tags, a tag's bullets and backlinks on PostgreSQL (twins of `sqlite.rs`), over
//! the readable documents as one subquery, so each read is one statement; the `guest_`
//! twins over the bullets shared with the user in documents they cannot read whole.

use postgres::GenericClient;

use super::types::{BlockHit, TagCount};
use crate::storage::error::Result;
use crate::storage::roles::postgres::{guest_blocks_with, READABLE_DOC_IDS as READABLE};

fn hits(rows: Vec<postgres::Row>) -> Vec<BlockHit> {
    rows.iter()
        .map(|r| BlockHit {
            doc_id: r.get(0),
            doc_title: r.get(1),
            block_id: r.get(2),
            content: r.get(3),
        })
        .collect()
}

/// Tags as counted (name, bullets, documents).
fn tag_counts(rows: Vec<postgres::Row>) -> Vec<TagCount> {
    rows.iter()
        .map(|r| TagCount {
            tag: r.get(0),
            blocks: r.get(1),
            documents: r.get(2),
        })
        .collect()
}

/// Bullets of readable documents with every word (the last as a prefix), best first.
/// Every word required, the last one as a prefix (words are letters and digits only, so
/// nothing else reaches the `tsquery` syntax).
fn ts_query(words: &[String]) -> String {
    let mut parts: Vec<String> = words[..words.len() - 1].to_vec();
    parts.push(format!("{}:*", words[words.len() - 1]));
    parts.join(" & ")
}

pub fn matching_blocks(
    c: &mut impl GenericClient,
    user_id: &str,
    words: &[String],
    limit: usize,
) -> Result<Vec<BlockHit>> {
    let query = ts_query(words);
    let sql = format!(
        "SELECT b.doc_id, d.title, b.id, b.content FROM block_search s
           JOIN blocks b ON b.rid = s.block_rid JOIN documents d ON d.id = b.doc_id
          WHERE s.words @@ to_tsquery('simple', unaccent($2)) AND b.doc_id IN ({READABLE})
          ORDER BY ts_rank(s.words, to_tsquery('simple', unaccent($2))) DESC, b.id LIMIT $3"
    );
    Ok(hits(c.query(&sql, &[&user_id, &query, &(limit as i64)])?))
}

pub fn tags(c: &mut impl GenericClient, user_id: &str) -> Result<Vec<TagCount>> {
    let sql = format!(
        "SELECT t.name, count(*), count(DISTINCT bt.doc_id) FROM block_tags bt JOIN tags t ON t.id = bt.tag_id
          WHERE bt.doc_id IN ({READABLE}) GROUP BY t.name ORDER BY count(*) DESC, t.name"
    );
    Ok(tag_counts(c.query(&sql, &[&user_id])?))
}

pub fn blocks_with_tag(
    c: &mut impl GenericClient,
    user_id: &str,
    tag: &str,
    limit: usize,
) -> Result<Vec<BlockHit>> {
    let sql = format!(
        "SELECT b.doc_id, d.title, b.id, b.content FROM block_tags bt
           JOIN tags t ON t.id = bt.tag_id JOIN blocks b ON b.id = bt.block_id JOIN documents d ON d.id = b.doc_id
          WHERE t.name = $2 AND bt.doc_id IN ({READABLE}) ORDER BY d.updated_at DESC, b.id LIMIT $3"
    );
    Ok(hits(c.query(&sql, &[&user_id, &tag, &(limit as i64)])?))
}

pub fn backlinks(
    c: &mut impl GenericClient,
    user_id: &str,
    target: &str,
    limit: usize,
) -> Result<Vec<BlockHit>> {
    let sql = format!(
        "SELECT b.doc_id, d.title, b.id, b.content FROM block_links l
           JOIN blocks b ON b.id = l.block_id JOIN documents d ON d.id = b.doc_id
          WHERE l.target_doc_id = $2 AND l.doc_id <> $2 AND NOT b.deleted AND l.doc_id IN ({READABLE})
          ORDER BY d.updated_at DESC, b.id LIMIT $3"
    );
    Ok(hits(c.query(&sql, &[&user_id, &target, &(limit as i64)])?))
}

/// Bullets of the user's guest part found from `source` (which names its bullets `b`)
/// by `tail` (`$2` the argument, `$3` the limit), each titled by its shared bullet's text.
fn guest_hits(
    c: &mut impl GenericClient,
    source: &str,
    tail: &str,
    user_id: &str,
    arg: &str,
    limit: usize,
) -> Result<Vec<BlockHit>> {
    let sql = format!(
        "{} SELECT b.doc_id, r.content, b.id, b.content FROM {source}
           JOIN guest_blocks g ON g.id = b.id JOIN blocks r ON r.id = g.root {tail}",
        guest_blocks_with()
    );
    Ok(hits(c.query(&sql, &[&user_id, &arg, &(limit as i64)])?))
}

pub fn guest_matching_blocks(
    c: &mut impl GenericClient,
    user_id: &str,
    words: &[String],
    limit: usize,
) -> Result<Vec<BlockHit>> {
    let source = "block_search s JOIN blocks b ON b.rid = s.block_rid";
    let tail = "WHERE s.words @@ to_tsquery('simple', unaccent($2))
          ORDER BY ts_rank(s.words, to_tsquery('simple', unaccent($2))) DESC, b.id LIMIT $3";
    guest_hits(c, source, tail, user_id, &ts_query(words), limit)
}

pub fn guest_tags(c: &mut impl GenericClient, user_id: &str) -> Result<Vec<TagCount>> {
    let sql = format!(
        "{} SELECT t.name, count(*), count(DISTINCT bt.doc_id) FROM block_tags bt
           JOIN tags t ON t.id = bt.tag_id JOIN guest_blocks g ON g.id = bt.block_id
          GROUP BY t.name",
        guest_blocks_with()
    );
    Ok(tag_counts(c.query(&sql, &[&user_id])?))
}

pub fn guest_blocks_with_tag(
    c: &mut impl GenericClient,
    user_id: &str,
    tag: &str,
    limit: usize,
) -> Result<Vec<BlockHit>> {
    let source = "block_tags bt JOIN tags t ON t.id = bt.tag_id
           JOIN blocks b ON b.id = bt.block_id JOIN documents d ON d.id = b.doc_id";
    let tail = "WHERE t.name = $2 ORDER BY d.updated_at DESC, b.id LIMIT $3";
    guest_hits(c, source, tail, user_id, tag, limit)
}

pub fn guest_backlinks(
    c: &mut impl GenericClient,
    user_id: &str,
    target: &str,
    limit: usize,
) -> Result<Vec<BlockHit>> {
    let source = "block_links l
           JOIN blocks b ON b.id = l.block_id JOIN documents d ON d.id = b.doc_id";
    let tail = "WHERE l.target_doc_id = $2 AND l.doc_id <> $2
          ORDER BY d.updated_at DESC, b.id LIMIT $3";
    guest_hits(c, source, tail, user_id, target, limit)
}
