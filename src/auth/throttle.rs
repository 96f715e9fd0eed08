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

    /// Starts an attempt: refused with the seconds to wait if either counter is at its
    /// limit; otherwise the attempt is counted as a failure *now*, in the same lock, so a
    /// hundred concurrent guesses cannot all pass the check before any of them is counted.
    /// A correct password takes its count back (`succeed`).
    pub fn begin(&self, keys: &LoginKeys) -> Result<(), u64> {
        let now = Instant::now();
        let mut map = self.failures.lock().expect("throttle lock");
        if map.len() > 100_000 {
            map.retain(|_, (_, since)| now.duration_since(*since) < self.window);
        }
        let wait = self
            .limits(keys)
            .into_iter()
            .filter_map(|(k, max)| map.get(k).map(|e| (e, max)))
            .filter(|((n, since), max)| *n >= *max && now.duration_since(*since) < self.window)
            .map(|((_, since), _)| (self.window - now.duration_since(*since)).as_secs().max(1))
            .max();
        if let Some(wait) = wait {
            return Err(wait);
        }
        for (k, _) in self.limits(keys) {
            let e = map.entry(k.to_string()).or_insert((0, now));
            if now.duration_since(e.1) >= self.window {
                *e = (0, now);
            }
            e.0 += 1;
        }
        Ok(())
    }

    /// A successful login clears its own name's counter and takes back its count at the
    /// address; the address keeps the other failures, so one valid account cannot be used
    /// to reset the spraying limit.
    pub fn succeed(&self, keys: &LoginKeys) {
        let mut map = self.failures.lock().expect("throttle lock");
        map.remove(&keys.name_at_address);
        if let Some(e) = map.get_mut(&keys.address) {
            e.0 = e.0.saturating_sub(1);
        }
    }

    /// An attempt that was never checked (the password threads were busy): not a failure.
    pub fn cancel(&self, keys: &LoginKeys) {
        let mut map = self.failures.lock().expect("throttle lock");
        for (k, _) in self.limits(keys) {
            if let Some(e) = map.get_mut(k) {
                e.0 = e.0.saturating_sub(1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fail(t: &LoginThrottle, keys: &LoginKeys) {
        t.begin(keys).expect("not yet blocked");
    }

    #[test]
    fn name_and_address_limits() {
        let t = LoginThrottle::new(2, Duration::from_secs(300));
        let alice_here = LoginKeys::new("Alice", "10.0.0.1");
        let alice_there = LoginKeys::new("alice", "10.0.0.2");
        let bob_here = LoginKeys::new("bob", "10.0.0.1");
        fail(&t, &alice_here);
        fail(&t, &alice_here);
        assert!(t.begin(&alice_here).is_err(), "name at address locked");
        assert!(t.begin(&alice_there).is_ok(), "same name elsewhere free");
        t.succeed(&alice_there);
        // The address limit is ADDRESS_FACTOR × max failures over all names.
        for i in 0..(2 * ADDRESS_FACTOR - 2) {
            fail(&t, &LoginKeys::new(&format!("user{i}"), "10.0.0.1"));
        }
        assert!(t.begin(&bob_here).is_err(), "address locked after spraying");
        assert!(t.begin(&alice_there).is_ok());
        // A right password clears its name's counter and takes back only its own count at
        // the address: the address keeps its failures.
        let carol = LoginKeys::new("carol", "10.0.0.3");
        fail(&t, &carol);
        t.begin(&carol).unwrap();
        t.succeed(&carol);
        fail(&t, &carol);
        fail(&t, &carol);
        assert!(
            t.begin(&carol).is_err(),
            "two new failures lock the name again"
        );
        let dave = LoginKeys::new("dave", "10.0.0.3");
        for i in 0..(2 * ADDRESS_FACTOR - 3) {
            fail(&t, &LoginKeys::new(&format!("x{i}"), "10.0.0.3"));
        }
        assert!(
            t.begin(&dave).is_err(),
            "the address counted all three failures"
        );
    }

    #[test]
    fn concurrent_attempts_are_counted_before_they_are_checked() {
        let t = std::sync::Arc::new(LoginThrottle::new(5, Duration::from_secs(300)));
        let keys = std::sync::Arc::new(LoginKeys::new("alice", "10.0.0.9"));
        let gate = std::sync::Arc::new(std::sync::Barrier::new(100));
        let admitted: usize = (0..100)
            .map(|_| {
                let (t, keys, gate) = (t.clone(), keys.clone(), gate.clone());
                std::thread::spawn(move || {
                    gate.wait();
                    t.begin(&keys).is_ok() as usize
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .sum();
        assert_eq!(admitted, 5, "exactly the limit gets checked");
    }
}
