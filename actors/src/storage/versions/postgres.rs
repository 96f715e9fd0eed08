//! Versions on PostgreSQL (twins of `sqlite.rs`): the reservation is fenced by the head and,
//! in cluster mode, by the owner's epoch.

use postgres::{GenericClient, Row};

use super::types::{decode, NewVersion, Retained, VersionKind, VersionMeta, VersionState};
use crate::storage::error::{Result, StorageError};

/// Reserves a version's row in the document's op order: refused unless the head is the
/// version's `seq` and the document is still this owner's (`epoch`).
pub fn reserve(c: &mut impl GenericClient, v: &NewVersion, epoch: i64) -> Result<()> {
    let at = c.query_opt(
        "SELECT head_seq, owner_epoch FROM documents WHERE id = $1 FOR SHARE",
        &[&v.doc_id],
    )?;
    match at {
        None => return Err(StorageError::DocNotFound(v.doc_id.clone())),
        Some(r) if r.get::<_, i64>(1) != epoch => {
            return Err(StorageError::NotOwner {
                doc: v.doc_id.clone(),
                epoch,
            })
        }
        Some(r) if r.get::<_, i64>(0) != v.seq => {
            return Err(StorageError::HeadMismatch {
                doc: v.doc_id.clone(),
                expected: v.seq,
            })
        }
        Some(_) => {}
    }
    c.execute(
        "INSERT INTO doc_versions (id, doc_id, seq, at, kind, name, created_by, blocks, raw_bytes, body)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 0, NULL)",
        &[
            &v.version_id,
            &v.doc_id,
            &v.seq,
            &v.at,
            &v.kind.as_str(),
            &v.name,
            &v.created_by,
            &(v.state.blocks.len() as i64),
        ],
    )?;
    Ok(())
}

pub fn fill(
    c: &mut impl GenericClient,
    doc_id: &str,
    version_id: &str,
    body: &[u8],
    raw: usize,
) -> Result<VersionMeta> {
    c.execute(
        "UPDATE doc_versions SET body = $3, raw_bytes = $4 WHERE doc_id = $1 AND id = $2 AND body IS NULL",
        &[&doc_id, &version_id, &body, &(raw as i64)],
    )?;
    meta(c, doc_id, version_id)?
        .ok_or_else(|| StorageError::Corrupt("a reserved version is gone".into()))
}

pub fn forget_unfilled(c: &mut impl GenericClient, before: i64) -> Result<usize> {
    Ok(c.execute(
        "DELETE FROM doc_versions WHERE body IS NULL AND at < $1",
        &[&before],
    )? as usize)
}

const META: &str = "SELECT v.id, v.seq, v.at, v.kind, v.name, v.created_by, u.display_name,
        v.blocks, v.raw_bytes, octet_length(v.body)::bigint
   FROM doc_versions v LEFT JOIN users u ON u.id = v.created_by";

fn meta_from_row(r: &Row) -> VersionMeta {
    let kind = VersionKind::parse(r.get(3));
    VersionMeta {
        version_id: r.get(0),
        seq: r.get(1),
        at: r.get(2),
        name: r.get(4),
        created_by: r.get(5),
        created_by_name: r.get(6),
        auto: kind != VersionKind::Named,
        kind,
        blocks: r.get(7),
        raw_bytes: r.get(8),
        stored_bytes: r.get(9),
    }
}

pub fn list(c: &mut impl GenericClient, doc_id: &str) -> Result<Vec<VersionMeta>> {
    let sql = format!(
        "{META} WHERE v.doc_id = $1 AND v.body IS NOT NULL ORDER BY v.seq DESC, v.at DESC, v.id"
    );
    Ok(c.query(&sql, &[&doc_id])?
        .iter()
        .map(meta_from_row)
        .collect())
}

pub fn meta(
    c: &mut impl GenericClient,
    doc_id: &str,
    version_id: &str,
) -> Result<Option<VersionMeta>> {
    let sql = format!("{META} WHERE v.doc_id = $1 AND v.id = $2 AND v.body IS NOT NULL");
    Ok(c.query_opt(&sql, &[&doc_id, &version_id])?
        .as_ref()
        .map(meta_from_row))
}

