//! Login throttling. Failures are counted per (user name, client address) and per client
//! address: after `max` failures for one name from one address, or `max × ADDRESS_FACTOR`
//! failures of any names from one address, within the window, further attempts from that
//! address get 429 until the window passes. A guesser elsewhere can therefore never lock the
//! real user out (other addresses are untouched), and one address cannot try many names.
//! In memory: a restart forgives.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// An address may fail this many times `max` (for all names together) before it waits;
/// generous enough for a shared office NAT, tight enough to stop spraying many names.
pub const ADDRESS_FACTOR: u32 = 4;

/// The two counters one login attempt touches.
pub struct LoginKeys {
    name_at_address: String,
    address: String,
}

impl LoginKeys {
    pub fn new(username: &str, address: &str) -> LoginKeys {
        LoginKeys {
            name_at_address: format!("user:{}@{address}", username.to_lowercase()),
            address: format!("addr:{address}"),
        }
    }
}

pub struct LoginThrottle {
    max: u32,
    window: Duration,
    failures: Mutex<HashMap<String, (u32, Instant)>>,
}

impl LoginThrottle {
    pub fn new(max: u32, window: Duration) -> LoginThrottle {
        LoginThrottle {
            max,
            window,
            failures: Mutex::new(HashMap::new()),
        }
    }

    fn limits<'a>(&self, keys: &'a LoginKeys) -> [(&'a str, u32); 2] {
        [
            (&keys.name_at_address, self.max),
            (&keys.address, self.max.saturating_mul(ADDRESS_FACTOR)),
        ]
    }

    /// Seconds to wait if either counter of this attempt is at its limit.
    pub fn blocked(&self, keys: &LoginKeys) -> Option<u64> {
        let now = Instant::now();
        let map = self.failures.lock().expect("throttle lock");
        self.limits(keys)
            .into_iter()
            .filter_map(|(k, max)| map.get(k).map(|e| (e, max)))
            .filter(|((n, since), max)| *n >= *max && now.duration_since(*since) < self.window)
            .map(|((_, since), _)| (self.window - now.duration_since(*since)).as_secs().max(1))
            .max()
    }

    pub fn fail(&self, keys: &LoginKeys) {
        let now = Instant::now();
        let mut map = self.failures.lock().expect("throttle lock");
        if map.len() > 100_000 {
            map.retain(|_, (_, since)| now.duration_since(*since) < self.window);
        }
        for (k, _) in self.limits(keys) {
            let e = map.entry(k.to_string()).or_insert((0, now));
            if now.duration_since(e.1) >= self.window {
                *e = (0, now);
            }
            e.0 += 1;
        }
    }

    /// A successful login clears its own name's counter only: the address keeps its count,
    /// so one valid account cannot be used to reset the spraying limit.
    pub fn succeed(&self, keys: &LoginKeys) {
        let mut map = self.failures.lock().expect("throttle lock");
        map.remove(&keys.name_at_address);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_and_address_limits() {
        let t = LoginThrottle::new(2, Duration::from_secs(300));
        let alice_here = LoginKeys::new("Alice", "10.0.0.1");
        let alice_there = LoginKeys::new("alice", "10.0.0.2");
        let bob_here = LoginKeys::new("bob", "10.0.0.1");
        t.fail(&alice_here);
        assert!(t.blocked(&alice_here).is_none());
        t.fail(&alice_here);
        assert!(t.blocked(&alice_here).is_some(), "name at address locked");
        assert!(
            t.blocked(&alice_there).is_none(),
            "same name elsewhere free"
        );
        assert!(t.blocked(&bob_here).is_none(), "other name here free");
        // The address limit is ADDRESS_FACTOR × max failures over all names.
        for i in 0..(2 * ADDRESS_FACTOR - 2) {
            t.fail(&LoginKeys::new(&format!("user{i}"), "10.0.0.1"));
        }
        assert!(
            t.blocked(&bob_here).is_some(),
            "address locked after spraying"
        );
        assert!(t.blocked(&alice_there).is_none());
        // Success clears the name counter, not the address counter.
        t.succeed(&alice_here);
        assert!(t.blocked(&alice_here).is_some(), "address still locked");
    }
}
