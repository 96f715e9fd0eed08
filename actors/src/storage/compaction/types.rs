//! How long compaction keeps things.

/// How long things are kept, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    pub shared_log_ms: i64,
    pub private_log_ms: i64,
    pub tombstone_ms: i64,
    pub results_ms: i64,
}

impl Default for Retention {
    fn default() -> Self {
        const DAY: i64 = 86_400_000;
        Retention {
            shared_log_ms: 30 * DAY,
            private_log_ms: 7 * DAY,
            tombstone_ms: 30 * DAY,
            results_ms: 90 * DAY,
        }
    }
}

/// The moments before which each kind of row is due, at one `now`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cutoffs {
    /// Log entries above the floor written before this (the shorter log retention).
    pub log: i64,
    /// Tombstones deleted before this.
    pub tombstones: i64,
    /// Idempotency results written before this.
    pub results: i64,
}
