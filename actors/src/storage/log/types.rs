//! The log's vocabulary. A `LogRecord` keeps its JSON form ready-made so a hot document's
//! actor serialises each entry exactly once.

use std::collections::{HashMap, HashSet};

use serde_json::value::RawValue;

use crate::collab::op::{Effect, LogEntry, OpResult};
use crate::storage::error::{Result, StorageError};

#[derive(Debug, Clone)]
pub struct LogRecord {
    pub seq: i64,
    pub op_id: String,
    pub kind: String,
    pub client_id: String,
    pub user_id: String,
    pub at: i64,
    /// The whole entry as sent to clients and stored in `doc_ops.entry`.
    pub json: Box<RawValue>,
    /// The bullets the entry changed (for `block_changes`; empty when read back).
    pub blocks: Vec<String>,
}

impl LogRecord {
    pub fn from_entry(e: &LogEntry) -> LogRecord {
        LogRecord {
            seq: e.seq,
            op_id: e.op_id.clone(),
            kind: e.kind.clone(),
            client_id: e.client_id.clone(),
            user_id: e.user_id.clone(),
            at: e.at,
            json: serde_json::value::to_raw_value(e).expect("log entry serialises"),
            blocks: e
                .effects
                .iter()
                .flat_map(|eff| match eff {
                    Effect::Block { block } => vec![block.id.clone()],
                    Effect::Purge { block_ids } => block_ids.clone(),
                    Effect::Title { .. } => Vec::new(),
                })
                .collect(),
        }
    }
}

/// One change of a bullet as its history shows it (PROTOCOL §8): from the log, or — past
/// the log's retention — the bullet's state in a kept version (`kind` "version").
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct BlockChange {
    pub seq: i64,
    pub at: i64,
    pub user_id: String,
    /// The author's display name (their user ID when the account is gone).
    pub name: String,
    /// The op kind (`insert`, `set_content`, `move`, `delete`, …, `purge`).
    pub kind: String,
    /// The bullet as this change left it (absent for a purge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    pub deleted: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict_of: Option<String>,
    /// The version this state comes from (kind "version" only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_id: Option<String>,
}

impl BlockChange {
    /// One bullet's change as its history shows it, from a log row (`entry` is the stored
    /// JSON): the bullet as that entry left it, or a purge when the entry names it without
    /// its state; `name` is the author's display name (their ID when the account is gone).
    /// Both backends read the row; what it means is decided here.
    pub fn from_entry(
        block_id: &str,
        seq: i64,
        at: i64,
        user_id: String,
        kind: String,
        entry: &str,
        name: Option<String>,
    ) -> Result<BlockChange> {
        let entry: LogEntry = serde_json::from_str(entry)
            .map_err(|e| StorageError::Corrupt(format!("doc_ops {seq}: {e}")))?;
        let block = entry.effects.iter().find_map(|e| match e {
            Effect::Block { block } if block.id == block_id => Some(block.clone()),
            _ => None,
        });
        let purged = block.is_none();
        Ok(BlockChange {
            seq,
            at,
            name: name.unwrap_or_else(|| user_id.clone()),
            user_id,
            kind: if purged { "purge".into() } else { kind },
            content: block.as_ref().map(|b| b.content.clone()),
            parent_id: block.as_ref().and_then(|b| b.parent_id.clone()),
            deleted: purged || block.as_ref().is_some_and(|b| b.deleted),
            conflict_of: block.and_then(|b| b.conflict_of.clone()),
            version_id: None,
        })
    }
}

/// What must be known before a request's ops are applied, read off the actor's thread:
/// results already given for its op IDs, and which named block IDs belong elsewhere.
#[derive(Debug, Clone, Default)]
pub struct Precheck {
    pub known: HashMap<String, OpResult>,
    pub foreign: HashSet<String>,
}
