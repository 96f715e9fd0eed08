//! The audit log (PROTOCOL §9): one row per security event, written by the same storage call
//! — so in the same transaction — as the change it records; a change that is undone leaves
//! no row, and a row never stands for a change that did not happen. Names are copied into
//! the row: the log outlives the accounts it names. Kept `audit.keep_days`; compaction
//! forgets older rows.

mod postgres;
mod rows;
mod sqlite;
mod types;

pub use types::{AuditEvent, AuditFilter, AuditRow};

use super::db::Db;
use super::error::Result;

/// Every action the log records.
pub mod actions {
    pub const LOGIN_OK: &str = "login.ok";
    pub const LOGIN_FAILED: &str = "login.failed";
    pub const LOGOUT: &str = "logout";
    pub const PASSWORD_CHANGED: &str = "password.changed";
    pub const PASSWORD_RESET: &str = "password.reset";
    pub const SESSION_ENDED: &str = "session.ended";
    pub const TOKEN_CREATED: &str = "token.created";
    pub const TOKEN_DELETED: &str = "token.deleted";
    pub const INVITE_CREATED: &str = "invite.created";
    pub const INVITE_USED: &str = "invite.used";
    pub const INVITE_REVOKED: &str = "invite.revoked";
    pub const USER_CREATED: &str = "user.created";
    pub const USER_RENAMED: &str = "user.renamed";
    pub const USER_DEACTIVATED: &str = "user.deactivated";
    pub const USER_REACTIVATED: &str = "user.reactivated";
    pub const USER_DELETED: &str = "user.deleted";
    pub const ADMIN_GRANTED: &str = "admin.granted";
    pub const ADMIN_REVOKED: &str = "admin.revoked";
    pub const SHARE_ADDED: &str = "share.added";
    pub const SHARE_REMOVED: &str = "share.removed";
    pub const DOCUMENT_TRASHED: &str = "document.trashed";
    pub const DOCUMENT_PURGED: &str = "document.purged";
    pub const WEBHOOK_CREATED: &str = "webhook.created";
    pub const WEBHOOK_RESUMED: &str = "webhook.resumed";
    pub const WEBHOOK_DELETED: &str = "webhook.deleted";
}

/// Records `event` at `at` in the caller's transaction.
pub fn record(db: &mut Db, at: i64, event: &AuditEvent) -> Result<()> {
    let detail = if event.detail.is_null() {
        "{}".to_string()
    } else {
        event.detail.to_string()
    };
    rows::insert_row(db, at, event, &detail)
}

/// Rows matching `filter`, newest first (`limit` bounded to 1..=1000).
pub fn list(db: &mut Db, filter: &AuditFilter) -> Result<Vec<AuditRow>> {
    let mut f = filter.clone();
    f.limit = f.limit.clamp(1, 1000);
    rows::list_rows(db, &f)
}

/// Forgets rows recorded before `at`.
pub fn forget_before(db: &mut Db, at: i64) -> Result<u64> {
    rows::delete_before(db, at)
}
