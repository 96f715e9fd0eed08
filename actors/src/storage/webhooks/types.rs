//! Webhooks' vocabulary: a webhook as its creator and admins see it (never its secret),
//! the batch it is delivering, and one attempt of the delivery log.

use serde::Serialize;

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
