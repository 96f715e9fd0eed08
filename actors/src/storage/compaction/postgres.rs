//! The compaction pass's reads and chunked deletes on PostgreSQL (twins of `sqlite.rs`).

use postgres::GenericClient;

use super::types::Cutoffs;
use crate::storage::error::Result;

pub fn due_documents(c: &mut impl GenericClient, at: &Cutoffs) -> Result<Vec<String>> {
    Ok(c
        .query(
            "SELECT d.id FROM documents d
              WHERE EXISTS (SELECT 1 FROM doc_ops o WHERE o.doc_id = d.id AND o.seq > d.log_floor AND o.at < $1)
                 OR EXISTS (SELECT 1 FROM doc_ops o WHERE o.doc_id = d.id AND o.seq <= d.log_floor)
                 OR EXISTS (SELECT 1 FROM blocks b WHERE b.doc_id = d.id AND b.deleted AND b.deleted_at < $2)
                 OR EXISTS (SELECT 1 FROM doc_op_results x WHERE x.doc_id = d.id AND x.at < $3)
              ORDER BY d.id",
            &[&at.log, &at.tombstones, &at.results],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

pub fn newest_entry_before(
    c: &mut impl GenericClient,
    doc_id: &str,
    cutoff: i64,
    head: i64,
) -> Result<Option<i64>> {
    Ok(c.query_one(
        "SELECT max(seq) FROM doc_ops WHERE doc_id = $1 AND at < $2 AND seq <= $3",
        &[&doc_id, &cutoff, &head],
    )?
    .get(0))
}

pub fn raise_floor_to(c: &mut impl GenericClient, doc_id: &str, floor: i64) -> Result<()> {
    c.execute(
        "UPDATE documents SET log_floor = greatest(log_floor, $2) WHERE id = $1",
        &[&doc_id, &floor],
    )?;
    Ok(())
}

pub fn floor(c: &mut impl GenericClient, doc_id: &str) -> Result<i64> {
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
