//! Derived data on PostgreSQL, written in the same transaction as the change (PROTOCOL §2.1
//! rule 11): the same lines, words, tags and links as SQLite's `storage::derived` (computed
//! by the same Rust functions), and the reads over them — search, tags, a tag's bullets,
//! backlinks, the markdown export — with the same answers for readable documents.

use postgres::GenericClient;

use crate::collab::block::Block;
use crate::storage::sqlite::derived::{
    doc_links, first_tags, markdown_line, MarkdownExport, TagBound,
};
use crate::storage::sqlite::search::{BlockHit, TagCount};

use super::super::error::Result;

/// The readable documents of `$1` as a subquery (owned, shared, in a reached folder; not
/// trashed) — `roles::readable_doc_ids` inline, so a search is one statement.
const READABLE: &str = "SELECT id FROM documents WHERE trashed_at IS NULL AND (
        owner_id = $1
     OR id IN (SELECT doc_id FROM doc_shares WHERE user_id = $1)
     OR id IN (SELECT doc_id FROM doc_team_shares WHERE team_id IN (SELECT team_id FROM team_members WHERE user_id = $1))
     OR folder_id IN (
        WITH RECURSIVE
            roots(id) AS (
                SELECT id FROM folders WHERE owner_id = $1
                UNION SELECT folder_id FROM workspace_folder_shares WHERE kind = 'user' AND principal_id = $1
                UNION SELECT folder_id FROM workspace_folder_shares WHERE kind = 'team'
                       AND principal_id IN (SELECT team_id FROM team_members WHERE user_id = $1)),
            reach(id, depth) AS (
                SELECT id, 0 FROM roots
                UNION SELECT f.id, r.depth + 1 FROM folders f JOIN reach r ON f.parent_id = r.id WHERE r.depth < 64)
        SELECT id FROM reach))";

pub fn refresh_block(
    c: &mut impl GenericClient,
    doc_id: &str,
    rid: i64,
    b: &Block,
    tags: TagBound,
) -> Result<()> {
    forget_block(c, rid, &b.id)?;
    if b.deleted {
        return Ok(());
    }
    c.execute(
        "INSERT INTO markdown_cache (block_rid, doc_id, line) VALUES ($1, $2, $3)",
        &[&rid, &doc_id, &markdown_line(b)],
    )?;
    if !b.content.is_empty() {
        c.execute(
            "INSERT INTO block_search (block_rid, doc_id, words) VALUES ($1, $2, to_tsvector('simple', unaccent($3)))",
            &[&rid, &doc_id, &b.content],
        )?;
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

pub fn forget_block(c: &mut impl GenericClient, rid: i64, block_id: &str) -> Result<()> {
    c.execute("DELETE FROM markdown_cache WHERE block_rid = $1", &[&rid])?;
    c.execute("DELETE FROM block_search WHERE block_rid = $1", &[&rid])?;
    c.execute("DELETE FROM block_tags WHERE block_id = $1", &[&block_id])?;
    c.execute("DELETE FROM block_links WHERE block_id = $1", &[&block_id])?;
    Ok(())
}

/// Free text as a `tsquery`: every word required, the last one as a prefix (as SQLite's
/// `search::fts_query`). Words are letters and digits only, so nothing else reaches the
/// query syntax.
fn ts_query(q: &str) -> Option<String> {
    let words: Vec<String> = q
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .take(16)
        .map(str::to_lowercase)
        .collect();
    let last = words.last()?.clone();
    let mut parts: Vec<String> = words[..words.len() - 1].to_vec();
    parts.push(format!("{last}:*"));
    Some(parts.join(" & "))
}

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

/// Bullets of readable documents with every word (the last as a prefix), best first.
pub fn search(
    c: &mut impl GenericClient,
    user_id: &str,
    q: &str,
    limit: usize,
) -> Result<Vec<BlockHit>> {
    let Some(query) = ts_query(q) else {
        return Ok(Vec::new());
    };
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
    Ok(c.query(&sql, &[&user_id])?
        .iter()
        .map(|r| TagCount {
            tag: r.get(0),
            blocks: r.get(1),
            documents: r.get(2),
        })
        .collect())
}

pub fn blocks_with_tag(
    c: &mut impl GenericClient,
    user_id: &str,
    tag: &str,
    limit: usize,
) -> Result<Vec<BlockHit>> {
    let tag = tag.trim_start_matches('#').to_lowercase();
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

/// The document as markdown, chunk by chunk (see SQLite's `derived::markdown_export`).
pub fn markdown_export(
    c: &mut impl GenericClient,
    doc_id: &str,
    title: &str,
) -> Result<MarkdownExport> {
    let rows = c
        .query(
            "SELECT b.id, b.parent_id, b.order_key, m.line FROM blocks b
               JOIN markdown_cache m ON m.block_rid = b.rid WHERE b.doc_id = $1",
            &[&doc_id],
        )?
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    Ok(MarkdownExport::from_rows(rows, title))
}
