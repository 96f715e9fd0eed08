//! Versions' vocabulary: kinds, metadata, the stored state and its compressed form, the
//! retention policy.

use std::io::{Read, Write};
use std::sync::Arc;

use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use flate2::Compression;
use serde::{Deserialize, Serialize};

use crate::collab::block::Block;
use crate::storage::error::{Result, StorageError};

pub(super) const DAY_MS: i64 = 86_400_000;

/// Why a version exists; decides how long it is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum VersionKind {
    /// Taken by the server when the document changed and the last version was old enough.
    Auto,
    /// Named by an editor; kept until an editor deletes it.
    Named,
    /// Taken right before a restore, so the restore itself can be undone.
    Restore,
}

impl VersionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            VersionKind::Auto => "auto",
            VersionKind::Named => "named",
            VersionKind::Restore => "restore",
        }
    }

    pub(crate) fn parse(s: &str) -> VersionKind {
        match s {
            "named" => VersionKind::Named,
            "restore" => VersionKind::Restore,
            _ => VersionKind::Auto,
        }
    }
}

/// One line of a document's version list (PROTOCOL §8 `{versionId, seq, at, name?,
/// createdBy?, auto}`, with the kind, the author's display name and sizes besides).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VersionMeta {
    pub version_id: String,
    pub seq: i64,
    pub at: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
    /// The display name of `createdBy`, when there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by_name: Option<String>,
    /// Kept by the server (hourly, daily, before a restore) rather than named by a person.
    pub auto: bool,
    pub kind: VersionKind,
    /// Live bullets in the version.
    pub blocks: i64,
    /// Bytes of the version's JSON before and after compression.
    pub raw_bytes: i64,
    pub stored_bytes: i64,
}

/// What a version holds: the title and every live bullet, as the snapshot shows them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionState {
    pub title: String,
    pub blocks: Vec<Arc<Block>>,
}

/// A version to write, taken by the document's actor at `seq`.
#[derive(Debug, Clone)]
pub struct NewVersion {
    pub version_id: String,
    pub doc_id: String,
    pub seq: i64,
    pub at: i64,
    pub kind: VersionKind,
    pub name: Option<String>,
    pub created_by: Option<String>,
    pub state: VersionState,
}

/// The JSON of a state, compressed. Public for the benchmark's size figures.
pub fn encode(state: &VersionState) -> Result<(Vec<u8>, usize)> {
    let json = serde_json::to_vec(state).map_err(|e| StorageError::Corrupt(e.to_string()))?;
    let mut enc = DeflateEncoder::new(Vec::with_capacity(json.len() / 4), Compression::new(6));
    enc.write_all(&json)
        .and_then(|()| enc.finish())
        .map(|body| (body, json.len()))
        .map_err(|e| StorageError::Corrupt(format!("compressing a version: {e}")))
}

pub fn decode(body: &[u8]) -> Result<VersionState> {
    let mut json = Vec::new();
    DeflateDecoder::new(body)
        .read_to_end(&mut json)
        .map_err(|e| StorageError::Corrupt(format!("a stored version: {e}")))?;
    serde_json::from_slice(&json)
        .map_err(|e| StorageError::Corrupt(format!("a stored version: {e}")))
}

/// How long versions are kept (`[history]` in the configuration), in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionPolicy {
    /// An automatic version is taken when the document changed and the newest version is at
    /// least this old; 0 turns automatic versions off.
    pub auto_every_ms: i64,
    /// Every automatic version younger than this is kept.
    pub hourly_ms: i64,
    /// Older ones are thinned to the newest of each UTC day until this age, then removed.
    pub daily_ms: i64,
}

impl Default for VersionPolicy {
    fn default() -> Self {
        VersionPolicy {
            auto_every_ms: 60 * 60_000,
            hourly_ms: 7 * DAY_MS,
            daily_ms: 90 * DAY_MS,
        }
    }
}

/// An automatic version as retention sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retained {
    pub version_id: String,
    pub doc_id: String,
    pub at: i64,
}
