//! What the compaction pass removes: old log rows below a raised floor, old op results.

use super::db::dispatch;
use super::postgres::upkeep as pg;
use super::sqlite::compaction as lite;

pub use lite::Retention;

dispatch! {
    pub fn due_documents(now: i64, r: &Retention) -> Vec<String> => lite::due_documents, pg::due_documents;
    pub fn raise_floor(doc_id: &str, cutoff: i64, head: i64) -> i64 => lite::raise_floor, pg::raise_floor;
    pub fn delete_block_changes(doc_id: &str, floor: i64) -> usize
        => lite::delete_block_changes, pg::delete_block_changes;
    pub fn delete_log_chunk(doc_id: &str, floor: i64, limit: usize) -> usize
        => lite::delete_log_chunk, pg::delete_log_chunk;
    pub fn delete_results_chunk(doc_id: &str, cutoff: i64, limit: usize) -> usize
        => lite::delete_results_chunk, pg::delete_results_chunk;
}
