//! Operations a client sends, the result the server answers for each, and the effects that
//! go into the log (PROTOCOL §2 and §2.2). Parsing is strict: unknown kinds and wrong types
//! fail deserialisation; semantic limits are checked by `validate`.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::block::{Block, BlockType};

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Op {
    pub op_id: String,
    #[serde(flatten)]
    pub kind: OpKind,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, utoipa::ToSchema)]
// Fields are camelCase per variant (not `rename_all_fields`) so the API document sees them too.
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OpKind {
    #[serde(rename_all = "camelCase")]
    Insert {
        block_id: String,
        parent_id: Option<String>,
        order_key: String,
        content: String,
        #[serde(rename = "type", default)]
        block_type: Option<BlockType>,
        #[serde(default)]
        checked: Option<bool>,
        #[serde(default)]
        language: Option<String>,
    },
    #[serde(rename_all = "camelCase")]
    SetContent {
        block_id: String,
        content: String,
        base_version: i64,
    },
    #[serde(rename_all = "camelCase")]
    SetProps { block_id: String, props: Props },
    #[serde(rename_all = "camelCase")]
    Move {
        block_id: String,
        parent_id: Option<String>,
        order_key: String,
    },
    #[serde(rename_all = "camelCase")]
    Delete { block_id: String },
    #[serde(rename_all = "camelCase")]
    Restore { block_id: String },
    #[serde(rename_all = "camelCase")]
    SetTitle { title: String, base_version: i64 },
}

impl OpKind {
    pub fn name(&self) -> &'static str {
        match self {
            OpKind::Insert { .. } => "insert",
            OpKind::SetContent { .. } => "set_content",
            OpKind::SetProps { .. } => "set_props",
            OpKind::Move { .. } => "move",
            OpKind::Delete { .. } => "delete",
            OpKind::Restore { .. } => "restore",
            OpKind::SetTitle { .. } => "set_title",
        }
    }

    /// Bytes of text this op may bring into the document (its content or title), for the
    /// per-document size budget.
    pub fn added_text_bytes(&self) -> usize {
        match self {
            OpKind::Insert { content, .. } | OpKind::SetContent { content, .. } => content.len(),
            OpKind::SetTitle { title, .. } => title.len(),
            _ => 0,
        }
    }

    /// Block IDs this op names (target and, where given, parent), for the foreign-ID check.
    pub fn referenced_blocks(&self) -> Vec<&str> {
        match self {
            OpKind::Insert {
                block_id,
                parent_id,
                ..
            }
            | OpKind::Move {
                block_id,
                parent_id,
                ..
            } => {
                let mut v = vec![block_id.as_str()];
                if let Some(p) = parent_id {
                    v.push(p.as_str());
                }
                v
            }
            OpKind::SetContent { block_id, .. }
            | OpKind::SetProps { block_id, .. }
            | OpKind::Delete { block_id }
            | OpKind::Restore { block_id } => vec![block_id.as_str()],
            OpKind::SetTitle { .. } => vec![],
        }
    }
}

/// `set_props` payload: every field optional; `language` may be set to null explicitly.
#[derive(Debug, Clone, PartialEq, Default, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Props {
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub block_type: Option<BlockType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collapsed: Option<bool>,
    #[serde(
        default,
        deserialize_with = "double_option",
        skip_serializing_if = "Option::is_none"
    )]
    pub language: Option<Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict_resolved: Option<bool>,
}

fn double_option<'de, D>(de: D) -> Result<Option<Option<String>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Option::<String>::deserialize(de).map(Some)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum OpStatus {
    Applied,
    Conflict,
    Rejected,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RejectReason {
    UnknownBlock,
    DuplicateBlock,
    Cycle,
    ParentDeleted,
    Locked,
    Deleted,
    Purged,
    Invalid,
    /// A `move` would put a block of the moved subtree deeper than `limits.max_depth`.
    TooDeep,
}

impl RejectReason {
    pub fn as_str(self) -> &'static str {
        match self {
            RejectReason::UnknownBlock => "unknown_block",
            RejectReason::DuplicateBlock => "duplicate_block",
            RejectReason::Cycle => "cycle",
            RejectReason::ParentDeleted => "parent_deleted",
            RejectReason::Locked => "locked",
            RejectReason::Deleted => "deleted",
            RejectReason::Purged => "purged",
            RejectReason::Invalid => "invalid",
            RejectReason::TooDeep => "too_deep",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct OpResult {
    pub op_id: String,
    pub status: OpStatus,
    pub seq: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conflict_block_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<RejectReason>,
}

impl OpResult {
    pub fn applied(op_id: &str, block_id: Option<&str>) -> OpResult {
        OpResult {
            op_id: op_id.to_string(),
            status: OpStatus::Applied,
            seq: None,
            block_id: block_id.map(str::to_string),
            conflict_block_id: None,
            reason: None,
        }
    }

    pub fn rejected(op_id: &str, block_id: Option<&str>, reason: RejectReason) -> OpResult {
        OpResult {
            op_id: op_id.to_string(),
            status: OpStatus::Rejected,
            seq: None,
            block_id: block_id.map(str::to_string),
            conflict_block_id: None,
            reason: Some(reason),
        }
    }

    pub fn conflict(op_id: &str, block_id: &str, copy_id: &str) -> OpResult {
        OpResult {
            op_id: op_id.to_string(),
            status: OpStatus::Conflict,
            seq: None,
            block_id: Some(block_id.to_string()),
            conflict_block_id: Some(copy_id.to_string()),
            reason: None,
        }
    }
}

/// Resulting state written to the log; replaying effects in `seq` order rebuilds the document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "e", rename_all = "snake_case")]
pub enum Effect {
    Block {
        block: Arc<Block>,
    },
    #[serde(rename_all = "camelCase")]
    Title {
        title: String,
        title_version: i64,
    },
    #[serde(rename_all = "camelCase")]
    Purge {
        block_ids: Vec<String>,
    },
}

/// One log row (`doc_ops`), as sent to clients in `/sync` responses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LogEntry {
    pub seq: i64,
    pub op_id: String,
    pub kind: String,
    pub client_id: String,
    pub user_id: String,
    pub at: i64,
    pub effects: Vec<Effect>,
}
