//! Online backup of the whole database into a new file (`docsync backup`).

use std::path::Path;
use std::time::Duration;

use rusqlite::backup::Backup;
use rusqlite::{Connection, OpenFlags};

use crate::storage::error::{Result, StorageError};

/// Pages copied per step; between steps writers get the database back.
const PAGES_PER_STEP: i32 = 1024;
const PAUSE_BETWEEN_STEPS: Duration = Duration::from_millis(5);

/// Copies the database at `source` to `dest` with SQLite's online backup from a read-only
/// connection, so writers are never blocked for long and the copy is one consistent moment.
/// The copy is written beside `dest` first, checked with `integrity_check`, switched out of
/// WAL mode (a single self-contained file) and only then renamed to `dest`, so `dest` never
/// holds a half-written backup. Refuses to overwrite an existing file. Returns its size.
pub fn online_backup(source: &Path, dest: &Path) -> Result<u64> {
    if dest.exists() {
        return Err(StorageError::Invalid(format!(
            "{} exists; refusing to overwrite a file",
            dest.display()
        )));
    }
    let src = Connection::open_with_flags(source, OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(|e| StorageError::Invalid(format!("opening {}: {e}", source.display())))?;
    src.busy_timeout(Duration::from_secs(10))?;
    let tmp = dest.with_extension("partial");
    let _ = std::fs::remove_file(&tmp);
    {
        let mut dst = Connection::open(&tmp)?;
        Backup::new(&src, &mut dst)?.run_to_completion(
            PAGES_PER_STEP,
            PAUSE_BETWEEN_STEPS,
            None,
        )?;
    }
    let check = Connection::open(&tmp)?;
    let ok: String = check.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
    if ok != "ok" {
        return Err(StorageError::Corrupt(format!(
            "backup failed its integrity check: {ok}"
        )));
    }
    check.execute_batch("PRAGMA journal_mode = DELETE;")?;
    drop(check);
    let io = |e: std::io::Error| StorageError::Commit(format!("{}: {e}", dest.display()));
    std::fs::rename(&tmp, dest).map_err(io)?;
    Ok(std::fs::metadata(dest).map_err(io)?.len())
}
