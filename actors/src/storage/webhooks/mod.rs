//! Webhooks (PROTOCOL §11): each one a receiver's URL, what it wants, its sealed signing
//! secret and where in the change feed it stands. The deliverer (`src/webhooks/`) moves a
//! webhook through three steps, each one conditional update so a retry, a restart or a
//! second node can never skip or fork a batch:
//!
//! 1. `set_pending` cuts the next batch (feed positions after `cursor` up to `to`, under a
//!    fresh delivery ID) — only when none is pending and the cursor is where it was read;
//! 2. every attempt sends exactly that batch under that ID (`failed` counts them);
//! 3. `delivered` moves the cursor to the batch's end — only for the pending delivery ID.
//!
//! Invariants: the cursor only moves forward, and only past a batch the receiver
//! acknowledged or past entries there was nothing to send for (`skip_to`); a pending batch
//! is never replaced until acknowledged. The secret is stored sealed (the key is not in
//! the database) and never leaves this module except to be opened by the deliverer.

mod postgres;
mod rows;
mod sqlite;
#[cfg(test)]
mod tests;
mod types;

pub use rows::{
    by_id, claim, delete, delivered, deliveries, failed, insert, list, pause, record, resume,
    secret_sealed, set_pending, skip_to,
};
pub use types::{Delivery, Pending, Webhook};

use crate::storage::db::Db;
use crate::storage::error::{Result, StorageError};
use crate::storage::roles;

/// Events a webhook can ask for.
pub const EVENTS: [&str; 1] = ["ops"];

/// A stored list (events, document IDs) as its JSON text.
fn json_list(items: &[String]) -> String {
    serde_json::to_string(items).unwrap_or_else(|_| "[]".into())
}

fn parse_list(id: &str, what: &str, json: &str) -> Result<Vec<String>> {
    serde_json::from_str(json)
        .map_err(|e| StorageError::Corrupt(format!("webhook {id} {what}: {e}")))
}

/// A webhook's row as both backends read it.
struct Columns {
    id: String,
    created_by: String,
    url: String,
    events: String,
    doc_ids: Option<String>,
    created_at: i64,
    cursor: i64,
    paused_at: Option<i64>,
    paused_reason: Option<String>,
    pending_id: Option<String>,
    pending_after: Option<i64>,
    pending_to: Option<i64>,
    attempts: i64,
    failing_since: Option<i64>,
    next_attempt_at: Option<i64>,
    delivered_at: Option<i64>,
    created_by_name: Option<String>,
}

fn from_columns(c: Columns) -> Result<Webhook> {
    let events = parse_list(&c.id, "events", &c.events)?;
    let doc_ids = c
        .doc_ids
        .as_deref()
        .map(|j| parse_list(&c.id, "doc_ids", j))
        .transpose()?;
    let pending = match (c.pending_id, c.pending_after, c.pending_to) {
        (Some(id), Some(after), Some(to)) => Some(Pending { id, after, to }),
        _ => None,
    };
    Ok(Webhook {
        state: if c.paused_at.is_some() {
            "paused"
        } else {
            "active"
        }
        .into(),
        pending_delivery: pending.as_ref().map(|p| p.id.clone()),
        id: c.id,
        created_by: c.created_by,
        created_by_name: c.created_by_name,
        url: c.url,
        events,
        doc_ids,
        created_at: c.created_at,
        cursor: c.cursor.to_string(),
        paused_at: c.paused_at,
        paused_reason: c.paused_reason,
        attempts: c.attempts,
        failing_since: c.failing_since,
        next_attempt_at: c.next_attempt_at,
        delivered_at: c.delivered_at,
        pending,
        cursor_pos: c.cursor,
    })
}

/// Whether `hook` delivers the entries of `doc_id` now: one of its documents (when it
/// names some), and one its creator may hook (`roles::hooks_document`).
pub fn covers(db: &mut Db, hook: &Webhook, doc_id: &str) -> Result<bool> {
    if let Some(ids) = &hook.doc_ids {
        if !ids.iter().any(|d| d == doc_id) {
            return Ok(false);
        }
    }
    roles::hooks_document(db, &hook.created_by, doc_id)
}
