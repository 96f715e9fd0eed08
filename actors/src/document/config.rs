//! What a document actor is configured with (`actors.*`, `limits.*`, `history.*` in the
//! service's settings), shared by every actor of the process.

use std::sync::Arc;
use std::time::Duration;

use crate::metrics::Metrics;

#[derive(Debug, Clone)]
pub struct ActorConfig {
    pub lease_ttl_ms: i64,
    pub session_ttl_ms: i64,
    /// Stop after this long with no session and no activity.
    pub idle_stop_ms: i64,
    /// Log entries kept in memory for catching up clients without a database read.
    pub log_tail: usize,
    /// At most this many log entries per `/sync` reply (PROTOCOL: 500).
    pub log_page: usize,
    /// Wake-ups carry the new log entries when they encode to at most this many bytes
    /// (PROTOCOL §4: "a few KiB"); bigger changes are pulled. 0 turns entries off.
    pub wake_entries_bytes: usize,
    /// Op results kept in memory for idempotency before falling back to the pre-check.
    pub recent_results: usize,
    pub tick: Duration,
    /// `limits.max_depth`: most levels a block tree may have (the rules enforce it).
    pub max_depth: usize,
    /// `limits.max_document_bytes`: most bytes of text a document may hold (0: no limit).
    pub max_document_bytes: usize,
    /// `limits.max_tags_per_block`: most `#tags` indexed per block.
    pub max_tags_per_block: usize,
    /// `history.auto_every_minutes` in ms: an automatic version is kept when the document
    /// changed and the newest version is this old (0: never).
    pub auto_version_every_ms: i64,
    /// Test hook: content equal to this makes the rules panic. Only debug builds look at it
    /// (the service refuses to start a release build with it set).
    pub panic_marker: Option<String>,
    pub metrics: Arc<Metrics>,
    /// Cluster mode: this node's incarnation, which claims each document (None on SQLite).
    pub this_node: Option<Arc<crate::membership::ThisNode>>,
}

impl Default for ActorConfig {
    fn default() -> Self {
        ActorConfig {
            lease_ttl_ms: 20_000,
            session_ttl_ms: 60_000,
            idle_stop_ms: 300_000,
            log_tail: 2_000,
            log_page: 500,
            wake_entries_bytes: 4096,
            recent_results: 20_000,
            tick: Duration::from_secs(1),
            max_depth: crate::collab::rules::DEFAULT_MAX_DEPTH,
            max_tags_per_block: crate::storage::derived::DEFAULT_MAX_TAGS_PER_BLOCK,
            max_document_bytes: 0,
            auto_version_every_ms: 60 * 60_000,
            panic_marker: None,
            metrics: Arc::new(Metrics::new()),
            this_node: None,
        }
    }
}
