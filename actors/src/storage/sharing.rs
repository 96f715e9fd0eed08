//! Shares of documents and folders, teams and folders themselves.

use super::db::dispatch;
use super::postgres::sharing as pg;
use super::sqlite::sharing as lite;

pub use lite::{Access, Folder, NamedShare, Share, ShareKind, Team};

dispatch! {
    pub fn with_names(shares: Vec<Share>) -> Vec<NamedShare> => lite::with_names, pg::with_names;
    pub fn check_team_shares(sharer_id: &str, sharer_is_admin: bool, current: &[Share], shares: &[Share]) -> ()
        => lite::check_team_shares, pg::check_team_shares;
    pub fn leave_doc_share(doc_id: &str, user_id: &str) -> bool => lite::leave_doc_share, pg::leave_doc_share;
    pub fn leave_folder_share(folder_id: &str, user_id: &str) -> bool
        => lite::leave_folder_share, pg::leave_folder_share;
    pub fn leave_team(team_id: &str, user_id: &str) -> bool => lite::leave_team, pg::leave_team;
    pub fn doc_shares(doc_id: &str) -> Vec<Share> => lite::doc_shares, pg::doc_shares;
    pub fn set_doc_shares(doc_id: &str, owner_id: &str, shares: &[Share]) -> ()
        => lite::set_doc_shares, pg::set_doc_shares;
    pub fn folder_shares(folder_id: &str) -> Vec<Share> => lite::folder_shares, pg::folder_shares;
    pub fn set_folder_shares(folder_id: &str, shares: &[Share]) -> ()
        => lite::set_folder_shares, pg::set_folder_shares;
    pub fn create_team(name: &str, owner_id: &str, now: i64) -> Team => lite::create_team, pg::create_team;
    pub fn team(team_id: &str) -> Option<Team> => lite::team, pg::team;
    pub fn team_by_name(name: &str) -> Option<Team> => lite::team_by_name, pg::team_by_name;
    pub fn my_teams(user_id: &str) -> Vec<Team> => lite::my_teams, pg::my_teams;
    pub fn set_members(team_id: &str, owner_id: &str, members: &[String]) -> ()
        => lite::set_members, pg::set_members;
    pub fn create_folder(name: &str, owner_id: &str, parent: Option<&str>, now: i64) -> Folder
        => lite::create_folder, pg::create_folder;
    pub fn rename_folder(folder_id: &str, name: &str) -> () => lite::rename_folder, pg::rename_folder;
    pub fn move_folder(folder_id: &str, parent: Option<&str>) -> Vec<String> => lite::move_folder, pg::move_folder;
    pub fn delete_folder(folder_id: &str, now: i64) -> Vec<String> => lite::delete_folder, pg::delete_folder;
    pub fn folder(folder_id: &str) -> Option<Folder> => lite::folder, pg::folder;
    pub fn set_doc_folder(doc_id: &str, folder: Option<&str>, now: i64) -> ()
        => lite::set_doc_folder, pg::set_doc_folder;
    pub fn doc_owner(doc_id: &str) -> Option<String> => lite::doc_owner, pg::doc_owner;
    pub fn docs_under_folder(folder_id: &str) -> Vec<String> => lite::docs_under_folder, pg::docs_under_folder;
    pub fn docs_reached_by_team(team_id: &str) -> Vec<String>
        => lite::docs_reached_by_team, pg::docs_reached_by_team;
    pub fn all_teams() -> Vec<Team> => lite::all_teams, pg::all_teams;
}
