//! The rows the role function reads, asked of whichever backend holds the data. Each
//! question has the same name and answer in `sqlite.rs` and `postgres.rs`.

use super::postgres;
use super::sqlite;
use super::types::{BulletAccess, ChainAccess, DocPlace, DocRow, FolderRow};
use crate::storage::db::{row_questions, Db};
use crate::storage::error::Result;

row_questions! {
    /// Whether the user exists and is not deactivated.
    pub fn user_active(user_id: &str) -> bool;
    /// Owner and folder of a document not in the trash.
    pub fn live_doc_place(doc_id: &str) -> Option<DocPlace>;
    /// Owner and folder of a document, trashed or not.
    pub fn doc_place(doc_id: &str) -> Option<DocPlace>;
    /// The access of a direct share of the document to the user.
    pub fn direct_access(doc_id: &str, user_id: &str) -> Option<String>;
    /// (access, team name) of each share of the document to a team the user is in.
    pub fn team_accesses(doc_id: &str, user_id: &str) -> Vec<(String, String)>;
    /// How the user reaches the folder chain from `folder_id` up: owned folders first, then
    /// shares; each nearest first.
    pub fn chain_accesses(folder_id: &str, user_id: &str) -> Vec<ChainAccess>;
    /// The bullets of the document shared with the user or a team of theirs, by block ID
    /// (direct shares before team shares of the same bullet).
    pub fn bullet_accesses(doc_id: &str, user_id: &str) -> Vec<BulletAccess>;
    /// Whether the document, or a bullet of it, is shared with a person or a team.
    pub fn has_doc_shares(doc_id: &str) -> bool;
    /// Whether a folder on the chain from `folder_id` up is shared, or owned by anyone but
    /// `owner_id`.
    pub fn chain_reaches_others(folder_id: &str, owner_id: &str) -> bool;
    /// Every folder the user owns or has shared with them (or a team of theirs), and every
    /// subfolder of those, by name (case-insensitive), then ID.
    pub fn reachable_folders(user_id: &str) -> Vec<FolderRow>;
    /// IDs of every document the user can read (owned, shared directly or by team, or in a
    /// folder the user reaches), none in the trash.
    pub fn readable_doc_ids(user_id: &str) -> Vec<String>;
    pub fn doc_row(doc_id: &str) -> Option<DocRow>;
}
