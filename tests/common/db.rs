//! One whole-database fingerprint for every "nothing was written" check: each table's rows
//! (every table in `sqlite_master`, so FTS tables and their shadow tables, tags, tokens,
//! login sessions, shares… included; nothing is listed by hand, a new table is covered the
//! day it is added), hashed per table. Rows are hashed one by one and the row hashes sorted,
//! so the fingerprint is the table's multiset of rows: a row deleted and written back as it
//! was (same values, new rowid) is no change, any other write is.
#![allow(dead_code)]

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};

use rusqlite::types::ValueRef;

use super::TestServer;

/// Rows and content hash of one table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableSum {
    pub rows: u64,
    pub hash: u64,
}

/// Every table of the database, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DbFingerprint(pub BTreeMap<String, TableSum>);

/// Bookkeeping that is not the data a request may change: SQLite's query-planner statistics
/// (`PRAGMA optimize`), and `client_owners`, where the first request of a new client ID
/// (even a read) records which user it belongs to. `sqlite_sequence` (AUTOINCREMENT
/// counters) is kept.
fn is_bookkeeping(table: &str) -> bool {
    table.starts_with("sqlite_stat") || table == "client_owners"
}

/// What of a table the fingerprint reads: automatic versions are the server's own, kept on
/// the document actor's clock tick whenever a document changed (PROTOCOL §8), so one may
/// land between any two fingerprints; every other row counts.
fn rows_of(table: &str) -> String {
    if table == "doc_versions" {
        "SELECT * FROM doc_versions WHERE kind <> 'auto'".into()
    } else {
        format!("SELECT * FROM \"{table}\"")
    }
}

/// The fingerprint of the database behind `conn`, read in one transaction (one consistent
/// snapshot even while the server writes).
pub fn fingerprint(conn: &rusqlite::Connection) -> DbFingerprint {
    conn.execute_batch("BEGIN").expect("begin read");
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut out = BTreeMap::new();
    for t in tables.into_iter().filter(|t| !is_bookkeeping(t)) {
        let mut stmt = conn
            .prepare(&rows_of(&t))
            .unwrap_or_else(|e| panic!("read table {t}: {e}"));
        let n = stmt.column_count();
        let mut rows = stmt.query([]).unwrap();
        let mut hashes = Vec::new();
        while let Some(row) = rows.next().unwrap() {
            let mut h = DefaultHasher::new();
            for i in 0..n {
                match row.get_ref(i).unwrap() {
                    ValueRef::Null => 0u8.hash(&mut h),
                    ValueRef::Integer(v) => (1u8, v).hash(&mut h),
                    ValueRef::Real(v) => (2u8, v.to_bits()).hash(&mut h),
                    ValueRef::Text(v) => (3u8, v).hash(&mut h),
                    ValueRef::Blob(v) => (4u8, v).hash(&mut h),
                }
            }
            hashes.push(h.finish());
        }
        hashes.sort_unstable();
        let mut h = DefaultHasher::new();
        hashes.hash(&mut h);
        out.insert(
            t,
            TableSum {
                rows: hashes.len() as u64,
                hash: h.finish(),
            },
        );
    }
    conn.execute_batch("COMMIT").expect("end read");
    DbFingerprint(out)
}

impl DbFingerprint {
    /// Rows of `table` (0 when it does not exist).
    pub fn rows(&self, table: &str) -> u64 {
        self.0.get(table).map_or(0, |s| s.rows)
    }

    /// The tables whose rows differ between `self` and `later` (added or dropped included).
    pub fn changed_tables(&self, later: &DbFingerprint) -> BTreeSet<String> {
        self.0
            .keys()
            .chain(later.0.keys())
            .filter(|t| self.0.get(*t) != later.0.get(*t))
            .cloned()
            .collect()
    }

    /// What changed, for failure messages: `table: rows before → rows after`, one per table.
    pub fn diff(&self, later: &DbFingerprint) -> String {
        let changed = self.changed_tables(later);
        if changed.is_empty() {
            return "no change".into();
        }
        changed
            .iter()
            .map(|t| match (self.0.get(t), later.0.get(t)) {
                (Some(a), Some(b)) if a.rows == b.rows => {
                    format!("{t}: {} rows, content changed", a.rows)
                }
                (Some(a), Some(b)) => format!("{t}: {} → {} rows", a.rows, b.rows),
                (None, _) => format!("{t}: new table"),
                (_, None) => format!("{t}: table gone"),
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// The same on PostgreSQL (a server of the PostgreSQL pass, `DOCSYNC_TEST_BACKEND`): every
/// table of the public schema, rows as JSON, minus cluster bookkeeping — membership
/// (`nodes`), the migrations' record, client IDs (as on SQLite) and a document's owner
/// columns (a read claims the document for the node serving it).
pub fn pg_fingerprint(
    pg: &docsync_actors::storage::postgres::testing::TempPostgres,
) -> DbFingerprint {
    let mut c = pg.client();
    let mut tx = c
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .start()
        .unwrap();
    let tables: Vec<String> = tx
        .query(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let mut out = BTreeMap::new();
    for t in tables
        .into_iter()
        .filter(|t| !matches!(t.as_str(), "nodes" | "schema_migrations" | "client_owners"))
    {
        let filter = if t == "doc_versions" {
            " WHERE kind <> 'auto'"
        } else {
            ""
        };
        let rows: Vec<String> = tx
            .query(
                &format!(
                    "SELECT (to_jsonb(x) - 'owner_node' - 'owner_inc' - 'owner_epoch')::text FROM \"{t}\" x{filter}"
                ),
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        let mut hashes: Vec<u64> = rows
            .iter()
            .map(|r| {
                let mut h = DefaultHasher::new();
                r.hash(&mut h);
                h.finish()
            })
            .collect();
        hashes.sort_unstable();
        let mut h = DefaultHasher::new();
        hashes.hash(&mut h);
        out.insert(
            t,
            TableSum {
                rows: hashes.len() as u64,
                hash: h.finish(),
            },
        );
    }
    tx.commit().unwrap();
    DbFingerprint(out)
}

impl TestServer {
    /// The whole database's fingerprint (see the module docs), on either backend.
    pub fn fingerprint(&self) -> DbFingerprint {
        match &self.pg {
            Some(pg) => {
                let pg = pg.clone();
                std::thread::spawn(move || pg_fingerprint(&pg))
                    .join()
                    .unwrap()
            }
            None => fingerprint(&self.db()),
        }
    }

    /// Panics with the tables that changed unless the database is exactly as in `before`.
    pub fn assert_unchanged(&self, before: &DbFingerprint, what: &str) {
        let now = self.fingerprint();
        assert!(
            now == *before,
            "{what} changed the database: {}",
            before.diff(&now)
        );
    }
}
