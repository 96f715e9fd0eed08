//! Full-text search and tag lookups over the documents a user can read.

use rusqlite::{params, Connection};
use serde::Serialize;

use super::roles;
use crate::storage::error::Result;

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlockHit {
    pub doc_id: String,
    pub doc_title: String,
    pub block_id: String,
    pub content: String,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TagCount {
    pub tag: String,
    pub blocks: i64,
    pub documents: i64,
}

/// Turns free text into a safe FTS5 query: every word quoted (no operator injection), all
/// words required, the last one as a prefix so results appear while typing.
pub fn fts_query(q: &str) -> Option<String> {
    let words: Vec<String> = q
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(16)
        .map(|w| format!("\"{}\"", w.to_lowercase()))
        .collect();
    if words.is_empty() {
        return None;
    }
    let mut s = words.join(" ");
    s.push('*');
    Some(s)
}

pub fn search(conn: &Connection, user_id: &str, q: &str, limit: usize) -> Result<Vec<BlockHit>> {
    let Some(query) = fts_query(q) else {
        return Ok(Vec::new());
    };
    let sql = format!(
        "SELECT b.doc_id, d.title, b.id, b.content FROM block_search s
         JOIN blocks b ON b.rid = s.rowid JOIN documents d ON d.id = b.doc_id
         WHERE block_search MATCH ?2 AND b.doc_id IN ({}) ORDER BY rank LIMIT {}",
        roles::READABLE_DOC_IDS,
        limit
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![user_id, query], |r| {
        Ok(BlockHit {
            doc_id: r.get(0)?,
            doc_title: r.get(1)?,
            block_id: r.get(2)?,
            content: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}

pub fn tags(conn: &Connection, user_id: &str) -> Result<Vec<TagCount>> {
    let sql = format!(
        "SELECT t.name, count(*), count(DISTINCT bt.doc_id) FROM block_tags bt JOIN tags t ON t.id = bt.tag_id
         WHERE bt.doc_id IN ({}) GROUP BY t.name ORDER BY count(*) DESC, t.name",
        roles::READABLE_DOC_IDS
    );
    let mut stmt = conn.prepare_cached(&sql)?;
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
        roles::READABLE_DOC_IDS,
        limit
    );
    let tag = tag.trim_start_matches('#').to_lowercase();
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![user_id, tag], |r| {
        Ok(BlockHit {
            doc_id: r.get(0)?,
            doc_title: r.get(1)?,
            block_id: r.get(2)?,
            content: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
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
        roles::READABLE_DOC_IDS,
        limit
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(params![user_id, target], |r| {
        Ok(BlockHit {
            doc_id: r.get(0)?,
            doc_title: r.get(1)?,
            block_id: r.get(2)?,
            content: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}
