//! Derived data on PostgreSQL, written in the same transaction as the change (PROTOCOL §2.1
//! rule 11): the same lines, words, tags and links as `sqlite.rs` (computed by the same
//! functions in `types.rs`), and the markdown export's rows.

use postgres::GenericClient;

use super::types::{doc_links, first_tags, markdown_line, MarkdownRow, TagBound};
use crate::collab::block::Block;
use crate::storage::error::Result;
use crate::storage::postgres::kept::Kept;

/// A block's derived rows written again. Its statements come from `kept`: on the writer
/// they are prepared once per connection (every op runs them).
pub fn refresh_block(
    c: &mut impl GenericClient,
    kept: &mut Kept,
    doc_id: &str,
    rid: i64,
    b: &Block,
    tags: TagBound,
) -> Result<()> {
    forget_block(c, kept, rid, &b.id)?;
    if b.deleted {
        return Ok(());
    }
    let line = kept.get(
        c,
        "INSERT INTO markdown_cache (block_rid, doc_id, line) VALUES ($1, $2, $3)",
    )?;
    c.execute(&line, &[&rid, &doc_id, &markdown_line(b)])?;
    if !b.content.is_empty() {
        let words = kept.get(
            c,
            "INSERT INTO block_search (block_rid, doc_id, words) VALUES ($1, $2, to_tsvector('simple', unaccent($3)))",
        )?;
        c.execute(&words, &[&rid, &doc_id, &b.content])?;
    }
    for tag in first_tags(&b.content, tags) {
        c.execute(
            "INSERT INTO tags (name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
            &[&tag],
        )?;
        c.execute(
            "INSERT INTO block_tags (block_id, tag_id, doc_id) SELECT $1, id, $2 FROM tags WHERE name = $3
             ON CONFLICT DO NOTHING",
            &[&b.id, &doc_id, &tag],
        )?;
    }
    if b.content.contains("[[doc_") {
        for target in doc_links(&b.content) {
            c.execute(
                "INSERT INTO block_links (block_id, doc_id, target_doc_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                &[&b.id, &doc_id, &target],
            )?;
        }
    }
    Ok(())
}

/// A block's derived rows removed: one statement (its four deletes as one round trip).
pub fn forget_block(
    c: &mut impl GenericClient,
    kept: &mut Kept,
    rid: i64,
    block_id: &str,
) -> Result<()> {
    let forget = kept.get(
        c,
        "WITH m AS (DELETE FROM markdown_cache WHERE block_rid = $1),
              s AS (DELETE FROM block_search WHERE block_rid = $1),
              t AS (DELETE FROM block_tags WHERE block_id = $2)
         DELETE FROM block_links WHERE block_id = $2",
    )?;
    c.execute(&forget, &[&rid, &block_id])?;
    Ok(())
}

pub fn markdown_rows(c: &mut impl GenericClient, doc_id: &str) -> Result<Vec<MarkdownRow>> {
    Ok(c.query(
        "SELECT b.id, b.parent_id, b.order_key, m.line FROM blocks b
           JOIN markdown_cache m ON m.block_rid = b.rid WHERE b.doc_id = $1",
        &[&doc_id],
    )?
    .iter()
    .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
    .collect())
}
