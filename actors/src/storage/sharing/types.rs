//! Sharing's vocabulary: who a share names, what access it gives, teams and folders.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ShareKind {
    User,
    Team,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Access {
    Read,
    Write,
}

impl Access {
    pub fn as_str(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::Write => "write",
        }
    }

    pub fn parse(s: &str) -> Access {
        if s == "write" {
            Access::Write
        } else {
            Access::Read
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Share {
    pub kind: ShareKind,
    pub id: String,
    pub access: Access,
}

/// A share as the owner sees it: who (with a name a person can read) and what access.
/// Only in answers; `PUT` takes plain `Share`s.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct NamedShare {
    // Spelled out rather than a flattened `Share`: `Share` refuses unknown fields (it is a
    // request body), which a schema cannot combine with more fields.
    pub kind: ShareKind,
    pub id: String,
    pub access: Access,
    /// The user's login name or the team's name.
    pub name: String,
    /// The user's display name (users only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Team {
    pub team_id: String,
    pub name: String,
    pub owner_id: String,
    pub members: Vec<String>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Folder {
    pub folder_id: String,
    pub name: String,
    pub owner_id: String,
    pub parent_id: Option<String>,
}

impl ShareKind {
    /// As stored in `workspace_folder_shares.kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            ShareKind::User => "user",
            ShareKind::Team => "team",
        }
    }

    pub fn parse(s: &str) -> ShareKind {
        if s == "team" {
            ShareKind::Team
        } else {
            ShareKind::User
        }
    }
}

/// A bullet shared with someone, as their home page lists it (rows of `shared_bullets`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedBulletRow {
    pub doc_id: String,
    pub block_id: String,
    /// The bullet's text; None when its row is gone (purged).
    pub content: Option<String>,
    pub deleted: bool,
}

/// A bullet shared with the caller (`GET /shared/bullets`): the document it is in, the
/// bullet (the root of what they see), its text as the title, and their role there.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SharedBullet {
    pub doc_id: String,
    pub block_id: String,
    pub title: String,
    pub role: crate::storage::roles::Role,
    /// The bullet is deleted (its owner may restore it; until then there is nothing to see).
    pub deleted: bool,
}
