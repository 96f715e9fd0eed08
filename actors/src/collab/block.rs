//! A bullet of the outline as the server stores it and sends it in snapshots and log effects.
//! Field names and meanings are those of PROTOCOL §1; `version` counts content changes only.

use serde::{Deserialize, Serialize};

/// Who wrote a rejected text that now lives in a conflict copy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Author {
    pub user_id: String,
    pub name: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum BlockType {
    #[default]
    Bullet,
    Todo,
    H1,
    H2,
    H3,
    Code,
    Quote,
}

impl BlockType {
    pub fn as_str(self) -> &'static str {
        match self {
            BlockType::Bullet => "bullet",
            BlockType::Todo => "todo",
            BlockType::H1 => "h1",
            BlockType::H2 => "h2",
            BlockType::H3 => "h3",
            BlockType::Code => "code",
            BlockType::Quote => "quote",
        }
    }

    pub fn parse(s: &str) -> Option<BlockType> {
        Some(match s {
            "bullet" => BlockType::Bullet,
            "todo" => BlockType::Todo,
            "h1" => BlockType::H1,
            "h2" => BlockType::H2,
            "h3" => BlockType::H3,
            "code" => BlockType::Code,
            "quote" => BlockType::Quote,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Block {
    pub id: String,
    pub parent_id: Option<String>,
    pub order_key: String,
    pub content: String,
    #[serde(rename = "type")]
    pub block_type: BlockType,
    pub checked: bool,
    pub collapsed: bool,
    pub language: Option<String>,
    pub conflict_of: Option<String>,
    pub conflict_author: Option<Author>,
    pub conflict_resolved: bool,
    pub version: i64,
    pub deleted: bool,
    pub deleted_at: Option<i64>,
    /// The `opId` of the delete that made this tombstone (with `deleted_at`, what tells two
    /// deletes of the same millisecond apart for `restore`). Absent on live blocks and on
    /// tombstones written before it existed (then `deleted_at` alone identifies the delete).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deleted_by: Option<String>,
    pub updated_at: i64,
    pub updated_by: String,
}

impl Block {
    /// A fresh live block at version 1.
    pub fn new(
        id: String,
        parent_id: Option<String>,
        order_key: String,
        content: String,
        at: i64,
        by: &str,
    ) -> Block {
        Block {
            id,
            parent_id,
            order_key,
            content,
            block_type: BlockType::Bullet,
            checked: false,
            collapsed: false,
            language: None,
            conflict_of: None,
            conflict_author: None,
            conflict_resolved: false,
            version: 1,
            deleted: false,
            deleted_at: None,
            deleted_by: None,
            updated_at: at,
            updated_by: by.to_string(),
        }
    }
}
