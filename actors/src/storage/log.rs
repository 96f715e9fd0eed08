//! The op log: pages after a seq, pre-checks, the answered op IDs, a bullet's changes.

use std::sync::Arc;

use super::db::dispatch;
use super::db::Db;
use super::error::Result;
use super::postgres::log as pg;
use super::sqlite::log as lite;

pub use lite::{BlockChange, LogRecord, Precheck};

dispatch! {
    pub fn read_after(doc_id: &str, after: i64, upto: i64, limit: usize) -> Vec<Arc<LogRecord>>
        => lite::read_after, pg::read_after;
    pub fn block_history(doc_id: &str, block_id: &str, before: i64, limit: usize) -> Vec<BlockChange>
        => lite::block_history, pg::block_history;
    pub fn for_each_result_op_id(doc_id: &str, f: impl FnMut(&str)) -> ()
        => lite::for_each_result_op_id, pg::for_each_result_op_id;
}

pub fn precheck<'a>(
    db: &mut Db,
    doc_id: &str,
    op_ids: impl IntoIterator<Item = &'a str>,
    block_ids: impl IntoIterator<Item = &'a str>,
) -> Result<Precheck> {
    match db {
        Db::Sqlite(c) => lite::precheck(c, doc_id, op_ids, block_ids),
        Db::Postgres(t) => pg::precheck(&mut **t, doc_id, op_ids, block_ids),
    }
}
