//! People as an admin sees them: an account each.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Account {
    pub id: String,
    pub name: String,
    pub display_name: String,
    pub is_admin: bool,
    pub active: bool,
    pub created_at: i64,
    /// The last sign-in (unix ms); none: never signed in with a password or SSO.
    pub last_seen_at: Option<i64>,
    /// How they sign in: `sso` (single sign-on), `password`, or `none` until a password is
    /// set (a reset link).
    pub sign_in: String,
}

/// What a removed person's documents, folders and teams went to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Transferred {
    pub documents: i64,
    pub folders: i64,
    pub teams: i64,
}
