//! Derived rows on SQLite (twins of `postgres.rs`), written in the same transaction as the
//! bullets they come from (rule 11). Only live blocks have any.

use rusqlite::{params, Connection};

use super::types::{doc_links, first_tags, markdown_line, MarkdownRow, TagBound};
use crate::collab::block::Block;
use crate::storage::error::Result;

pub fn refresh_block(
    conn: &Connection,
    doc_id: &str,
    rid: i64,
    b: &Block,
    tags: TagBound,
) -> Result<()> {
    forget_block(conn, rid, &b.id)?;
    if b.deleted {
        return Ok(());
    }
    conn.prepare_cached(
        "INSERT INTO markdown_cache (block_rid, doc_id, line) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![rid, doc_id, markdown_line(b)])?;
    if !b.content.is_empty() {
        conn.prepare_cached("INSERT INTO block_search (rowid, content) VALUES (?1, ?2)")?
            .execute(params![rid, b.content])?;
    }
    for tag in first_tags(&b.content, tags) {
        conn.prepare_cached("INSERT INTO tags (name) VALUES (?1) ON CONFLICT(name) DO NOTHING")?
            .execute([&tag])?;
        conn.prepare_cached(
            "INSERT OR IGNORE INTO block_tags (block_id, tag_id, doc_id)
             SELECT ?1, id, ?2 FROM tags WHERE name = ?3",
        )?
        .execute(params![b.id, doc_id, tag])?;
    }
    if b.content.contains("[[doc_") {
        for target in doc_links(&b.content) {
            conn.prepare_cached(
                "INSERT OR IGNORE INTO block_links (block_id, doc_id, target_doc_id) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![b.id, doc_id, target])?;
        }
    }
    Ok(())
}

pub fn forget_block(conn: &Connection, rid: i64, block_id: &str) -> Result<()> {
    conn.prepare_cached("DELETE FROM markdown_cache WHERE block_rid = ?1")?
        .execute([rid])?;
    conn.prepare_cached("DELETE FROM block_search WHERE rowid = ?1")?
        .execute([rid])?;
    conn.prepare_cached("DELETE FROM block_tags WHERE block_id = ?1")?
        .execute([block_id])?;
    conn.prepare_cached("DELETE FROM block_links WHERE block_id = ?1")?
        .execute([block_id])?;
    Ok(())
}

pub fn forget_document(conn: &Connection, doc_id: &str) -> Result<()> {
    conn.execute(
        "DELETE FROM block_search WHERE rowid IN (SELECT rid FROM blocks WHERE doc_id = ?1)",
        [doc_id],
    )?;
    conn.execute("DELETE FROM markdown_cache WHERE doc_id = ?1", [doc_id])?;
    conn.execute("DELETE FROM block_tags WHERE doc_id = ?1", [doc_id])?;
    conn.execute("DELETE FROM block_links WHERE doc_id = ?1", [doc_id])?;
    conn.execute("DELETE FROM block_changes WHERE doc_id = ?1", [doc_id])?;
    Ok(())
}

/// (id, parent, order key, markdown line) of every live bullet, for the export.
pub fn markdown_rows(conn: &Connection, doc_id: &str) -> Result<Vec<MarkdownRow>> {
    let mut stmt = conn.prepare_cached(
        "SELECT b.id, b.parent_id, b.order_key, m.line FROM blocks b
         JOIN markdown_cache m ON m.block_rid = b.rid WHERE b.doc_id = ?1",
    )?;
    let rows = stmt
        .query_map([doc_id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}
