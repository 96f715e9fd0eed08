//! The audit log's rows.

use serde::Serialize;

/// A security event about to be recorded.
#[derive(Debug, Clone, Default)]
pub struct AuditEvent {
    pub actor_id: Option<String>,
    pub actor_name: Option<String>,
    /// Dotted, from a fixed list (`login.ok`, `user.deactivated`, …: `audit::actions`).
    pub action: &'static str,
    /// What it was done to: `user:NAME`, `doc:ID`, `folder:ID`, `token:ID`, `invite:ID`.
    pub target: String,
    pub ip: String,
    pub detail: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AuditRow {
    /// Increasing: the order events committed in; `before` pages by it.
    pub id: i64,
    pub at: i64,
    pub actor_id: Option<String>,
    pub actor_name: Option<String>,
    pub action: String,
    pub target: String,
    pub ip: String,
    #[schema(value_type = Object)]
    pub detail: serde_json::Value,
}

/// Which rows `list` answers with.
#[derive(Debug, Clone, Default)]
pub struct AuditFilter {
    /// Only rows with a smaller ID.
    pub before: Option<i64>,
    pub limit: i64,
    /// A user's ID or name.
    pub actor: Option<String>,
    /// An action, or its first part (`login` matches `login.ok` and `login.failed`).
    pub action: Option<String>,
}
