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
//!
//! The retention rule (`expired`) and the one-step insert are written here once; the rows
//! in `sqlite.rs` and `postgres.rs`.

mod postgres;
mod rows;
mod sqlite;
mod types;

pub use rows::{
    automatic_older_than, delete_ids, delete_named, fill, forget_unfilled, get, latest, list, meta,
    rename, reserve, states_at_or_below, totals,
};
pub use types::{
    encode, NewVersion, Retained, VersionKind, VersionMeta, VersionPolicy, VersionState,
};

use super::db::Db;
use super::error::Result;
use types::DAY_MS;

/// Reserves and fills in one go (tests, tools): the same checks, compressed in place.
pub fn insert(db: &mut Db, v: &NewVersion, epoch: i64) -> Result<VersionMeta> {
    reserve(db, v, epoch)?;
    let (body, raw) = encode(&v.state)?;
    fill(db, &v.doc_id, &v.version_id, &body, raw)
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::types::decode;
    use super::*;
    use crate::collab::block::Block;
    use crate::storage::StorageError;

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
        crate::storage::sqlite::migrate::apply(&mut conn).unwrap();
        let user =
            crate::storage::accounts::create_user(&mut Db::Sqlite(&conn), "ann", "Ann", false, 0)
                .unwrap();
        crate::storage::documents::create(&mut Db::Sqlite(&conn), "doc_v", &user.id, "T", None, 0)
            .unwrap();
        let db = &mut Db::Sqlite(&conn);
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
            reserve(db, &v("ver_a", 3), 0),
            Err(StorageError::HeadMismatch { .. })
        ));
        reserve(db, &v("ver_b", 0), 0).unwrap();
        assert!(
            list(db, "doc_v").unwrap().is_empty(),
            "not a version before it is filled"
        );
        assert_eq!(latest(db, "doc_v").unwrap(), None);
        let (body, raw) = encode(&v("ver_b", 0).state).unwrap();
        let m = fill(db, "doc_v", "ver_b", &body, raw).unwrap();
        assert_eq!((m.seq, m.raw_bytes as usize), (0, raw));
        assert_eq!(list(db, "doc_v").unwrap().len(), 1);
        // A reservation a crash left behind is cleared; filled ones stay.
        reserve(db, &v("ver_c", 0), 0).unwrap();
        assert_eq!(forget_unfilled(db, 5).unwrap(), 0, "too young");
        assert_eq!(forget_unfilled(db, 11).unwrap(), 1);
        assert_eq!(list(db, "doc_v").unwrap().len(), 1);
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
