//! Open conflict copies on PostgreSQL (twins of `sqlite.rs`).

use postgres::{GenericClient, Row};

use super::types::OpenConflict;
use crate::storage::error::Result;
use crate::storage::roles::postgres::{guest_blocks_with, READABLE_DOC_IDS};

const OPEN: &str = "SELECT c.doc_id, d.title, c.id, c.content, c.version, c.conflict_of,
        CASE WHEN c.conflict_of = 'title' THEN d.title ELSE o.content END,
        CASE WHEN c.conflict_of = 'title' THEN d.title_version ELSE o.version END,
        coalesce(o.deleted, false), c.conflict_author, c.updated_at
   FROM blocks c
   JOIN documents d ON d.id = c.doc_id
   LEFT JOIN blocks o ON o.id = c.conflict_of AND o.doc_id = c.doc_id
  WHERE c.conflict_of IS NOT NULL AND NOT c.conflict_resolved AND NOT c.deleted";

fn conflict_from_row(r: &Row) -> OpenConflict {
    let author: Option<String> = r.get(9);
    OpenConflict {
        doc_id: r.get(0),
        doc_title: r.get(1),
        copy_id: r.get(2),
        copy_text: r.get(3),
        copy_version: r.get(4),
        original_id: r.get(5),
        original_text: r.get(6),
        original_version: r.get(7),
        original_deleted: r.get(8),
        author: author.and_then(|a| serde_json::from_str(&a).ok()),
        at: r.get(10),
    }
}

pub fn in_document(
    c: &mut impl GenericClient,
    doc_id: &str,
    limit: usize,
) -> Result<Vec<OpenConflict>> {
    let sql = format!("{OPEN} AND c.doc_id = $1 ORDER BY c.updated_at, c.id LIMIT $2");
    Ok(c.query(&sql, &[&doc_id, &(limit as i64)])?
        .iter()
        .map(conflict_from_row)
        .collect())
}

/// Open conflict copies in every document the user can read, oldest first.
pub fn readable(
    c: &mut impl GenericClient,
    user_id: &str,
    limit: usize,
) -> Result<Vec<OpenConflict>> {
    let sql =
        format!("{OPEN} AND c.doc_id IN ({READABLE_DOC_IDS}) ORDER BY c.updated_at, c.id LIMIT $2");
    Ok(c.query(&sql, &[&user_id, &(limit as i64)])?
        .iter()
        .map(conflict_from_row)
        .collect())
}

/// Open conflicts inside the bullets shared with the user (as SQLite's `guest_readable`).
pub fn guest_readable(
    c: &mut impl GenericClient,
    user_id: &str,
    limit: usize,
) -> Result<Vec<OpenConflict>> {
    let sql = format!(
        "{} SELECT c.doc_id, r.content, c.id, c.content, c.version, c.conflict_of,
                o.content, o.version, o.deleted, c.conflict_author, c.updated_at
           FROM blocks c
           JOIN guest_blocks g ON g.id = c.id JOIN blocks r ON r.id = g.root
           JOIN guest_blocks go ON go.id = c.conflict_of JOIN blocks o ON o.id = c.conflict_of
          WHERE NOT c.conflict_resolved AND NOT c.deleted
          ORDER BY c.updated_at, c.id LIMIT $2",
        guest_blocks_with()
    );
    Ok(c.query(&sql, &[&user_id, &(limit as i64)])?
        .iter()
        .map(conflict_from_row)
        .collect())
}
