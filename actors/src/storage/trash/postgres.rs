//! The trash on PostgreSQL (twins of `sqlite.rs`).

use postgres::GenericClient;

use super::types::TrashedDoc;
use crate::storage::error::Result;

pub fn trash(c: &mut impl GenericClient, doc_id: &str, by: &str, now: i64) -> Result<bool> {
    Ok(c.execute(
        "UPDATE documents SET trashed_at = $2, trashed_by = $3 WHERE id = $1 AND trashed_at IS NULL",
        &[&doc_id, &now, &by],
    )? == 1)
}

pub fn list(c: &mut impl GenericClient, owner: &str) -> Result<Vec<TrashedDoc>> {
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
            purge_at: at,
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

pub fn due(c: &mut impl GenericClient, cutoff: i64) -> Result<Vec<String>> {
    Ok(c.query(
        "SELECT id FROM documents WHERE trashed_at IS NOT NULL AND trashed_at < $1 ORDER BY id",
        &[&cutoff],
    )?
    .iter()
    .map(|r| r.get(0))
    .collect())
}
