//! How storage is opened: which backend, where, and how hard a commit waits for the disk.

use std::path::PathBuf;
use std::sync::Arc;

/// How hard a commit waits for the disk. `Full` (default): an acknowledged op survives power
/// loss. `Normal`: survives a process crash, may lose the last commits on power loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Synchronous {
    Full,
    Normal,
}

/// Which database holds everything: the embedded SQLite file (one node), or PostgreSQL
/// (cluster mode: several nodes, one owner per document).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres { url: String },
}

#[derive(Debug, Clone)]
pub struct StorageConfig {
    pub backend: Backend,
    /// The SQLite file (unused on PostgreSQL).
    pub path: PathBuf,
    pub synchronous: Synchronous,
    pub read_pool_size: u32,
    pub group_commit_max: usize,
    /// SQLite page cache per connection, in KiB.
    pub cache_kib: u32,
    pub metrics: Option<Arc<crate::metrics::Metrics>>,
}
