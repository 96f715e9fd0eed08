//! Bounds on wake-up channels: every open SSE stream, waiting long-poll and WebSocket
//! connection holds one slot for its user and one for its client address. Beyond
//! `limits.max_streams_per_user` / `limits.max_streams_per_address` a new one gets `429
//! too_many_streams`. A slot is an RAII guard kept inside the stream, the handler future or
//! the socket's actor, so the slot is free exactly when the channel is gone — whichever way
//! it ends (client closed, access lost, shutdown, error) — and nothing has to remember to
//! give it back.
//!
//! Why both counters: per user stops one account (or a leaked token in a reconnect loop)
//! from piling up streams anywhere; per address stops one host from doing it with many
//! accounts. The address limit is the larger one because a whole office may sit behind one
//! NAT address, each person with several tabs.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::super::error::ApiError;

pub struct StreamSlots {
    max_per_user: usize,
    max_per_address: usize,
    open: Mutex<Open>,
}

#[derive(Default)]
struct Open {
    by_user: HashMap<String, usize>,
    by_address: HashMap<String, usize>,
}

/// One open channel's claim on its user's and its address's allowance; freed when dropped.
pub struct StreamSlot {
    slots: Arc<StreamSlots>,
    user: String,
    address: String,
}

impl StreamSlots {
    pub fn new(max_per_user: usize, max_per_address: usize) -> StreamSlots {
        StreamSlots {
            max_per_user,
            max_per_address,
            open: Mutex::new(Open::default()),
        }
    }

    /// Takes a slot for `user` at `address`, or says which limit is reached (nothing taken).
    pub fn take(self: &Arc<Self>, user: &str, address: &str) -> Result<StreamSlot, ApiError> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let by_user = open.by_user.get(user).copied().unwrap_or(0);
        if by_user >= self.max_per_user {
            return Err(ApiError::TooManyStreams(format!(
                "this user already has {by_user} open streams (limits.max_streams_per_user); close some tabs or retry later"
            )));
        }
        let by_address = open.by_address.get(address).copied().unwrap_or(0);
        if by_address >= self.max_per_address {
            return Err(ApiError::TooManyStreams(format!(
                "this address already has {by_address} open streams (limits.max_streams_per_address); retry later"
            )));
        }
        *open.by_user.entry(user.to_string()).or_default() += 1;
        *open.by_address.entry(address.to_string()).or_default() += 1;
        Ok(StreamSlot {
            slots: self.clone(),
            user: user.to_string(),
            address: address.to_string(),
        })
    }

    /// Open slots of `user` and of `address` (for tests and diagnostics).
    pub fn count(&self, user: &str, address: &str) -> (usize, usize) {
        let open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        (
            open.by_user.get(user).copied().unwrap_or(0),
            open.by_address.get(address).copied().unwrap_or(0),
        )
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self.slots.open.lock().unwrap_or_else(|p| p.into_inner());
        let open = &mut *open;
        release(&mut open.by_user, &self.user);
        release(&mut open.by_address, &self.address);
    }
}

/// Counts one down; removes keys at zero so the maps hold only users and addresses with
/// open channels (a reconnect loop over many addresses must not grow them for ever).
fn release(map: &mut HashMap<String, usize>, key: &str) {
    if let Some(n) = map.get_mut(key) {
        *n -= 1;
        if *n == 0 {
            map.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_per_user_and_per_address_and_slots_come_back() {
        let slots = Arc::new(StreamSlots::new(2, 3));
        let a1 = slots.take("u1", "10.0.0.1").unwrap();
        let _a2 = slots.take("u1", "10.0.0.1").unwrap();
        let e = slots.take("u1", "10.0.0.2").err().expect("third for u1");
        assert_eq!(e.code(), "too_many_streams");
        let _b1 = slots.take("u2", "10.0.0.1").unwrap();
        let e = slots
            .take("u3", "10.0.0.1")
            .err()
            .expect("fourth at the address");
        assert!(e.to_string().contains("max_streams_per_address"), "{e}");
        // Refusals took nothing.
        assert_eq!(slots.count("u1", "10.0.0.1"), (2, 3));
        drop(a1);
        assert_eq!(slots.count("u1", "10.0.0.1"), (1, 2));
        let _a3 = slots.take("u1", "10.0.0.2").unwrap();
    }

    #[test]
    fn empty_counters_are_forgotten() {
        let slots = Arc::new(StreamSlots::new(5, 5));
        for i in 0..100 {
            drop(
                slots
                    .take(&format!("u{i}"), &format!("10.0.0.{i}"))
                    .unwrap(),
            );
        }
        let open = slots.open.lock().unwrap();
        assert!(open.by_user.is_empty() && open.by_address.is_empty());
    }
}
