//! What search, tags and backlinks answer.

use serde::Serialize;

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlockHit {
    pub doc_id: String,
    pub doc_title: String,
    pub block_id: String,
    pub content: String,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TagCount {
    pub tag: String,
    pub blocks: i64,
    pub documents: i64,
}
