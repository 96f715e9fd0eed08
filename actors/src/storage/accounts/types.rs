//! Accounts' vocabulary: a user, what an API token may do, a token's and a login session's
//! public faces.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct User {
    pub id: String,
    pub name: String,
    pub display_name: String,
    pub is_admin: bool,
}

/// What an API token may do: `read` never writes; `write` does whatever its user may except
/// the admin endpoints; `admin` everything its user may. A login session is `admin` (its
/// user's own rights decide).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Read,
    Write,
    Admin,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Admin => "admin",
        }
    }

    pub fn parse(s: &str) -> Option<Scope> {
        match s {
            "read" => Some(Scope::Read),
            "write" => Some(Scope::Write),
            "admin" => Some(Scope::Admin),
            _ => None,
        }
    }

    /// The prefix of a token of this scope: the scope can be read off a presented token
    /// before any I/O, and cannot be changed by its bearer (the stored hash covers it).
    pub fn token_prefix(self) -> &'static str {
        match self {
            Scope::Read => "dsr_",
            Scope::Write => "dsw_",
            Scope::Admin => "dsa_",
        }
    }

    /// The scope a presented token's prefix claims; tokens made before scopes existed
    /// (`dst_`) could do everything. Unknown prefixes name no token.
    pub fn of_token(token: &str) -> Option<Scope> {
        match token.get(..4)? {
            "dsr_" => Some(Scope::Read),
            "dsw_" => Some(Scope::Write),
            "dsa_" | "dst_" => Some(Scope::Admin),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenInfo {
    pub token_id: String,
    pub label: String,
    pub scope: Scope,
    pub created_at: i64,
    /// Unix ms; none: until deleted.
    pub expires_at: Option<i64>,
}

/// One of a user's login sessions, as the "signed in on" list shows it. The ID is the
/// first 16 hex digits of the stored hash: it names the session without being its secret.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    pub session_id: String,
    pub created_at: i64,
    pub expires_at: i64,
    pub user_agent: String,
    /// The session this request came with.
    pub current: bool,
}

/// A stored session: hash, created, expires, user agent.
pub type SessionRow = (String, i64, i64, String);

/// A token's row as stored: only the hash of its secret.
pub struct TokenRow<'a> {
    pub id: &'a str,
    pub user_id: &'a str,
    pub hash: &'a str,
    pub label: &'a str,
    pub scope: Scope,
    pub expires_at: Option<i64>,
    pub created_at: i64,
}
