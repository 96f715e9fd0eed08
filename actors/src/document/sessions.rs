//! Who has the document open: one session per `clientId` (a browser tab), seen on every
//! snapshot and sync, gone after `ttl` unseen or on `leave`. Presence changes bump
//! `leaseSeq` like lease changes do, so open editors hear about them. `people()` is what an
//! editor shows: one entry per person, however many tabs they have open.

use std::collections::HashMap;

use serde::Serialize;

use crate::collab::validate::ClientId;

/// One person with the document open, as the editors show them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Person {
    pub user_id: String,
    pub name: String,
    /// How many of their tabs or devices have it open.
    pub sessions: usize,
}

#[derive(Debug, Clone)]
pub struct Session {
    pub user_id: String,
    /// The display name the session last came with (a stream that opened it may not know it).
    pub name: String,
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

    /// Someone asked through `client` at `now` (a sync, a snapshot, an open stream or a
    /// long-poll); true when that is a presence change (a new session, or a name it lacked).
    /// No client (a plain read, server-side seeding) opens no session. `name` may be empty
    /// when the caller does not know it (a stream).
    pub fn see(&mut self, client: Option<&ClientId>, user_id: &str, name: &str, now: i64) -> bool {
        client.is_some_and(|c| self.touch(c.as_str(), user_id, name, now))
    }

    /// Records that `client_id` is here; true when it is a new session or now has a name it
    /// lacked (a presence change).
    fn touch(&mut self, client_id: &str, user_id: &str, name: &str, now: i64) -> bool {
        match self.by_client.get_mut(client_id) {
            Some(s) => {
                s.last_seen = now;
                if s.name.is_empty() && !name.is_empty() {
                    s.name = name.to_string();
                    return true;
                }
                false
            }
            None => {
                self.by_client.insert(
                    client_id.to_string(),
                    Session {
                        user_id: user_id.to_string(),
                        name: name.to_string(),
                        last_seen: now,
                    },
                );
                true
            }
        }
    }

    /// The people here, one entry each (sorted by name, then id), with their session count.
    pub fn people(&self) -> Vec<Person> {
        let mut by_user: HashMap<&str, Person> = HashMap::new();
        for s in self.by_client.values() {
            let p = by_user.entry(&s.user_id).or_insert_with(|| Person {
                user_id: s.user_id.clone(),
                name: String::new(),
                sessions: 0,
            });
            p.sessions += 1;
            if p.name.is_empty() {
                p.name = s.name.clone();
            }
        }
        let mut v: Vec<Person> = by_user.into_values().collect();
        v.sort_by(|a, b| a.name.cmp(&b.name).then_with(|| a.user_id.cmp(&b.user_id)));
        v
    }

    pub fn remove(&mut self, client: &ClientId) -> bool {
        self.by_client.remove(client.as_str()).is_some()
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

    /// Whether the tab `client_id` has a session here.
    pub fn has(&self, client_id: &str) -> bool {
        self.by_client.contains_key(client_id)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn people_are_counted_once_with_their_tabs_and_named_when_known() {
        let mut s = Sessions::new(30_000);
        // a stream opened the first tab: no name yet
        assert!(s.touch("cl_1", "usr_a", "", 0));
        assert!(s.touch("cl_2", "usr_a", "Ada", 0));
        assert!(s.touch("cl_3", "usr_b", "Bo", 0));
        assert!(!s.touch("cl_3", "usr_b", "Bo", 1));
        assert_eq!(
            s.people(),
            vec![
                Person {
                    user_id: "usr_a".into(),
                    name: "Ada".into(),
                    sessions: 2
                },
                Person {
                    user_id: "usr_b".into(),
                    name: "Bo".into(),
                    sessions: 1
                },
            ]
        );
        // a name learned later is a presence change
        assert!(s.touch("cl_1", "usr_a", "Ada", 2));
        assert!(!s.touch("cl_1", "usr_a", "Ada", 3));
    }
}
