//! SQLite's side of "is there room?": a probe write as big as the largest sync, undone in its
//! own savepoint (what `StorageHealth` ends a disk-full episode with), and the test hook that
//! caps the file's size so "disk full" is reproducible.

use rusqlite::Connection;

use crate::storage::error::Result;

/// A write job that needs a fresh page and leaves the schema and every row as they were:
/// `Ok(false)` exactly when a client's write that grows the database would fail as full (no
/// free page in the file and no room to grow it). Its own savepoint undoes a half-done probe,
/// and a refused probe is not an error of the job, so readiness checks are not counted as
/// refused writes. Run it through the writer only while [`StorageHealth::is_full`]: a probe
/// that succeeds commits a (net empty) change, which also finds a disk with no room for the
/// WAL (the commit fails as full).
pub fn probe(conn: &Connection, bytes: usize) -> Result<bool> {
    conn.execute_batch("SAVEPOINT space_probe")?;
    let tried = conn.execute_batch(&format!(
        "CREATE TABLE docsync_space_probe (b BLOB); \
         INSERT INTO docsync_space_probe VALUES (zeroblob({bytes})); \
         DROP TABLE docsync_space_probe;"
    ));
    match tried {
        Ok(()) => {
            conn.execute_batch("RELEASE space_probe")?;
            Ok(true)
        }
        Err(e) => {
            conn.execute_batch("ROLLBACK TO space_probe; RELEASE space_probe")?;
            if crate::storage::error::is_full(&e) {
                Ok(false)
            } else {
                Err(e.into())
            }
        }
    }
}

/// [`probe`] in a transaction of its own, for the writer thread between batches.
pub(crate) fn probe_committed(conn: &Connection, bytes: usize) -> bool {
    if conn.execute_batch("BEGIN IMMEDIATE").is_err() {
        return false;
    }
    let ok = matches!(probe(conn, bytes), Ok(true)) && conn.execute_batch("COMMIT").is_ok();
    if !ok {
        let _ = conn.execute_batch("ROLLBACK");
    }
    ok
}

/// Caps the database at `max_pages` pages (SQLite `PRAGMA max_page_count`; `0` = its current
/// size), which makes "disk full" reproducible without root or a small filesystem (the
/// server's debug-only test hook). SQLite never sets it below the current size; answers
/// (the limit in force, the current page count).
pub fn cap_pages(conn: &Connection, max_pages: u32) -> Result<(u32, u32)> {
    let pages: u32 = conn.query_row("PRAGMA page_count", [], |r| r.get(0))?;
    let want = if max_pages == 0 { pages } else { max_pages };
    let limit: u32 =
        conn.query_row(&format!("PRAGMA max_page_count = {want}"), [], |r| r.get(0))?;
    Ok((limit, pages))
}
