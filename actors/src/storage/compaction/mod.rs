//! Rows compaction removes (PROTOCOL §6). The document actor decides *what* (tombstones due,
//! the new log floor) in its own op order; the retention rules are written here once, the
//! SQL in each backend.

mod postgres;
mod rows;
mod sqlite;
mod types;

pub use rows::{delete_block_changes, delete_log_chunk, delete_results_chunk};
pub use types::{Cutoffs, Retention};

use super::db::Db;
use super::error::Result;

/// Documents with something to remove at `now`: log rows above the floor older than the
/// shortest log retention (a private document's may be due), rows left at or below the
/// floor, tombstones past retention, or old idempotency results.
pub fn due_documents(db: &mut Db, now: i64, r: &Retention) -> Result<Vec<String>> {
    rows::due_documents(
        db,
        &Cutoffs {
            log: now - r.shared_log_ms.min(r.private_log_ms),
            tombstones: now - r.tombstone_ms,
            results: now - r.results_ms,
        },
    )
}

/// Moves the floor up to the newest entry written before `cutoff` (never down, never past
/// `head`), and returns the floor now in force.
pub fn raise_floor(db: &mut Db, doc_id: &str, cutoff: i64, head: i64) -> Result<i64> {
    if let Some(f) = rows::newest_entry_before(db, doc_id, cutoff, head)? {
        rows::raise_floor_to(db, doc_id, f)?;
    }
    rows::floor(db, doc_id)
}
