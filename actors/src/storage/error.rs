//! Storage errors. HTTP mapping happens in one place in the service (`src/http/error.rs`).

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("connection pool: {0}")]
    Pool(#[from] r2d2::Error),
    #[error("migrations: {0}")]
    Migration(#[from] rusqlite_migration::Error),
    #[error("document {0} not found")]
    DocNotFound(String),
    #[error("document {doc} moved on under us (expected head {expected}); state will be reloaded")]
    HeadMismatch { doc: String, expected: i64 },
    #[error("block {0} belongs to another document")]
    ForeignBlock(String),
    #[error("not found: {0}")]
    NotFound(String),
    #[error("{0}")]
    Invalid(String),
    #[error("conflict: {0}")]
    Conflict(String),
    #[error("the database writer has stopped")]
    WriterGone,
    #[error("commit failed: {0}")]
    Commit(String),
    #[error("corrupt row: {0}")]
    Corrupt(String),
    #[error("blocking task failed: {0}")]
    Join(String),
}

pub type Result<T> = std::result::Result<T, StorageError>;
