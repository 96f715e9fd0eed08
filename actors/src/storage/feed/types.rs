//! The feed's vocabulary: a row as stored, and what a page of the feed holds.

use serde::Serialize;

use crate::collab::op::Effect;

/// One row of the feed: its number, the log entry it stands for, and that entry's stored
/// JSON — None once compaction took the entry (the reader is told to resync the document).
#[derive(Debug, Clone, PartialEq)]
pub struct FeedRow {
    pub pos: i64,
    pub doc_id: String,
    pub seq: i64,
    pub entry: Option<String>,
}

/// One item of a feed page (PROTOCOL §11): a log entry, or — for an entry compaction took —
/// word to read the document's snapshot instead.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum FeedItem {
    Entry(FeedEntry),
    Resync(FeedResync),
}

/// A log entry as the feed sends it: the document's entry (PROTOCOL §2.2) without the
/// op and client IDs (a tab's, of no use elsewhere), with the bullet it changed first.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedEntry {
    /// Where the feed stands after this entry: pass it as `since` to go on from here.
    pub cursor: String,
    pub doc_id: String,
    pub seq: i64,
    pub at: i64,
    pub user_id: String,
    pub kind: String,
    /// The first bullet the entry changed (None for a title change).
    pub block_id: Option<String>,
    pub effects: Vec<Effect>,
}

/// Entries of this document are no longer in its log: read its snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedResync {
    pub cursor: String,
    pub doc_id: String,
    pub resync: bool,
}

/// A page of the feed: what the caller may read after their cursor, and where to go on.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FeedPage {
    pub entries: Vec<FeedItem>,
    /// Past everything looked at, sent or not (entries the caller may not read are passed).
    pub cursor: String,
    /// Whether more is there already: ask again at once.
    pub more: bool,
}

impl FeedItem {
    /// Where the feed stands after this item.
    pub fn cursor(&self) -> &str {
        match self {
            FeedItem::Entry(e) => &e.cursor,
            FeedItem::Resync(r) => &r.cursor,
        }
    }

    pub fn doc_id(&self) -> &str {
        match self {
            FeedItem::Entry(e) => &e.doc_id,
            FeedItem::Resync(r) => &r.doc_id,
        }
    }
}
