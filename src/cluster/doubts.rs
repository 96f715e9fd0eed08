//! Which owners this node has lately told the others it doubts (`Cluster::doubt`): a stalled
//! owner keeps many requests waiting, and one notification per probe's patience is enough
//! for every node to try it.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Default)]
pub struct Doubts {
    last: Mutex<HashMap<String, Instant>>,
}

impl Doubts {
    /// Whether `inc` was not doubted within `within` before `now` (and is doubted as of
    /// `now` if so).
    pub fn first_in(&self, inc: &str, now: Instant, within: Duration) -> bool {
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        // Forget what is old, so the map holds only owners doubted lately.
        last.retain(|_, at| now.duration_since(*at) < within);
        if last.contains_key(inc) {
            return false;
        }
        last.insert(inc.to_string(), now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_is_doubted_once_within_the_patience_and_again_after_it() {
        let doubts = Doubts::default();
        let (t0, within) = (Instant::now(), Duration::from_secs(1));
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        assert!(doubts.first_in("inc_a", at(0), within));
        assert!(!doubts.first_in("inc_a", at(999), within));
        assert!(
            doubts.first_in("inc_b", at(999), within),
            "each owner on its own"
        );
        assert!(doubts.first_in("inc_a", at(1000), within));
        assert!(!doubts.first_in("inc_b", at(1500), within));
    }
}
