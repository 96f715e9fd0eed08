//! Sharing's rows, asked of whichever backend holds the data (same names in `sqlite.rs` and
//! `postgres.rs`).

use super::postgres;
use super::sqlite;
use super::types::{Folder, Share, SharedBulletRow};
use crate::storage::db::{row_questions, Db};
use crate::storage::error::Result;

row_questions! {
    pub fn user_exists(user_id: &str) -> bool;
    pub fn team_exists(team_id: &str) -> bool;
    /// (login name, display name) of a user.
    pub fn user_names(user_id: &str) -> Option<(String, String)>;
    pub fn team_name(team_id: &str) -> Option<String>;
    /// Deletes the user's direct share of the document; true if there was one.
    pub fn leave_doc_share(doc_id: &str, user_id: &str) -> bool;
    /// Deletes the user's direct share of the folder; true if there was one.
    pub fn leave_folder_share(folder_id: &str, user_id: &str) -> bool;
    /// Removes a member who is not the team's owner; true if they were in it.
    pub fn leave_team(team_id: &str, user_id: &str) -> bool;
    /// The document's user shares by user ID, then its team shares by team ID.
    pub fn doc_shares(doc_id: &str) -> Vec<Share>;
    pub fn clear_doc_shares(doc_id: &str) -> ();
    pub fn insert_doc_share(doc_id: &str, share: &Share) -> ();
    /// The folder's shares by kind, then principal ID.
    pub fn folder_shares(folder_id: &str) -> Vec<Share>;
    pub fn clear_folder_shares(folder_id: &str) -> ();
    pub fn insert_folder_share(folder_id: &str, share: &Share) -> ();
    pub fn insert_team(team_id: &str, name: &str, owner_id: &str, now: i64) -> ();
    /// (name, owner) of a team.
    pub fn team_row(team_id: &str) -> Option<(String, String)>;
    /// Member IDs, sorted.
    pub fn team_members(team_id: &str) -> Vec<String>;
    /// The oldest team of that name.
    pub fn team_id_by_name(name: &str) -> Option<String>;
    /// Teams the user owns or is a member of.
    pub fn team_ids_of(user_id: &str) -> Vec<String>;
    /// Every team, by name.
    pub fn all_team_ids() -> Vec<String>;
    pub fn clear_members(team_id: &str) -> ();
    /// Adds a member (nothing when already one).
    pub fn add_member(team_id: &str, user_id: &str) -> ();
    pub fn insert_folder(folder: &Folder, now: i64) -> ();
    pub fn rename_folder(folder_id: &str, name: &str) -> ();
    pub fn folder(folder_id: &str) -> Option<Folder>;
    /// The folder and every folder below it.
    pub fn folder_and_below(folder_id: &str) -> Vec<String>;
    pub fn set_folder_parent(folder_id: &str, parent: Option<&str>) -> ();
    /// Moves the documents and subfolders of `folder_id` to `parent`.
    pub fn move_contents(folder_id: &str, parent: Option<&str>, now: i64) -> ();
    /// Deletes the folder row and its shares.
    pub fn delete_folder_row(folder_id: &str) -> ();
    pub fn set_doc_folder(doc_id: &str, folder: Option<&str>, now: i64) -> ();
    pub fn doc_owner(doc_id: &str) -> Option<String>;
    /// Every document in the folder and its subfolders.
    pub fn docs_under_folder(folder_id: &str) -> Vec<String>;
    /// Documents shared with the team directly.
    pub fn docs_shared_with_team(team_id: &str) -> Vec<String>;
    /// Folders shared with the team.
    pub fn folders_shared_with_team(team_id: &str) -> Vec<String>;
    /// Whether the document has a block of that ID (deleted or not).
    pub fn block_in_doc(doc_id: &str, block_id: &str) -> bool;
    /// A block's parent and text, if the document has it.
    pub fn block_parent(doc_id: &str, block_id: &str) -> Option<(Option<String>, String)>;
    /// A bullet's shares: user shares by user ID, then team shares by team ID.
    pub fn block_shares(doc_id: &str, block_id: &str) -> Vec<Share>;
    pub fn clear_block_shares(doc_id: &str, block_id: &str) -> ();
    pub fn insert_block_share(doc_id: &str, block_id: &str, share: &Share) -> ();
    /// The bullets shared with the user or a team of theirs, in documents not in the
    /// trash, each once, with the bullet's text as stored.
    pub fn shared_bullets(user_id: &str) -> Vec<SharedBulletRow>;
}
