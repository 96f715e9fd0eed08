//! Versions (PROTOCOL §8): a document's whole live state at one `seq`, stored as
//! deflate-compressed JSON in `doc_versions`. A version stands on its own — compaction of the
//! log never touches it — and goes only by its own retention (`VersionPolicy`, applied by the
//! compaction supervisor) or with its document's purge.
//!
//! A version is written in two steps. The document's actor captures its state at `seq` and
//! `reserve`s the row through the writer queue, behind every write of the ops that state
//! contains; the reservation is refused unless the document's head on disk is then exactly
//! `seq`, so a version can never describe a state whose ops did not land. The state is
//! compressed off the writer thread (a 10,000-bullet document takes tens of milliseconds,
//! which would hold up every other document's commits) and `fill` stores it. Only filled
//! rows are versions; one left unfilled by a crash is cleared by `forget_unfilled`.

use std::io::{Read, Write};
use std::sync::Arc;

use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use flate2::Compression;
use rusqlite::{params, Connection, OptionalExtension, Row};
use serde::{Deserialize, Serialize};

use crate::collab::block::Block;

use crate::storage::error::{Result, StorageError};

const DAY_MS: i64 = 86_400_000;

/// Why a version exists; decides how long it is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum VersionKind {
    /// Taken by the server when the document changed and the last version was old enough.
    Auto,
    /// Named by an editor; kept until an editor deletes it.
    Named,
    /// Taken right before a restore, so the restore itself can be undone.
    Restore,
}

impl VersionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            VersionKind::Auto => "auto",
            VersionKind::Named => "named",
            VersionKind::Restore => "restore",
        }
    }

    pub(crate) fn parse(s: &str) -> VersionKind {
        match s {
            "named" => VersionKind::Named,
            "restore" => VersionKind::Restore,
            _ => VersionKind::Auto,
        }
    }
}

/// One line of a document's version list (PROTOCOL §8 `{versionId, seq, at, name?,
/// createdBy?, auto}`, with the kind, the author's display name and sizes besides).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VersionMeta {
    pub version_id: String,
    pub seq: i64,
    pub at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// The display name of `createdBy`, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by_name: Option<String>,
    /// Kept by the server (hourly, daily, before a restore) rather than named by a person.
    pub auto: bool,
    pub kind: VersionKind,
    /// Live bullets in the version.
    pub blocks: i64,
    /// Bytes of the version's JSON before and after compression.
    pub raw_bytes: i64,
    pub stored_bytes: i64,
}

/// What a version holds: the title and every live bullet, as the snapshot shows them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionState {
    pub title: String,
    pub blocks: Vec<Arc<Block>>,
}

/// A version to write, taken by the document's actor at `seq`.
#[derive(Debug, Clone)]
pub struct NewVersion {
    pub version_id: String,
    pub doc_id: String,
    pub seq: i64,
    pub at: i64,
    pub kind: VersionKind,
    pub name: Option<String>,
    pub created_by: Option<String>,
    pub state: VersionState,
}

/// The JSON of a state, compressed. Public for the benchmark's size figures.
pub fn encode(state: &VersionState) -> Result<(Vec<u8>, usize)> {
    let json = serde_json::to_vec(state).map_err(|e| StorageError::Corrupt(e.to_string()))?;
    let mut enc = DeflateEncoder::new(Vec::with_capacity(json.len() / 4), Compression::new(6));
    enc.write_all(&json)
        .and_then(|()| enc.finish())
        .map(|body| (body, json.len()))
        .map_err(|e| StorageError::Corrupt(format!("compressing a version: {e}")))
}

pub(crate) fn decode(body: &[u8]) -> Result<VersionState> {
    let mut json = Vec::new();
    DeflateDecoder::new(body)
        .read_to_end(&mut json)
        .map_err(|e| StorageError::Corrupt(format!("a stored version: {e}")))?;
    serde_json::from_slice(&json)
        .map_err(|e| StorageError::Corrupt(format!("a stored version: {e}")))
}

/// Reserves a version's row (body still empty); fails with `HeadMismatch` (and writes
/// nothing) unless the document's head on disk is the version's `seq`. Runs in the writer's
/// transaction, in the document's op order.
pub fn reserve(conn: &Connection, v: &NewVersion) -> Result<()> {
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

/// Reserves and fills in one go (tests, tools): the same checks, compressed in place.
pub fn insert(conn: &Connection, v: &NewVersion) -> Result<VersionMeta> {
    reserve(conn, v)?;
    let (body, raw) = encode(&v.state)?;
    fill(conn, &v.doc_id, &v.version_id, &body, raw)
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

/// How long versions are kept (`[history]` in the configuration), in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionPolicy {
    /// An automatic version is taken when the document changed and the newest version is at
    /// least this old; 0 turns automatic versions off.
    pub auto_every_ms: i64,
    /// Every automatic version younger than this is kept.
    pub hourly_ms: i64,
    /// Older ones are thinned to the newest of each UTC day until this age, then removed.
    pub daily_ms: i64,
}

impl Default for VersionPolicy {
    fn default() -> Self {
        VersionPolicy {
            auto_every_ms: 60 * 60_000,
            hourly_ms: 7 * DAY_MS,
            daily_ms: 90 * DAY_MS,
        }
    }
}

/// An automatic version as retention sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retained {
    pub version_id: String,
    pub doc_id: String,
    pub at: i64,
}

