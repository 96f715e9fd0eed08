//! The op log: pages after a seq, pre-checks, the answered op IDs, a bullet's changes. The
//! log is written with the document's rows (`documents::apply_write`), in one transaction.

mod postgres;
mod rows;
pub(crate) mod sqlite;
mod types;

pub use rows::{block_history, for_each_result_op_id, precheck, read_after};
pub use types::{BlockChange, LogRecord, Precheck};
