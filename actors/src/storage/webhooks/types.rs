//! Webhooks' vocabulary: a webhook as its creator and admins see it (never its secret),
//! the batch it is delivering, and one attempt of the delivery log.

use serde::Serialize;

use crate::storage::error::{Result, StorageError};

/// A batch cut from the feed and not yet acknowledged: every attempt sends the entries
/// after `after` up to `to` under delivery ID `id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    pub id: String,
    pub after: i64,
    pub to: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Webhook {
    pub id: String,
    /// The user whose rights decide what it delivers.
    pub created_by: String,
    /// Their user name (None once the account is deleted).
    pub created_by_name: Option<String>,
    pub url: String,
    /// What it delivers: `ops` (every log entry).
    pub events: Vec<String>,
    /// Only these documents; none means every document its creator may have hooked.
    pub doc_ids: Option<Vec<String>>,
    pub created_at: i64,
    /// The feed position delivered through.
    pub cursor: String,
    /// `active`, or `paused` (nothing is sent until someone resumes it).
    pub state: String,
    pub paused_at: Option<i64>,
    pub paused_reason: Option<String>,
    /// The delivery being attempted (its ID stays the same across retries).
    pub pending_delivery: Option<String>,
    /// Failed attempts of the pending delivery.
    pub attempts: i64,
    /// When the receiver started failing (retries stop `retry_hours` later).
    pub failing_since: Option<i64>,
    pub next_attempt_at: Option<i64>,
    /// When a delivery was last acknowledged.
    pub delivered_at: Option<i64>,
    #[serde(skip)]
    pub pending: Option<Pending>,
    #[serde(skip)]
    pub cursor_pos: i64,
}

impl Webhook {
    /// A webhook about to be stored: active, nothing attempted or delivered yet, delivering
    /// the feed after `cursor_pos`.
    pub fn new(
        id: String,
        created_by: String,
        url: String,
        events: Vec<String>,
        doc_ids: Option<Vec<String>>,
        created_at: i64,
        cursor_pos: i64,
    ) -> Webhook {
        Webhook {
            id,
            created_by,
            created_by_name: None,
            url,
            events,
            doc_ids,
            created_at,
            cursor: String::new(),
            state: String::new(),
            paused_at: None,
            paused_reason: None,
            pending_delivery: None,
            attempts: 0,
            failing_since: None,
            next_attempt_at: None,
            delivered_at: None,
            pending: None,
            cursor_pos,
        }
    }

    pub fn is_paused(&self) -> bool {
        self.paused_at.is_some()
    }
}

/// One attempt to deliver a batch, as the delivery log shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Delivery {
    pub delivery_id: String,
    /// 1 for the first attempt of this delivery, then 2, 3, …
    pub attempt: i64,
    pub at: i64,
    pub entries: i64,
    /// The feed position the batch ends at.
    pub cursor: String,
    /// `delivered`, `failed` (to be retried) or `paused`.
    pub outcome: String,
    /// The receiver's HTTP status, if it answered.
    pub status: Option<i32>,
    /// What went wrong, in words.
    pub error: Option<String>,
    /// How long the attempt took.
    pub ms: i64,
}

/// A stored list (events, document IDs) as its JSON text.
pub(super) fn json_list(items: &[String]) -> String {
    serde_json::to_string(items).unwrap_or_else(|_| "[]".into())
}

fn parse_list(id: &str, what: &str, json: &str) -> Result<Vec<String>> {
    serde_json::from_str(json)
        .map_err(|e| StorageError::Corrupt(format!("webhook {id} {what}: {e}")))
}

/// A webhook's row as both backends read it.
pub(super) struct Columns {
    pub(super) id: String,
    pub(super) created_by: String,
    pub(super) url: String,
    pub(super) events: String,
    pub(super) doc_ids: Option<String>,
    pub(super) created_at: i64,
    pub(super) cursor: i64,
    pub(super) paused_at: Option<i64>,
    pub(super) paused_reason: Option<String>,
    pub(super) pending_id: Option<String>,
    pub(super) pending_after: Option<i64>,
    pub(super) pending_to: Option<i64>,
    pub(super) attempts: i64,
    pub(super) failing_since: Option<i64>,
    pub(super) next_attempt_at: Option<i64>,
    pub(super) delivered_at: Option<i64>,
    pub(super) created_by_name: Option<String>,
}

pub(super) fn from_columns(c: Columns) -> Result<Webhook> {
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
