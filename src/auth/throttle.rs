//! Login throttling: after `max` failures for a user name or a client address within the
//! window, further attempts get 429 until the window passes. In memory: a restart forgives.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

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

    /// Seconds to wait if any of `keys` is locked out.
    pub fn blocked(&self, keys: &[String]) -> Option<u64> {
        let now = Instant::now();
        let map = self.failures.lock().expect("throttle lock");
        keys.iter()
            .filter_map(|k| map.get(k))
            .filter(|(n, since)| *n >= self.max && now.duration_since(*since) < self.window)
            .map(|(_, since)| (self.window - now.duration_since(*since)).as_secs().max(1))
            .max()
    }

    pub fn fail(&self, keys: &[String]) {
        let now = Instant::now();
        let mut map = self.failures.lock().expect("throttle lock");
        if map.len() > 100_000 {
            map.retain(|_, (_, since)| now.duration_since(*since) < self.window);
        }
        for k in keys {
            let e = map.entry(k.clone()).or_insert((0, now));
            if now.duration_since(e.1) >= self.window {
                *e = (0, now);
            }
            e.0 += 1;
        }
    }

    pub fn succeed(&self, keys: &[String]) {
        let mut map = self.failures.lock().expect("throttle lock");
        for k in keys {
            map.remove(k);
        }
    }
}
