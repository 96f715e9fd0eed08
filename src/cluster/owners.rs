//! Where a document's requests go (`Route`), and where each document's owner was last
//! found, so that a forwarding node does not ask PostgreSQL on every request it forwards. An
//! entry may be stale — the document moved, its node left — and that is safe: the fence, not
//! the route, keeps the log whole. A stale entry shows as a forward that gets no answer or a
//! `503` from the node that no longer owns the document; either makes the forwarding node
//! forget the entry and ask the database again (`routing.rs`). Entries also age out, and the
//! map is bounded.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Where a document's request is served.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    Here,
    /// At the live owner's internal address.
    Owner {
        node_id: String,
        /// The owner's incarnation (what a suspicion names).
        inc: String,
        addr: String,
    },
}

/// How long an owner found in the database is believed without asking again.
const BELIEVED_FOR: Duration = Duration::from_secs(30);
/// At most this many documents remembered (then the oldest half goes).
const MAX_REMEMBERED: usize = 10_000;

#[derive(Default)]
pub struct KnownOwners {
    known: Mutex<HashMap<String, (Route, Instant)>>,
}

impl KnownOwners {
    /// The owner last found for `doc`, if recent.
    pub fn get(&self, doc: &str) -> Option<Route> {
        let known = self.known.lock().expect("owners lock");
        known
            .get(doc)
            .filter(|(_, at)| at.elapsed() < BELIEVED_FOR)
            .map(|(route, _)| route.clone())
    }

    /// Remembers where `doc`'s requests went after asking the database: an owner is
    /// remembered, "here" (nobody live owns it) is not.
    pub fn found(&self, doc: &str, route: &Route) {
        let mut known = self.known.lock().expect("owners lock");
        match route {
            Route::Owner { .. } => {
                if known.len() >= MAX_REMEMBERED && !known.contains_key(doc) {
                    let mut ages: Vec<Instant> = known.values().map(|(_, at)| *at).collect();
                    ages.sort_unstable();
                    let cut = ages[ages.len() / 2];
                    known.retain(|_, (_, at)| *at > cut);
                }
                known.insert(doc.to_string(), (route.clone(), Instant::now()));
            }
            Route::Here => {
                known.remove(doc);
            }
        }
    }

    /// The owner of `doc` did not answer, or answered that it is not the owner.
    pub fn forget(&self, doc: &str) {
        self.known.lock().expect("owners lock").remove(doc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owner(n: &str) -> Route {
        Route::Owner {
            node_id: n.into(),
            inc: format!("inc_{n}"),
            addr: format!("{n}:1"),
        }
    }

    #[test]
    fn owners_are_remembered_forgotten_and_bounded() {
        let k = KnownOwners::default();
        assert_eq!(k.get("doc_1"), None);
        k.found("doc_1", &owner("a"));
        assert_eq!(k.get("doc_1"), Some(owner("a")));
        k.found("doc_1", &Route::Here);
        assert_eq!(
            k.get("doc_1"),
            None,
            "nobody owns it: asked again next time"
        );
        k.found("doc_1", &owner("b"));
        k.forget("doc_1");
        assert_eq!(k.get("doc_1"), None);
        for i in 0..MAX_REMEMBERED + 10 {
            k.found(&format!("doc_{i}"), &owner("a"));
        }
        let n = k.known.lock().unwrap().len();
        assert!(n <= MAX_REMEMBERED, "{n} remembered");
        assert_eq!(
            k.get(&format!("doc_{}", MAX_REMEMBERED + 9)),
            Some(owner("a")),
            "the newest stays"
        );
    }
}
