//! What the trash lists.

use serde::Serialize;

/// One document in a user's trash.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TrashedDoc {
    pub doc_id: String,
    pub title: String,
    pub icon: Option<String>,
    pub trashed_at: i64,
    /// When the compaction supervisor purges it for good.
    pub purge_at: i64,
    /// Live bullets it holds.
    pub blocks: i64,
}
