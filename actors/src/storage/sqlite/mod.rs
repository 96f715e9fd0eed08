//! The SQLite backend: one module per family of questions, each function on a `&Connection`.
//! Callers go through the facades one level up (`storage::roles`, …), which pick this
//! backend or PostgreSQL's.

pub mod accounts;
pub mod clients;
pub mod compaction;
pub mod conflicts;
pub mod derived;
pub mod documents;
pub mod log;
pub mod roles;
pub mod search;
pub mod sharing;
pub mod trash;
pub mod versions;
