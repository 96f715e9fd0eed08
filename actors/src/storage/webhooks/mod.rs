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
use crate::storage::error::Result;
use crate::storage::roles;

/// Events a webhook can ask for.
pub const EVENTS: [&str; 1] = ["ops"];

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
