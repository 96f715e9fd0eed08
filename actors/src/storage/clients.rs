//! Which user a client ID belongs to: the first user to present it owns it.

use super::db::dispatch;
use super::postgres::accounts as pg;
use super::sqlite::clients as lite;

dispatch! {
    pub fn owner(client_id: &str) -> Option<String> => lite::owner, pg::client_owner;
    /// The client's owner after this call: `user_id` when it was unclaimed.
    pub fn claim(client_id: &str, user_id: &str, now: i64) -> String => lite::claim, pg::claim_client;
}
