//! Single sign-on's rows (same names in `sqlite.rs` and `postgres.rs`).

use super::postgres;
use super::sqlite;
use super::types::Flow;
use crate::storage::db::{row_questions, Db};
use crate::storage::error::Result;

row_questions! {
    pub fn insert_identity(issuer: &str, subject: &str, user_id: &str, email: Option<&str>, now: i64) -> ();
    /// The user a provider's account is, if known.
    pub fn user_of(issuer: &str, subject: &str) -> Option<String>;
    pub fn insert_flow(state_hash: &str, flow: &Flow) -> ();
    /// Takes the flow out (it is used once), whether or not it expired.
    pub fn take_flow(state_hash: &str) -> Option<Flow>;
    pub fn forget_flows_before(now: i64) -> ();
}
