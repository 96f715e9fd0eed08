//! Invitations' rows (same names in `sqlite.rs` and `postgres.rs`); secrets arrive hashed.

use super::postgres;
use super::sqlite;
use super::types::{Invite, InviteUse};
use crate::storage::db::{row_questions, Db};
use crate::storage::error::Result;

row_questions! {
    /// Stores an invitation (its `used_by` is not read).
    pub fn insert_invite(invite: &Invite, token_hash: &str) -> ();
    /// Every invitation, newest first, without `used_by`.
    pub fn list_invites() -> Vec<Invite>;
    /// Every use, oldest first, with its invitation's ID.
    pub fn all_uses() -> Vec<(String, InviteUse)>;
    pub fn invite_by_hash(token_hash: &str) -> Option<Invite>;
    pub fn invite_by_id(invite_id: &str) -> Option<Invite>;
    /// Counts one use if the invitation is still good at `now`; false if not.
    pub fn take_use(invite_id: &str, now: i64) -> bool;
    pub fn record_use(invite_id: &str, used: &InviteUse) -> ();
    /// Revokes it; false when there is no such invitation or it was revoked already.
    pub fn revoke(invite_id: &str, now: i64) -> bool;
}
