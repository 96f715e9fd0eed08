//! Versions on SQLite (twins of `postgres.rs`); the two-step write is described in `mod.rs`.

use rusqlite::{params, Connection, OptionalExtension, Row};

use super::types::{decode, NewVersion, Retained, VersionKind, VersionMeta, VersionState};
use crate::storage::error::{Result, StorageError};

/// Reserves a version's row (body still empty); fails with `HeadMismatch` (and writes
/// nothing) unless the document's head on disk is the version's `seq`. Runs in the writer's
/// transaction, in the document's op order.
pub fn reserve(conn: &Connection, v: &NewVersion, _epoch: i64) -> Result<()> {
    let at_head: bool = conn
        .prepare_cached("SELECT EXISTS(SELECT 1 FROM documents WHERE id = ?1 AND head_seq = ?2)")?
        .query_row(params![v.doc_id, v.seq], |r| r.get(0))?;
    if !at_head {
        return Err(StorageError::HeadMismatch {
            doc: v.doc_id.clone(),
            expected: v.seq,
        });
    }
    conn.prepare_cached(
        "INSERT INTO doc_versions (id, doc_id, seq, at, kind, name, created_by, blocks, raw_bytes, body)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 0, NULL)",
    )?
    .execute(params![
        v.version_id,
        v.doc_id,
        v.seq,
        v.at,
        v.kind.as_str(),
        v.name,
        v.created_by,
        v.state.blocks.len() as i64,
    ])?;
    Ok(())
}

/// Stores the compressed state of a reserved version; it is a version from now on.
pub fn fill(
    conn: &Connection,
    doc_id: &str,
    version_id: &str,
    body: &[u8],
    raw: usize,
) -> Result<VersionMeta> {
    conn.prepare_cached(
        "UPDATE doc_versions SET body = ?3, raw_bytes = ?4 WHERE doc_id = ?1 AND id = ?2 AND body IS NULL",
    )?
    .execute(params![doc_id, version_id, body, raw as i64])?;
    meta(conn, doc_id, version_id)?
        .ok_or_else(|| StorageError::Corrupt("a reserved version is gone".into()))
}

/// Clears reservations never filled (the process stopped between the two steps) that are
/// older than `before`; returns how many.
pub fn forget_unfilled(conn: &Connection, before: i64) -> Result<usize> {
    Ok(conn.execute(
        "DELETE FROM doc_versions WHERE body IS NULL AND at < ?1",
        [before],
    )?)
}

const META: &str = "SELECT v.id, v.seq, v.at, v.kind, v.name, v.created_by, u.display_name,
        v.blocks, v.raw_bytes, length(v.body)
   FROM doc_versions v LEFT JOIN users u ON u.id = v.created_by";

fn meta_from_row(r: &Row) -> rusqlite::Result<VersionMeta> {
    let kind = VersionKind::parse(&r.get::<_, String>(3)?);
    Ok(VersionMeta {
        version_id: r.get(0)?,
        seq: r.get(1)?,
        at: r.get(2)?,
        name: r.get(4)?,
        created_by: r.get(5)?,
        created_by_name: r.get(6)?,
        auto: kind != VersionKind::Named,
        kind,
        blocks: r.get(7)?,
        raw_bytes: r.get(8)?,
        stored_bytes: r.get(9)?,
    })
}

