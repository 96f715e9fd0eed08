//! Who has the document open: one session per `clientId` (a browser tab), seen on every
//! snapshot and sync, gone after `ttl` unseen or on `leave`. Presence changes bump
//! `leaseSeq` like lease changes do, so open editors hear about them.

use std::collections::HashMap;

#[derive(Debug, Clone)]
pub struct Session {
    pub user_id: String,
    pub last_seen: i64,
}

#[derive(Debug, Default)]
pub struct Sessions {
    by_client: HashMap<String, Session>,
    ttl_ms: i64,
}

impl Sessions {
    pub fn new(ttl_ms: i64) -> Sessions {
        Sessions {
            by_client: HashMap::new(),
            ttl_ms,
        }
    }

    /// Records that `client_id` is here; true when it is a new session (a presence change).
    pub fn touch(&mut self, client_id: &str, user_id: &str, now: i64) -> bool {
        match self.by_client.get_mut(client_id) {
            Some(s) => {
                s.last_seen = now;
                false
            }
            None => {
                self.by_client.insert(
                    client_id.to_string(),
                    Session {
                        user_id: user_id.to_string(),
                        last_seen: now,
                    },
                );
                true
            }
        }
    }

    pub fn remove(&mut self, client_id: &str) -> bool {
        self.by_client.remove(client_id).is_some()
    }

    /// Removes sessions unseen for longer than the TTL and returns their client IDs.
    pub fn expire(&mut self, now: i64) -> Vec<String> {
        let ttl = self.ttl_ms;
        let gone: Vec<String> = self
            .by_client
            .iter()
            .filter(|(_, s)| now - s.last_seen > ttl)
            .map(|(c, _)| c.clone())
            .collect();
        for c in &gone {
            self.by_client.remove(c);
        }
        gone
    }

    /// Ends every session of a user (they lost access).
    pub fn remove_user(&mut self, user_id: &str) -> bool {
        let before = self.by_client.len();
        self.by_client.retain(|_, s| s.user_id != user_id);
        self.by_client.len() != before
    }

    /// Users with at least one session.
    pub fn users(&self) -> Vec<String> {
        let mut v: Vec<String> = self.by_client.values().map(|s| s.user_id.clone()).collect();
        v.sort();
        v.dedup();
        v
    }

    pub fn len(&self) -> usize {
        self.by_client.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_client.is_empty()
    }
}
