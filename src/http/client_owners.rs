//! A client ID belongs to the user who first used it. Sessions, presence and leases are
//! keyed by client ID, so another user naming it — to release someone's lease with `/leave`,
//! or to write under someone's lease — is refused with 403 before anything reaches the
//! document. The database keeps the owners (`storage::clients`); this remembers the ones
//! seen, so a known client costs no read (the map is bounded: when full it starts empty).

use std::collections::HashMap;
use std::sync::Mutex;

use docsync_actors::clock::SharedClock;
use docsync_actors::collab::validate::ClientId;
use docsync_actors::storage::{clients, Storage};

use super::error::ApiError;

const CAPACITY: usize = 100_000;

pub struct ClientOwners {
    storage: Storage,
    clock: SharedClock,
    known: Mutex<HashMap<String, String>>,
}

impl ClientOwners {
    pub fn new(storage: Storage, clock: SharedClock) -> ClientOwners {
        ClientOwners {
            storage,
            clock,
            known: Mutex::new(HashMap::new()),
        }
    }

    fn get(&self, client: &str) -> Option<String> {
        self.known.lock().ok()?.get(client).cloned()
    }

    fn put(&self, client: &str, user: &str) {
        if let Ok(mut known) = self.known.lock() {
            if known.len() >= CAPACITY {
                known.clear();
            }
            known.insert(client.to_string(), user.to_string());
        }
    }

    /// Ok when `client` is `user_id`'s (claiming it on first use); 403 when it is another's.
    pub async fn claim(&self, user_id: &str, client: &ClientId) -> Result<(), ApiError> {
        let id = client.as_str();
        let owner = match self.get(id) {
            Some(owner) => owner,
            None => {
                let c = id.to_string();
                let found = self
                    .storage
                    .read(move |conn| clients::owner(conn, &c))
                    .await?;
                let owner = match found {
                    Some(owner) => owner,
                    None => {
                        let (c, u, now) =
                            (id.to_string(), user_id.to_string(), self.clock.now_ms());
                        self.storage
                            .write(move |conn| clients::claim(conn, &c, &u, now))
                            .await?
                    }
                };
                self.put(id, &owner);
                owner
            }
        };
        if owner == user_id {
            Ok(())
        } else {
            Err(ApiError::Forbidden(
                "clientId: in use by another user; pick a new one".into(),
            ))
        }
    }

    /// `claim` for an optional client ID.
    pub async fn claim_optional(
        &self,
        user_id: &str,
        client: Option<&ClientId>,
    ) -> Result<(), ApiError> {
        match client {
            Some(c) => self.claim(user_id, c).await,
            None => Ok(()),
        }
    }
}
