//! Webhooks' rows (same names in `sqlite.rs` and `postgres.rs`).

use super::postgres;
use super::sqlite;
use super::types::{Delivery, Webhook};
use crate::storage::db::{row_questions, Db};
use crate::storage::error::Result;

row_questions! {
    /// Stores a new webhook with its sealed secret.
    pub fn insert(hook: &Webhook, secret_sealed: &str) -> ();
    /// Every webhook, oldest first.
    pub fn list() -> Vec<Webhook>;
    pub fn by_id(id: &str) -> Option<Webhook>;
    pub fn secret_sealed(id: &str) -> Option<String>;
    /// Forgets the webhook and its delivery log; false when there was none.
    pub fn delete(id: &str) -> bool;
    /// Takes (or keeps) the right to deliver for `node` until `until`; false while another
    /// node holds it.
    pub fn claim(id: &str, node: &str, now: i64, until: i64) -> bool;
    /// Moves the cursor past entries there was nothing to send for (no batch pending).
    pub fn skip_to(id: &str, cursor: i64) -> ();
    /// Keeps a cut batch before its first attempt; false if one is pending already.
    pub fn set_pending(id: &str, delivery_id: &str, after: i64, to: i64) -> bool;
    /// The pending batch was acknowledged: the cursor moves to its end.
    pub fn delivered(id: &str, delivery_id: &str, now: i64) -> ();
    /// An attempt failed: when the failing started and when to try again.
    pub fn failed(id: &str, attempts: i64, failing_since: i64, next_attempt_at: i64) -> ();
    /// Stops deliveries with the reason; false when it was paused already or is gone.
    pub fn pause(id: &str, now: i64, reason: &str) -> bool;
    /// Delivers again, the pending batch first, from a fresh retry window.
    pub fn resume(id: &str) -> bool;
    /// Adds an attempt to the log, keeping the newest `keep` of the webhook.
    pub fn record(webhook_id: &str, delivery: &Delivery, keep: i64) -> ();
    /// The newest attempts first, at most `limit`.
    pub fn deliveries(webhook_id: &str, limit: i64) -> Vec<Delivery>;
}
