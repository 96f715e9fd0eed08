//! What compaction, the trash and the conflict review read and remove, on PostgreSQL: the
//! same typed functions as SQLite's `storage::compaction`, `storage::trash` and
//! `storage::conflicts`, the same answers (`backend_tests.rs`).

use postgres::{GenericClient, Row};

use crate::storage::sqlite::compaction::Retention;
use crate::storage::sqlite::conflicts::OpenConflict;
use crate::storage::sqlite::trash::TrashedDoc;

use super::super::error::Result;

// ---- compaction ----------------------------------------------------------------------------

pub fn due_documents(c: &mut impl GenericClient, now: i64, r: &Retention) -> Result<Vec<String>> {
    let log_cutoff = now - r.shared_log_ms.min(r.private_log_ms);
    Ok(c
        .query(
            "SELECT d.id FROM documents d
              WHERE EXISTS (SELECT 1 FROM doc_ops o WHERE o.doc_id = d.id AND o.seq > d.log_floor AND o.at < $1)
                 OR EXISTS (SELECT 1 FROM doc_ops o WHERE o.doc_id = d.id AND o.seq <= d.log_floor)
                 OR EXISTS (SELECT 1 FROM blocks b WHERE b.doc_id = d.id AND b.deleted AND b.deleted_at < $2)
                 OR EXISTS (SELECT 1 FROM doc_op_results x WHERE x.doc_id = d.id AND x.at < $3)
              ORDER BY d.id",
            &[&log_cutoff, &(now - r.tombstone_ms), &(now - r.results_ms)],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

/// Moves the floor up to the newest entry written before `cutoff` (never down, never past
/// `head`); returns the floor in force.
pub fn raise_floor(
    c: &mut impl GenericClient,
    doc_id: &str,
    cutoff: i64,
    head: i64,
) -> Result<i64> {
    let newest_old: Option<i64> = c
        .query_one(
            "SELECT max(seq) FROM doc_ops WHERE doc_id = $1 AND at < $2 AND seq <= $3",
            &[&doc_id, &cutoff, &head],
        )?
        .get(0);
    if let Some(f) = newest_old {
        c.execute(
            "UPDATE documents SET log_floor = greatest(log_floor, $2) WHERE id = $1",
            &[&doc_id, &f],
        )?;
    }
    Ok(
        c.query_one("SELECT log_floor FROM documents WHERE id = $1", &[&doc_id])?
            .get(0),
    )
}

pub fn delete_block_changes(c: &mut impl GenericClient, doc_id: &str, floor: i64) -> Result<usize> {
    Ok(c.execute(
        "DELETE FROM block_changes WHERE doc_id = $1 AND seq <= $2",
        &[&doc_id, &floor],
    )? as usize)
}

pub fn delete_log_chunk(
    c: &mut impl GenericClient,
    doc_id: &str,
    floor: i64,
    limit: usize,
) -> Result<usize> {
    Ok(c.execute(
        "DELETE FROM doc_ops WHERE doc_id = $1 AND seq IN
           (SELECT seq FROM doc_ops WHERE doc_id = $1 AND seq <= $2 ORDER BY seq LIMIT $3)",
        &[&doc_id, &floor, &(limit as i64)],
    )? as usize)
}

pub fn delete_results_chunk(
    c: &mut impl GenericClient,
    doc_id: &str,
    cutoff: i64,
    limit: usize,
) -> Result<usize> {
    Ok(c.execute(
        "DELETE FROM doc_op_results WHERE doc_id = $1 AND op_id IN
           (SELECT op_id FROM doc_op_results WHERE doc_id = $1 AND at < $2 LIMIT $3)",
        &[&doc_id, &cutoff, &(limit as i64)],
    )? as usize)
}

// ---- the trash -----------------------------------------------------------------------------

pub fn trash(c: &mut impl GenericClient, doc_id: &str, by: &str, now: i64) -> Result<bool> {
    Ok(c.execute(
        "UPDATE documents SET trashed_at = $2, trashed_by = $3 WHERE id = $1 AND trashed_at IS NULL",
        &[&doc_id, &now, &by],
    )? == 1)
}

pub fn list_trash(
    c: &mut impl GenericClient,
    owner: &str,
    keep_ms: i64,
) -> Result<Vec<TrashedDoc>> {
    Ok(c.query(
        "SELECT d.id, d.title, d.icon, d.trashed_at,
                    (SELECT count(*) FROM blocks b WHERE b.doc_id = d.id AND NOT b.deleted)
               FROM documents d WHERE d.owner_id = $1 AND d.trashed_at IS NOT NULL
              ORDER BY d.trashed_at DESC, d.id",
        &[&owner],
    )?
    .iter()
    .map(|r| {
        let at: i64 = r.get(3);
        TrashedDoc {
            doc_id: r.get(0),
            title: r.get(1),
            icon: r.get(2),
            trashed_at: at,
            purge_at: at + keep_ms,
            blocks: r.get(4),
        }
    })
    .collect())
}

pub fn is_trashed_by_owner(c: &mut impl GenericClient, doc_id: &str, owner: &str) -> Result<bool> {
    Ok(c.query_one(
        "SELECT EXISTS(SELECT 1 FROM documents WHERE id = $1 AND owner_id = $2 AND trashed_at IS NOT NULL)",
        &[&doc_id, &owner],
    )?
    .get(0))
}

pub fn untrash(c: &mut impl GenericClient, doc_id: &str, owner: &str) -> Result<bool> {
    Ok(c.execute(
        "UPDATE documents SET trashed_at = NULL, trashed_by = NULL
          WHERE id = $1 AND owner_id = $2 AND trashed_at IS NOT NULL",
        &[&doc_id, &owner],
    )? == 1)
}

pub fn trash_due(c: &mut impl GenericClient, cutoff: i64) -> Result<Vec<String>> {
    Ok(c.query(
        "SELECT id FROM documents WHERE trashed_at IS NOT NULL AND trashed_at < $1 ORDER BY id",
        &[&cutoff],
    )?
    .iter()
    .map(|r| r.get(0))
    .collect())
}

// ---- open conflicts ------------------------------------------------------------------------

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

pub fn conflicts_in_document(
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
pub fn conflicts_readable(
    c: &mut impl GenericClient,
    user_id: &str,
    limit: usize,
) -> Result<Vec<OpenConflict>> {
    let ids = super::roles::readable_doc_ids(c, user_id)?;
    let sql = format!("{OPEN} AND c.doc_id = ANY($1) ORDER BY c.updated_at, c.id LIMIT $2");
    Ok(c.query(&sql, &[&ids, &(limit as i64)])?
        .iter()
        .map(conflict_from_row)
        .collect())
}