/// A document's versions, newest first.
pub fn list(conn: &Connection, doc_id: &str) -> Result<Vec<VersionMeta>> {
    let sql = format!(
        "{META} WHERE v.doc_id = ?1 AND v.body IS NOT NULL ORDER BY v.seq DESC, v.at DESC, v.id"
    );
    let rows = conn
        .prepare_cached(&sql)?
        .query_map([doc_id], meta_from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

pub fn meta(conn: &Connection, doc_id: &str, version_id: &str) -> Result<Option<VersionMeta>> {
    let sql = format!("{META} WHERE v.doc_id = ?1 AND v.id = ?2 AND v.body IS NOT NULL");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(params![doc_id, version_id], meta_from_row)
        .optional()?)
}

/// A version and its state, if the document has it.
pub fn get(
    conn: &Connection,
    doc_id: &str,
    version_id: &str,
) -> Result<Option<(VersionMeta, VersionState)>> {
    let Some(m) = meta(conn, doc_id, version_id)? else {
        return Ok(None);
    };
    let body: Vec<u8> = conn
        .prepare_cached("SELECT body FROM doc_versions WHERE id = ?1 AND body IS NOT NULL")?
        .query_row([version_id], |r| r.get(0))?;
    Ok(Some((m, decode(&body)?)))
}

/// Versions at or below `seq` (older than what the log still holds), newest first, at most
/// `limit`, with their states: a bullet's history past the log's retention.
pub fn states_at_or_below(
    conn: &Connection,
    doc_id: &str,
    seq: i64,
    limit: usize,
) -> Result<Vec<(VersionMeta, VersionState)>> {
    let sql = format!(
        "{META} WHERE v.doc_id = ?1 AND v.seq <= ?2 AND v.body IS NOT NULL ORDER BY v.seq DESC, v.at DESC LIMIT ?3"
    );
    let metas = conn
        .prepare_cached(&sql)?
        .query_map(params![doc_id, seq, limit as i64], meta_from_row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut out = Vec::with_capacity(metas.len());
    for m in metas {
        if let Some((m, s)) = get(conn, doc_id, &m.version_id)? {
            out.push((m, s));
        }
    }
    Ok(out)
}

/// The newest version's `(seq, at)`: what the actor's automatic versions go by.
pub fn latest(conn: &Connection, doc_id: &str) -> Result<Option<(i64, i64)>> {
    Ok(conn
        .prepare_cached(
            "SELECT seq, at FROM doc_versions WHERE doc_id = ?1 AND body IS NOT NULL ORDER BY seq DESC, at DESC LIMIT 1",
        )?
        .query_row([doc_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?)
}

/// Names (or renames) a version; naming an automatic one keeps it until deleted.
pub fn rename(conn: &Connection, doc_id: &str, version_id: &str, name: &str) -> Result<bool> {
    Ok(conn.execute(
        "UPDATE doc_versions SET name = ?3, kind = 'named' WHERE doc_id = ?1 AND id = ?2 AND body IS NOT NULL",
        params![doc_id, version_id, name],
    )? == 1)
}

/// Deletes a named version. Automatic ones go only by retention: `Ok(None)` when the
/// version does not exist, `Ok(Some(false))` when it is not named.
pub fn delete_named(conn: &Connection, doc_id: &str, version_id: &str) -> Result<Option<bool>> {
    let Some(m) = meta(conn, doc_id, version_id)? else {
        return Ok(None);
    };
    if m.kind != VersionKind::Named {
        return Ok(Some(false));
    }
    conn.execute("DELETE FROM doc_versions WHERE id = ?1", [version_id])?;
    Ok(Some(true))
}

/// Every automatic (and before-restore) version older than `older_than`, for retention.
pub fn automatic_older_than(conn: &Connection, older_than: i64) -> Result<Vec<Retained>> {
    let rows = conn
        .prepare_cached(
            "SELECT id, doc_id, at FROM doc_versions WHERE kind <> 'named' AND at < ?1 AND body IS NOT NULL
             ORDER BY doc_id, at, id",
        )?
        .query_map([older_than], |r| {
            Ok(Retained {
                version_id: r.get(0)?,
                doc_id: r.get(1)?,
                at: r.get(2)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}

pub fn delete_ids(conn: &Connection, ids: &[String]) -> Result<usize> {
    let mut stmt = conn.prepare_cached("DELETE FROM doc_versions WHERE id = ?1")?;
    let mut n = 0;
    for id in ids {
        n += stmt.execute([id])?;
    }
    Ok(n)
}

/// How many versions are kept and their stored bytes (for the metrics).
pub fn totals(conn: &Connection) -> Result<(i64, i64)> {
    Ok(conn.query_row(
        "SELECT count(*), coalesce(sum(length(body)), 0) FROM doc_versions WHERE body IS NOT NULL",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?)
}