pub fn get(
    c: &mut impl GenericClient,
    doc_id: &str,
    version_id: &str,
) -> Result<Option<(VersionMeta, VersionState)>> {
    let Some(m) = meta(c, doc_id, version_id)? else {
        return Ok(None);
    };
    let body: Vec<u8> = c
        .query_one(
            "SELECT body FROM doc_versions WHERE id = $1 AND body IS NOT NULL",
            &[&version_id],
        )?
        .get(0);
    Ok(Some((m, decode(&body)?)))
}

/// Versions at or below `seq`, newest first, with their states (a bullet's history past
/// the log floor reads these).
pub fn states_at_or_below(
    c: &mut impl GenericClient,
    doc_id: &str,
    seq: i64,
    limit: usize,
) -> Result<Vec<(VersionMeta, VersionState)>> {
    let sql = format!(
        "{META} WHERE v.doc_id = $1 AND v.seq <= $2 AND v.body IS NOT NULL ORDER BY v.seq DESC, v.at DESC LIMIT $3"
    );
    let metas: Vec<VersionMeta> = c
        .query(&sql, &[&doc_id, &seq, &(limit as i64)])?
        .iter()
        .map(meta_from_row)
        .collect();
    let mut out = Vec::with_capacity(metas.len());
    for m in metas {
        if let Some(found) = get(c, doc_id, &m.version_id)? {
            out.push(found);
        }
    }
    Ok(out)
}

pub fn latest(c: &mut impl GenericClient, doc_id: &str) -> Result<Option<(i64, i64)>> {
    Ok(c.query_opt(
        "SELECT seq, at FROM doc_versions WHERE doc_id = $1 AND body IS NOT NULL
              ORDER BY seq DESC, at DESC LIMIT 1",
        &[&doc_id],
    )?
    .map(|r| (r.get(0), r.get(1))))
}

pub fn rename(
    c: &mut impl GenericClient,
    doc_id: &str,
    version_id: &str,
    name: &str,
) -> Result<bool> {
    Ok(c.execute(
        "UPDATE doc_versions SET name = $3, kind = 'named' WHERE doc_id = $1 AND id = $2 AND body IS NOT NULL",
        &[&doc_id, &version_id, &name],
    )? == 1)
}

pub fn delete_named(
    c: &mut impl GenericClient,
    doc_id: &str,
    version_id: &str,
) -> Result<Option<bool>> {
    let Some(m) = meta(c, doc_id, version_id)? else {
        return Ok(None);
    };
    if m.kind != VersionKind::Named {
        return Ok(Some(false));
    }
    c.execute("DELETE FROM doc_versions WHERE id = $1", &[&version_id])?;
    Ok(Some(true))
}

pub fn automatic_older_than(c: &mut impl GenericClient, older_than: i64) -> Result<Vec<Retained>> {
    Ok(c
        .query(
            "SELECT id, doc_id, at FROM doc_versions WHERE kind <> 'named' AND at < $1 AND body IS NOT NULL
              ORDER BY doc_id, at, id",
            &[&older_than],
        )?
        .iter()
        .map(|r| Retained {
            version_id: r.get(0),
            doc_id: r.get(1),
            at: r.get(2),
        })
        .collect())
}

pub fn delete_ids(c: &mut impl GenericClient, ids: &[String]) -> Result<usize> {
    Ok(c.execute("DELETE FROM doc_versions WHERE id = ANY($1)", &[&ids])? as usize)
}

pub fn totals(c: &mut impl GenericClient) -> Result<(i64, i64)> {
    let r = c.query_one(
        "SELECT count(*), coalesce(sum(octet_length(body)), 0)::bigint FROM doc_versions WHERE body IS NOT NULL",
        &[],
    )?;
    Ok((r.get(0), r.get(1)))
}
