//! A client ID belongs to the user who first used it. Sessions, presence and leases are
//! keyed by client ID, so another user naming it — to release someone's lease with `/leave`,
//! or to write under someone's lease — is refused with 403 before anything reaches the
//! document. The database keeps the owners (`storage::clients`); this remembers the ones
//! seen, so a known client costs no read (the map is bounded: when full it starts empty).

use std::collections::HashMap;
use std::sync::Mutex;

use docsync_actors::collab::validate::ClientId;
use docsync_actors::storage::clients;

use super::error::ApiError;
use super::state::AppState;

const CAPACITY: usize = 100_000;

#[derive(Default)]
pub struct ClientOwners {
    known: Mutex<HashMap<String, String>>,
}

impl ClientOwners {
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
}

/// Ok when `client` is `user_id`'s (claiming it on first use); 403 when it is another's.
pub async fn claim(state: &AppState, user_id: &str, client: &ClientId) -> Result<(), ApiError> {
    let id = client.as_str();
    let owner = match state.client_owners.get(id) {
        Some(owner) => owner,
        None => {
            let c = id.to_string();
            let found = state
                .storage
                .read(move |conn| clients::owner(conn, &c))
                .await?;
            let owner = match found {
                Some(owner) => owner,
                None => {
                    let (c, u, now) = (id.to_string(), user_id.to_string(), state.clock.now_ms());
                    state
                        .storage
                        .write(move |conn| clients::claim(conn, &c, &u, now))
                        .await?
                }
            };
            state.client_owners.put(id, &owner);
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
    state: &AppState,
    user_id: &str,
    client: Option<&ClientId>,
) -> Result<(), ApiError> {
    match client {
        Some(c) => claim(state, user_id, c).await,
        None => Ok(()),
    }
}
