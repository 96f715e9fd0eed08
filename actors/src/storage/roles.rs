//! The one role function: who may do what with a document or folder.

use super::db::dispatch;
use super::postgres::roles as pg;
use super::sqlite::roles as lite;

pub use lite::{DocSummary, FolderSummary, Grant, Role};

dispatch! {
    /// The caller's role on a document and how they have it; None for no access, no such
    /// document, or one in the trash.
    pub fn doc_grant(user_id: &str, doc_id: &str) -> Option<Grant> => lite::doc_grant, pg::doc_grant;
    pub fn doc_role(user_id: &str, doc_id: &str) -> Option<Role> => lite::doc_role, pg::doc_role;
    pub fn is_shared(doc_id: &str) -> bool => lite::is_shared, pg::is_shared;
    pub fn readable_folders(user_id: &str) -> Vec<FolderSummary>
        => lite::readable_folders, pg::readable_folders;
    pub fn readable_documents(user_id: &str) -> Vec<DocSummary>
        => lite::readable_documents, pg::readable_documents;
    pub fn readable_doc_ids(user_id: &str) -> Vec<String> => lite::readable_doc_ids, pg::readable_doc_ids;
    pub fn folder_role(user_id: &str, folder_id: &str) -> Option<Role> => lite::folder_role, pg::folder_role;
}
