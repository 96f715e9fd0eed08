//! Search, tags, a tag's bullets and backlinks on SQLite (twins of `postgres.rs`), over the
//! readable documents as one subquery; the `guest_` twins over the bullets shared with the
//! user in documents they cannot read whole, each hit titled by its shared bullet.

use rusqlite::{params, Connection};

use super::types::{BlockHit, TagCount};
use crate::storage::error::Result;
use crate::storage::roles::sqlite::{guest_blocks_with, READABLE_DOC_IDS};

/// Every word quoted (no operator reaches FTS5), all required, the last one as a prefix.
fn fts_query(words: &[String]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("\"{w}\"")).collect();
    format!("{}*", quoted.join(" "))
}

/// Bullets found by `sql` (`?1` the user, `?2` the argument), as hits.
fn hits(conn: &Connection, sql: &str, user_id: &str, arg: &str) -> Result<Vec<BlockHit>> {
    let rows = conn
        .prepare_cached(sql)?
        .query_map(params![user_id, arg], |r| {
            Ok(BlockHit {
                doc_id: r.get(0)?,
                doc_title: r.get(1)?,
                block_id: r.get(2)?,
                content: r.get(3)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

pub fn matching_blocks(
    conn: &Connection,
    user_id: &str,
    words: &[String],
    limit: usize,
) -> Result<Vec<BlockHit>> {
    let query = fts_query(words);
    let sql = format!(
        "SELECT b.doc_id, d.title, b.id, b.content FROM block_search s
         JOIN blocks b ON b.rid = s.rowid JOIN documents d ON d.id = b.doc_id
         WHERE block_search MATCH ?2 AND b.doc_id IN ({}) ORDER BY rank LIMIT {}",
        READABLE_DOC_IDS, limit
    );
    hits(conn, &sql, user_id, &query)
}

pub fn tags(conn: &Connection, user_id: &str) -> Result<Vec<TagCount>> {
    let sql = format!(
        "SELECT t.name, count(*), count(DISTINCT bt.doc_id) FROM block_tags bt JOIN tags t ON t.id = bt.tag_id
         WHERE bt.doc_id IN ({}) GROUP BY t.name ORDER BY count(*) DESC, t.name",
        READABLE_DOC_IDS
    );
    tag_counts(conn, &sql, user_id)
}

/// Tags counted by `sql` (`?1` the user; name, bullets, documents).
fn tag_counts(conn: &Connection, sql: &str, user_id: &str) -> Result<Vec<TagCount>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map([user_id], |r| {
        Ok(TagCount {
            tag: r.get(0)?,
            blocks: r.get(1)?,
            documents: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

pub fn blocks_with_tag(
    conn: &Connection,
    user_id: &str,
    tag: &str,
    limit: usize,
) -> Result<Vec<BlockHit>> {
    let sql = format!(
        "SELECT b.doc_id, d.title, b.id, b.content FROM block_tags bt
         JOIN tags t ON t.id = bt.tag_id JOIN blocks b ON b.id = bt.block_id JOIN documents d ON d.id = b.doc_id
         WHERE t.name = ?2 AND bt.doc_id IN ({}) ORDER BY d.updated_at DESC, b.id LIMIT {}",
        READABLE_DOC_IDS,
        limit
    );
    hits(conn, &sql, user_id, tag)
}

/// Bullets that link to `target` (`[[target]]`) from other documents the user can read,
/// most recently changed documents first.
pub fn backlinks(
    conn: &Connection,
    user_id: &str,
    target: &str,
    limit: usize,
) -> Result<Vec<BlockHit>> {
    let sql = format!(
        "SELECT b.doc_id, d.title, b.id, b.content FROM block_links l
         JOIN blocks b ON b.id = l.block_id JOIN documents d ON d.id = b.doc_id
         WHERE l.target_doc_id = ?2 AND l.doc_id <> ?2 AND b.deleted = 0 AND l.doc_id IN ({})
         ORDER BY d.updated_at DESC, b.id LIMIT {}",
        READABLE_DOC_IDS, limit
    );
    hits(conn, &sql, user_id, target)
}

/// Bullets of the user's guest part found from `source` (which names its bullets `b`)
/// by `tail` (`?2` the argument), each titled by its shared bullet's text.
fn guest_hits(
    conn: &Connection,
    source: &str,
    tail: &str,
    user_id: &str,
    arg: &str,
) -> Result<Vec<BlockHit>> {
    let sql = format!(
        "{} SELECT b.doc_id, r.content, b.id, b.content FROM {source}
         JOIN guest_blocks g ON g.id = b.id JOIN blocks r ON r.id = g.root {tail}",
        guest_blocks_with()
    );
    hits(conn, &sql, user_id, arg)
}

pub fn guest_matching_blocks(
    conn: &Connection,
    user_id: &str,
    words: &[String],
    limit: usize,
) -> Result<Vec<BlockHit>> {
    let source = "block_search s JOIN blocks b ON b.rid = s.rowid";
    let tail = format!("WHERE block_search MATCH ?2 ORDER BY rank LIMIT {limit}");
    guest_hits(conn, source, &tail, user_id, &fts_query(words))
}

pub fn guest_tags(conn: &Connection, user_id: &str) -> Result<Vec<TagCount>> {
    let sql = format!(
        "{} SELECT t.name, count(*), count(DISTINCT bt.doc_id) FROM block_tags bt
         JOIN tags t ON t.id = bt.tag_id JOIN guest_blocks g ON g.id = bt.block_id
         GROUP BY t.name",
        guest_blocks_with()
    );
    tag_counts(conn, &sql, user_id)
}

pub fn guest_blocks_with_tag(
    conn: &Connection,
    user_id: &str,
    tag: &str,
    limit: usize,
) -> Result<Vec<BlockHit>> {
    let source = "block_tags bt JOIN tags t ON t.id = bt.tag_id
         JOIN blocks b ON b.id = bt.block_id JOIN documents d ON d.id = b.doc_id";
    let tail = format!("WHERE t.name = ?2 ORDER BY d.updated_at DESC, b.id LIMIT {limit}");
    guest_hits(conn, source, &tail, user_id, tag)
}

pub fn guest_backlinks(
    conn: &Connection,
    user_id: &str,
    target: &str,
    limit: usize,
) -> Result<Vec<BlockHit>> {
    let source = "block_links l
         JOIN blocks b ON b.id = l.block_id JOIN documents d ON d.id = b.doc_id";
    let tail = format!(
        "WHERE l.target_doc_id = ?2 AND l.doc_id <> ?2 ORDER BY d.updated_at DESC, b.id LIMIT {limit}"
    );
    guest_hits(conn, source, &tail, user_id, target)
}
