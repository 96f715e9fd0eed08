//! Open conflict copies (PROTOCOL §8 conflict review): every live copy not yet marked
//! resolved, with the text it was made from and the original's text now, in the order they
//! were made. Resolving is ordinary ops of the reviewer (accept: the copy's text into the
//! original and the copy deleted; discard: the copy deleted; keep both: `conflictResolved`).

use rusqlite::{params, Connection, Row};
use serde::Serialize;

use crate::collab::block::Author;

use super::roles;
use crate::storage::error::Result;

/// One open conflict copy and its original.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenConflict {
    pub doc_id: String,
    pub doc_title: String,
    /// The copy holding the text that was not applied.
    pub copy_id: String,
    pub copy_text: String,
    pub copy_version: i64,
    /// The bullet it belongs to (`"title"` for the document's title).
    pub original_id: String,
    /// The original's text now (`None` when it is gone for good).
    pub original_text: Option<String>,
    pub original_version: Option<i64>,
    pub original_deleted: bool,
    /// Who wrote the copy's text.
    pub author: Option<Author>,
    /// When the copy was made (or last edited).
    pub at: i64,
}

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
        roles::READABLE_DOC_IDS
    );
    let rows = conn
        .prepare_cached(&sql)?
        .query_map(params![user_id, limit as i64], from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}
