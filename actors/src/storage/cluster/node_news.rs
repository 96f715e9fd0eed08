//! What the nodes tell each other about the cluster's members, as it happens: one node
//! doubts another (a request to it has waited without an answer: every node should try it
//! now, not at its next look), or a node was evicted (requests waiting on it should ask
//! again now). Sent as `NOTIFY docsync_nodes` (`reachability.rs`), heard by every node's
//! watcher (`access_watch.rs`) and kept here for the nodes' tries of each other (`peers.rs`) and the forwards waiting
//! on an owner. Only a wake-up: whoever waits also looks on a timer, because a notification
//! sent while the watcher reconnected is never delivered.

use std::collections::BTreeSet;
use std::sync::Mutex;

use tokio::sync::watch;

/// The PostgreSQL channel of the news.
pub const NODES_CHANNEL: &str = "docsync_nodes";

/// At most this many doubts wait to be taken (a cluster has a handful of nodes).
const MAX_DOUBTED: usize = 1024;

#[derive(Debug)]
pub struct NodeNews {
    /// Incarnations some node doubts, not yet taken by this node's watcher.
    doubted: Mutex<BTreeSet<String>>,
    /// How often news came: what waiters watch.
    heard: watch::Sender<u64>,
}

impl Default for NodeNews {
    fn default() -> Self {
        NodeNews {
            doubted: Mutex::new(BTreeSet::new()),
            heard: watch::Sender::new(0),
        }
    }
}

impl NodeNews {
    /// A notification's payload: an incarnation's ID when it is doubted, empty when a
    /// node was evicted.
    pub fn hear(&self, payload: &str) {
        if !payload.is_empty() {
            let mut doubted = self.doubted.lock().unwrap_or_else(|e| e.into_inner());
            // Bounded for a process that hears but never takes (a tool on the database);
            // a doubt left out is still tried at the next look at the suspicions.
            if doubted.len() < MAX_DOUBTED {
                doubted.insert(payload.to_string());
            }
        }
        self.heard.send_modify(|n| *n += 1);
    }

    /// The incarnations doubted since the last call.
    pub fn take_doubted(&self) -> Vec<String> {
        let mut doubted = self.doubted.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::take(&mut *doubted).into_iter().collect()
    }

    /// Fires (coalesced) whenever news comes.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.heard.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubts_are_taken_once_and_every_notification_wakes() {
        let news = NodeNews::default();
        let mut woken = news.changes();
        woken.borrow_and_update();
        news.hear("inc_b");
        news.hear("inc_a");
        news.hear("inc_b");
        assert!(woken.has_changed().unwrap());
        assert_eq!(news.take_doubted(), vec!["inc_a", "inc_b"]);
        assert!(news.take_doubted().is_empty());
        woken.borrow_and_update();
        news.hear("");
        assert!(woken.has_changed().unwrap(), "an eviction wakes");
        assert!(news.take_doubted().is_empty(), "and doubts nobody");
        for i in 0..MAX_DOUBTED + 10 {
            news.hear(&format!("inc_{i}"));
        }
        assert_eq!(news.take_doubted().len(), MAX_DOUBTED, "bounded");
    }
}
