//! Invitations and password-reset links, as admins see them.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Invite {
    pub invite_id: String,
    /// `join` makes a new account; `reset` sets the password of `userId`.
    pub kind: String,
    /// `member` or `admin`: what a `join` makes.
    pub role: String,
    pub user_id: Option<String>,
    pub user_name: Option<String>,
    pub created_by: String,
    pub created_at: i64,
    pub expires_at: i64,
    pub max_uses: i64,
    pub uses: i64,
    pub revoked_at: Option<i64>,
    /// `open`, `revoked`, `expired` or `used up`, by the server's clock when it was read.
    pub status: String,
    /// Who used it, in order.
    pub used_by: Vec<InviteUse>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct InviteUse {
    pub user_id: String,
    pub user_name: String,
    pub at: i64,
}

/// What an invitation makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InviteKind {
    Join { admin: bool },
    Reset { user_id: String },
}
