//! Storage errors. HTTP mapping happens in one place in the service (`src/http/error.rs`).

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("sqlite: {0}")]
    Sqlite(rusqlite::Error),
    /// The database or the disk under it has no room (SQLITE_FULL, which SQLite also returns
    /// for the OS's ENOSPC). The write was undone; it can succeed once space is freed.
    #[error("database or disk is full: {0}")]
    Full(String),
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
    /// The caller may not do this (a rule only storage can check in the same transaction).
    #[error("{0}")]
    Forbidden(String),
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
    #[error("postgres: {0}")]
    Postgres(#[from] postgres::Error),
    /// Cluster mode: this node's epoch for the document is no longer the document's — another
    /// node claimed it. Nothing was written; the actor must stop for good on this node.
    #[error("document {doc} is owned by another node now (our epoch {epoch} is stale)")]
    NotOwner { doc: String, epoch: i64 },
    /// A setting the cluster refuses to run with (named, with why).
    #[error("{key}: {why}")]
    Setting { key: String, why: String },
}

impl StorageError {
    pub fn is_full(&self) -> bool {
        matches!(self, StorageError::Full(_))
    }
}

/// Every SQLite error passes here (`?`), so "full" is told apart once, by its code, and no
/// caller has to look into `rusqlite::Error` to answer 507 instead of 500.
impl From<rusqlite::Error> for StorageError {
    fn from(e: rusqlite::Error) -> Self {
        if is_full(&e) {
            StorageError::Full(e.to_string())
        } else {
            StorageError::Sqlite(e)
        }
    }
}

pub(crate) fn is_full(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(rusqlite::ErrorCode::DiskFull)
}

pub type Result<T> = std::result::Result<T, StorageError>;
