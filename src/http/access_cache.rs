//! Who a secret is and what they may do with a document, remembered between requests, so a
//! reader's pull costs no trip to the blocking read pool (the pull that follows a wake-up is
//! the hot path when a hundred people watch one document).
//!
//! Correctness rests on the access epoch (`storage::access_epoch`): every decision is tagged
//! with the epoch read *before* the database read it came from, and is used only while the
//! epoch has not moved. Any change to users, tokens, login sessions, teams, folders, shares,
//! or a document's owner, folder or existence moves it — through this server (seen before
//! that change's answer goes out, so "a removed share takes effect on the next request"
//! holds) or through another process such as the CLI (seen by the server's periodic
//! refresh, within `REFRESH_EVERY`). Login sessions also carry their expiry, checked against
//! the server's clock on every hit.
//!
//! Only granted access is remembered; an unknown secret or a document the user cannot read
//! always goes to the database. The map is bounded: when it is full it is emptied (a cold
//! start costs one read per caller, the same as having no cache).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use docsync_actors::collab::block::Author;
use docsync_actors::collab::validate::ClientId;
use docsync_actors::document::Caller;
use docsync_actors::storage::access_epoch::AccessEpoch;
use docsync_actors::storage::accounts::User;
use docsync_actors::storage::roles::{Reach, Role};

/// How often the server re-reads the epoch for changes made by other processes.
pub const REFRESH_EVERY: Duration = Duration::from_secs(1);

/// Decisions kept at most; beyond this the map starts again empty.
const CAPACITY: usize = 20_000;

/// A caller's access to one document, as the role function decided it.
#[derive(Debug, Clone)]
pub struct Decision {
    pub user: User,
    pub role: Role,
    pub shared: bool,
    /// When the login session behind it ends (unix ms, server clock); `None` for a token.
    pub until: Option<i64>,
    /// All of the document, or (a bullet guest) the subtrees of their shared bullets.
    pub reach: Reach,
}

impl Decision {
    /// The caller a document's actor is asked for, with these rights, through `client`
    /// (`None`: a plain read that opens no session).
    pub fn caller(self, client: Option<ClientId>) -> Caller {
        Caller {
            client,
            author: Author {
                user_id: self.user.id,
                name: self.user.display_name,
            },
            role: self.role,
            shared: self.shared,
            reach: self.reach,
        }
    }
}

struct Entry {
    epoch: u64,
    decision: Decision,
    /// Login sessions end at this time (unix ms); API tokens do not expire.
    expires_at: Option<i64>,
}

pub struct AccessCache {
    epoch: Arc<AccessEpoch>,
    entries: Mutex<HashMap<(String, String), Entry>>,
}

impl AccessCache {
    pub fn new(epoch: Arc<AccessEpoch>) -> AccessCache {
        AccessCache {
            epoch,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// Read this before the database read whose result you will `put`.
    pub fn epoch(&self) -> u64 {
        self.epoch.current()
    }

    /// The remembered decision for `secret` (tagged by kind, see `Credentials::cache_key`)
    /// on `doc`, if nothing it depends on changed since and a session has not ended.
    pub fn get(&self, secret: &str, doc: &str, now_ms: i64) -> Option<Decision> {
        let current = self.epoch.current();
        let entries = self.entries.lock().ok()?;
        let entry = entries.get(&(secret.to_string(), doc.to_string()))?;
        let live = entry.epoch == current && entry.expires_at.is_none_or(|t| now_ms < t);
        live.then(|| entry.decision.clone())
    }

    /// Remembers a decision read from the database after `epoch` was read.
    pub fn put(
        &self,
        secret: &str,
        doc: &str,
        epoch: u64,
        decision: Decision,
        expires_at: Option<i64>,
    ) {
        if epoch != self.epoch.current() {
            return; // Already outdated: something changed while we read.
        }
        let Ok(mut entries) = self.entries.lock() else {
            return;
        };
        if entries.len() >= CAPACITY {
            entries.clear();
        }
        entries.insert(
            (secret.to_string(), doc.to_string()),
            Entry {
                epoch,
                decision,
                expires_at,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decision() -> Decision {
        Decision {
            reach: Reach::Document,
            user: User {
                id: "usr_1".into(),
                name: "alice".into(),
                display_name: "Alice".into(),
                is_admin: false,
            },
            role: Role::Editor,
            shared: true,
            until: None,
        }
    }

    #[test]
    fn a_decision_lives_until_the_epoch_moves_or_the_session_ends() {
        let epoch = Arc::new(AccessEpoch::default());
        let cache = AccessCache::new(epoch.clone());
        let e = cache.epoch();
        cache.put("b:tok", "doc_1", e, decision(), None);
        cache.put("s:sess", "doc_1", e, decision(), Some(1_000));
        assert_eq!(cache.get("b:tok", "doc_1", 0).unwrap().role, Role::Editor);
        assert!(cache.get("b:tok", "doc_2", 0).is_none(), "per document");
        assert!(cache.get("s:sess", "doc_1", 999).is_some());
        assert!(
            cache.get("s:sess", "doc_1", 1_000).is_none(),
            "session ended"
        );
        epoch.observe(e + 1);
        assert!(cache.get("b:tok", "doc_1", 0).is_none(), "a share changed");
    }

    #[test]
    fn a_read_that_raced_a_change_is_not_remembered() {
        let epoch = Arc::new(AccessEpoch::default());
        let cache = AccessCache::new(epoch.clone());
        let before = cache.epoch();
        epoch.observe(before + 1); // a share was removed while the role was being read
        cache.put("b:tok", "doc_1", before, decision(), None);
        assert!(cache.get("b:tok", "doc_1", 0).is_none());
    }
}
