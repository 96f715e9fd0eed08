//! What the conflict review lists.

use serde::Serialize;

use crate::collab::block::Author;

/// One open conflict copy and its original.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpenConflict {
    pub doc_id: String,
    pub doc_title: String,
    /// The copy holding the text that was not applied.
    pub copy_id: String,
    pub copy_text: String,
    pub copy_version: i64,
    /// The bullet it belongs to (`"title"` for the document's title).
    pub original_id: String,
    /// The original's text now (`None` when it is gone for good).
    pub original_text: Option<String>,
    pub original_version: Option<i64>,
    pub original_deleted: bool,
    /// Who wrote the copy's text.
    pub author: Option<Author>,
    /// When the copy was made (or last edited).
    pub at: i64,
}