/// Which automatic versions the policy lets go at `now`: none younger than `hourly_ms`; of
/// those between `hourly_ms` and `daily_ms` old, all but the newest of each document's UTC
/// day; every one older than `daily_ms`. Named versions are never passed in.
pub fn expired(auto: &[Retained], now: i64, p: &VersionPolicy) -> Vec<String> {
    let mut newest_of_day: std::collections::HashMap<(&str, i64), (&str, i64)> =
        std::collections::HashMap::new();
    let mut out = Vec::new();
    for v in auto {
        let age = now - v.at;
        if age < p.hourly_ms {
            continue;
        }
        if age >= p.daily_ms {
            out.push(v.version_id.clone());
            continue;
        }
        let key = (v.doc_id.as_str(), v.at.div_euclid(DAY_MS));
        match newest_of_day.get(&key) {
            Some(&(_, at)) if at >= v.at => out.push(v.version_id.clone()),
            Some(&(id, _)) => {
                out.push(id.to_string());
                newest_of_day.insert(key, (v.version_id.as_str(), v.at));
            }
            None => {
                newest_of_day.insert(key, (v.version_id.as_str(), v.at));
            }
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    fn auto(id: &str, doc: &str, at: i64) -> Retained {
        Retained {
            version_id: id.into(),
            doc_id: doc.into(),
            at,
        }
    }

    #[test]
    fn retention_keeps_hourly_then_the_newest_of_each_day_then_nothing() {
        let p = VersionPolicy::default();
        let now = 200 * DAY_MS;
        let h = 3_600_000;
        let versions = vec![
            // Within the hourly period: all kept.
            auto("recent1", "d1", now - h),
            auto("recent2", "d1", now - 2 * h),
            // Ten days old, three in one day: only the newest stays.
            auto("day10a", "d1", now - 10 * DAY_MS - 3 * h),
            auto("day10b", "d1", now - 10 * DAY_MS - 2 * h),
            auto("day10c", "d1", now - 10 * DAY_MS - h),
            // The same day in another document is that document's own.
            auto("other", "d2", now - 10 * DAY_MS - 3 * h),
            // Past the daily period: gone.
            auto("old", "d1", now - 91 * DAY_MS),
        ];
        let mut gone = expired(&versions, now, &p);
        gone.sort();
        // day10a/b/c share a UTC day only if the day boundary is not between them.
        let day = |at: i64| at.div_euclid(DAY_MS);
        assert_eq!(day(now - 10 * DAY_MS - 3 * h), day(now - 10 * DAY_MS - h));
        assert_eq!(gone, vec!["day10a", "day10b", "old"]);
    }

    #[test]
    fn a_reservation_is_fenced_by_the_head_and_is_no_version_until_filled() {
        let mut conn = rusqlite::Connection::open_in_memory().unwrap();
        crate::storage::migrate::apply(&mut conn).unwrap();
        let user =
            crate::storage::sqlite::accounts::create_user(&conn, "ann", "Ann", false, 0).unwrap();
        crate::storage::sqlite::documents::create(&conn, "doc_v", &user.id, "T", None, 0).unwrap();
        let v = |id: &str, seq: i64| NewVersion {
            version_id: id.into(),
            doc_id: "doc_v".into(),
            seq,
            at: 10,
            kind: VersionKind::Auto,
            name: None,
            created_by: None,
            state: VersionState {
                title: "T".into(),
                blocks: Vec::new(),
            },
        };
        // The head on disk is 0: a state at seq 3 has ops that did not land.
        assert!(matches!(
            reserve(&conn, &v("ver_a", 3)),
            Err(StorageError::HeadMismatch { .. })
        ));
        reserve(&conn, &v("ver_b", 0)).unwrap();
        assert!(
            list(&conn, "doc_v").unwrap().is_empty(),
            "not a version before it is filled"
        );
        assert_eq!(latest(&conn, "doc_v").unwrap(), None);
        let (body, raw) = encode(&v("ver_b", 0).state).unwrap();
        let m = fill(&conn, "doc_v", "ver_b", &body, raw).unwrap();
        assert_eq!((m.seq, m.raw_bytes as usize), (0, raw));
        assert_eq!(list(&conn, "doc_v").unwrap().len(), 1);
        // A reservation a crash left behind is cleared; filled ones stay.
        reserve(&conn, &v("ver_c", 0)).unwrap();
        assert_eq!(forget_unfilled(&conn, 5).unwrap(), 0, "too young");
        assert_eq!(forget_unfilled(&conn, 11).unwrap(), 1);
        assert_eq!(list(&conn, "doc_v").unwrap().len(), 1);
    }

    #[test]
    fn a_state_survives_encoding() {
        let b = Arc::new(Block::new(
            "blk_1".into(),
            None,
            "a0".into(),
            "milk and honey ".repeat(40),
            5,
            "usr_1",
        ));
        let s = VersionState {
            title: "T".into(),
            blocks: vec![b],
        };
        let (body, raw) = encode(&s).unwrap();
        assert!(body.len() < raw / 4, "{} of {raw}", body.len());
        assert_eq!(decode(&body).unwrap(), s);
    }
}
