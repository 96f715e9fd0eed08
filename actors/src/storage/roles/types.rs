//! The role function's vocabulary: roles, how one was obtained, the lists' lines, and the
//! rows the two backends answer with.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Viewer,
    Editor,
    Owner,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Editor => "editor",
            Role::Owner => "owner",
        }
    }

    pub fn can_write(self) -> bool {
        self >= Role::Editor
    }

    /// Deleting a document for everyone: the owner only.
    pub fn can_delete(self) -> bool {
        self == Role::Owner
    }

    /// Seeing and changing whom a document or folder is shared with: the owner only (a
    /// share can never hand out more than its giver holds, and only the owner holds all).
    pub fn can_manage_shares(self) -> bool {
        self == Role::Owner
    }

    /// Moving a document to another folder (which changes who inherits access through
    /// folder shares): the owner only.
    pub fn can_move_to_folder(self) -> bool {
        self == Role::Owner
    }

    pub fn from_access(access: &str) -> Role {
        if access == "write" {
            Role::Editor
        } else {
            Role::Viewer
        }
    }
}

/// A bullet shared with the user, directly (`team` None) or with a team of theirs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulletAccess {
    pub block_id: String,
    /// `read` or `write`.
    pub access: String,
    pub team: Option<String>,
}

/// What of a document a grant reaches: all of it, or only the subtrees of shared bullets
/// (PROTOCOL §10) — each root with the role its shares give there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    Document,
    Bullets(std::sync::Arc<[BulletRoot]>),
}

impl Reach {
    pub fn is_document(&self) -> bool {
        matches!(self, Reach::Document)
    }
}

/// A shared bullet: the root of a subtree a guest sees, and their role inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulletRoot {
    pub block_id: String,
    pub role: Role,
}

/// A role and the path it came by (`owner`, `direct`, `team:<name>`, `folder:<name>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Grant {
    pub role: Role,
    pub via: String,
}

/// The role function's whole answer for a document: the best role, how it came, and what
/// of the document it reaches. A bullet guest's `role` is the best of their bullets'.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub grant: Grant,
    pub reach: Reach,
}

/// One line of a user's document list: the document and the caller's role on it, with how
/// that role was obtained (`direct`, `team:…`, `folder:…`, `owner`).
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DocSummary {
    pub doc_id: String,
    pub title: String,
    pub icon: Option<String>,
    pub owner_id: String,
    pub folder_id: Option<String>,
    pub head_seq: i64,
    pub updated_at: i64,
    pub role: String,
    pub via: String,
}

/// A folder the user can see, with their role on it (for the home page's folder tree).
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct FolderSummary {
    pub folder_id: String,
    pub name: String,
    pub owner_id: String,
    /// None at the top, or when the parent is not visible to this user.
    pub parent_id: Option<String>,
    pub role: String,
}

/// Where a document sits: its owner and folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocPlace {
    pub owner_id: String,
    pub folder_id: Option<String>,
}

/// One way a user reaches a folder on a chain from a folder up to the root: owning a folder
/// of the chain (`owns`), or a share of one to them or a team of theirs (`access`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChainAccess {
    pub owns: bool,
    /// `read` or `write` for a share; `write` for an owned folder.
    pub access: String,
    pub folder_name: String,
    /// 0 for the folder asked about, 1 for its parent, …
    pub depth: i64,
}

/// A folder as the folder list reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderRow {
    pub folder_id: String,
    pub name: String,
    pub owner_id: String,
    pub parent_id: Option<String>,
}

/// A document's line in the lists, before the role is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocRow {
    pub doc_id: String,
    pub title: String,
    pub icon: Option<String>,
    pub owner_id: String,
    pub folder_id: Option<String>,
    pub head_seq: i64,
    pub updated_at: i64,
}
