//! Open conflict copies on SQLite (twins of `postgres.rs`).

use rusqlite::{params, Connection, Row};

use super::types::OpenConflict;
use crate::storage::error::Result;
use crate::storage::roles::sqlite::{guest_blocks_with, READABLE_DOC_IDS};

const OPEN: &str = "SELECT c.doc_id, d.title, c.id, c.content, c.version, c.conflict_of,
        CASE WHEN c.conflict_of = 'title' THEN d.title ELSE o.content END,
        CASE WHEN c.conflict_of = 'title' THEN d.title_version ELSE o.version END,
        coalesce(o.deleted, 0), c.conflict_author, c.updated_at
   FROM blocks c
   JOIN documents d ON d.id = c.doc_id
   LEFT JOIN blocks o ON o.id = c.conflict_of AND o.doc_id = c.doc_id
  WHERE c.conflict_of IS NOT NULL AND c.conflict_resolved = 0 AND c.deleted = 0";

fn from_row(r: &Row) -> rusqlite::Result<OpenConflict> {
    let author: Option<String> = r.get(9)?;
    Ok(OpenConflict {
        doc_id: r.get(0)?,
        doc_title: r.get(1)?,
        copy_id: r.get(2)?,
        copy_text: r.get(3)?,
        copy_version: r.get(4)?,
        original_id: r.get(5)?,
        original_text: r.get(6)?,
        original_version: r.get(7)?,
        original_deleted: r.get(8)?,
        author: author.and_then(|a| serde_json::from_str(&a).ok()),
        at: r.get(10)?,
    })
}

/// Open conflicts of one document, oldest first, at most `limit`.
pub fn in_document(conn: &Connection, doc_id: &str, limit: usize) -> Result<Vec<OpenConflict>> {
    let sql = format!("{OPEN} AND c.doc_id = ?1 ORDER BY c.updated_at, c.id LIMIT ?2");
    let rows = conn
        .prepare_cached(&sql)?
        .query_map(params![doc_id, limit as i64], from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// Open conflicts of every document `user_id` can read, oldest first, at most `limit`.
pub fn readable(conn: &Connection, user_id: &str, limit: usize) -> Result<Vec<OpenConflict>> {
    let sql = format!(
        "{OPEN} AND c.doc_id IN ({}) ORDER BY c.updated_at, c.id LIMIT ?2",
        READABLE_DOC_IDS
    );
    let rows = conn
        .prepare_cached(&sql)?
        .query_map(params![user_id, limit as i64], from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

/// Open conflicts inside the bullets shared with `user_id` in documents they cannot read
/// whole: a copy and its original both inside, titled by the shared bullet's text.
pub fn guest_readable(conn: &Connection, user_id: &str, limit: usize) -> Result<Vec<OpenConflict>> {
    let sql = format!(
        "{} SELECT c.doc_id, r.content, c.id, c.content, c.version, c.conflict_of,
                o.content, o.version, o.deleted, c.conflict_author, c.updated_at
           FROM blocks c
           JOIN guest_blocks g ON g.id = c.id JOIN blocks r ON r.id = g.root
           JOIN guest_blocks go ON go.id = c.conflict_of JOIN blocks o ON o.id = c.conflict_of
          WHERE c.conflict_resolved = 0 AND c.deleted = 0
          ORDER BY c.updated_at, c.id LIMIT ?2",
        guest_blocks_with()
    );
    let rows = conn
        .prepare_cached(&sql)?
        .query_map(params![user_id, limit as i64], from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}
