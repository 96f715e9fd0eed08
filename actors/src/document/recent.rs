//! The results of the document's most recent ops, kept in memory so a retried op gets its
//! first answer without a database read (op IDs make every retry harmless, PROTOCOL §3).
//!
//! Older results are only in SQLite, where the HTTP layer's pre-check finds them before the
//! request reaches the actor. A result may be dropped from memory only once it is on disk,
//! and a pre-check begun before the drop may have missed it: such a pre-check is no longer
//! trusted (`trusts`), and the caller redoes it.
//!
//! Most ops are new, and for those no read is needed at all: the memory also keeps a filter
//! of every op ID the document has ever stored a result for (`surely_new`), loaded once
//! after the actor started and kept up to date with every result it remembers. An op whose
//! ID is not in it cannot be a retry; only the others (a hash may collide: then a needless
//! read, never a wrong answer) need the pre-check.

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::{DefaultHasher, Hasher};
use std::time::Instant;

use crate::collab::op::OpResult;

pub(super) struct RecentResults {
    /// Result and the number of the write that carries it.
    by_op: HashMap<String, (OpResult, u64)>,
    order: VecDeque<String>,
    /// Writes queued so far, and the highest number known to be on disk.
    queued: u64,
    durable: u64,
    /// Pre-checks read before this moment may have missed results dropped from memory.
    trust_after: Instant,
    cap: usize,
    /// The filter; `None` until loaded (every op then needs the pre-check).
    ever: Option<OpIdFilter>,
    /// Hashes remembered while the filter's read runs: it may not see them.
    loading: Option<Vec<u64>>,
}

/// Hashes of op IDs: those read at load, sorted (8 bytes each), and those added since.
struct OpIdFilter {
    loaded: Vec<u64>,
    added: HashSet<u64>,
}

/// The filter's hash of an op ID (SipHash with fixed keys: the same within the process).
pub(super) fn op_hash(op_id: &str) -> u64 {
    let mut h = DefaultHasher::new();
    h.write(op_id.as_bytes());
    h.finish()
}

impl RecentResults {
    /// Keeps at most about `cap` results. A new actor trusts no pre-check older than itself:
    /// an earlier actor of the document may have written results it never read.
    pub(super) fn new(cap: usize) -> RecentResults {
        RecentResults {
            by_op: HashMap::new(),
            order: VecDeque::new(),
            queued: 0,
            durable: 0,
            trust_after: Instant::now(),
            cap,
            ever: None,
            loading: None,
        }
    }

    /// The filter's read is about to start.
    pub(super) fn filter_loading(&mut self) {
        self.loading = Some(Vec::new());
    }

    /// The filter's read returned these hashes (every stored result at the time it ran).
    pub(super) fn filter_loaded(&mut self, mut hashes: Vec<u64>) {
        hashes.extend(self.loading.take().unwrap_or_default());
        hashes.extend(self.by_op.keys().map(|id| op_hash(id)));
        hashes.sort_unstable();
        hashes.dedup();
        self.ever = Some(OpIdFilter {
            loaded: hashes,
            added: HashSet::new(),
        });
    }

    /// Whether `op_id` has certainly never been answered for this document (so no stored
    /// result can exist for it); false when unsure.
    pub(super) fn surely_new(&self, op_id: &str) -> bool {
        let Some(f) = &self.ever else {
            return false;
        };
        let h = op_hash(op_id);
        f.loaded.binary_search(&h).is_err() && !f.added.contains(&h)
    }

    pub(super) fn get(&self, op_id: &str) -> Option<&OpResult> {
        self.by_op.get(op_id).map(|(r, _)| r)
    }

    /// Whether a pre-check read at `read_at` saw every result this memory no longer has.
    pub(super) fn trusts(&self, read_at: Instant) -> bool {
        read_at >= self.trust_after
    }

    /// Remembers the results of the write about to be queued (`queue_write`).
    pub(super) fn remember(&mut self, results: &[OpResult]) {
        for r in results {
            let h = op_hash(&r.op_id);
            match (&mut self.ever, &mut self.loading) {
                (Some(f), _) => {
                    f.added.insert(h);
                }
                (None, Some(pending)) => pending.push(h),
                (None, None) => {}
            }
            self.by_op
                .insert(r.op_id.clone(), (r.clone(), self.queued + 1));
            self.order.push_back(r.op_id.clone());
        }
    }

    /// A write was queued; returns its number for `committed`.
    pub(super) fn queue_write(&mut self) -> u64 {
        self.queued += 1;
        self.queued
    }

    /// Write number `write` is on disk; memory is trimmed to its bound.
    pub(super) fn committed(&mut self, write: u64) {
        self.durable = self.durable.max(write);
        self.trim();
    }

    /// Keeps the map bounded: drops the oldest results already on disk, down to half.
    fn trim(&mut self) {
        if self.by_op.len() <= self.cap {
            return;
        }
        let mut dropped = false;
        while self.by_op.len() > self.cap / 2 {
            let Some(front) = self.order.front() else {
                break;
            };
            if self
                .by_op
                .get(front)
                .is_some_and(|(_, w)| *w > self.durable)
            {
                break;
            }
            let id = self.order.pop_front().expect("front exists");
            self.by_op.remove(&id);
            dropped = true;
        }
        if dropped {
            self.trust_after = Instant::now();
        }
    }

    /// Forgets everything (an idle document; every result is on disk by now).
    pub(super) fn forget(&mut self) {
        if !self.by_op.is_empty() {
            self.by_op = HashMap::new();
            self.order = VecDeque::new();
            self.trust_after = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn result(id: &str) -> OpResult {
        OpResult::applied(id, None)
    }

    #[test]
    fn only_results_on_disk_are_dropped_and_then_older_prechecks_are_distrusted() {
        let mut r = RecentResults::new(2);
        let before = Instant::now();
        r.remember(&[result("op_1"), result("op_2"), result("op_3")]);
        let w = r.queue_write();
        r.committed(w - 1);
        assert!(r.get("op_1").is_some(), "not on disk yet: kept");
        assert!(r.trusts(before));
        r.committed(w);
        assert!(
            r.get("op_1").is_none(),
            "on disk and over the bound: dropped"
        );
        assert!(r.get("op_3").is_some());
        assert!(
            !r.trusts(before),
            "a pre-check older than the drop may miss op_1"
        );
        assert!(r.trusts(Instant::now()));
    }

    #[test]
    fn only_op_ids_never_answered_are_surely_new() {
        let mut r = RecentResults::new(100);
        assert!(!r.surely_new("op_x"), "unsure until the filter is loaded");
        r.filter_loading();
        r.remember(&[result("op_during_load")]);
        r.filter_loaded(vec![op_hash("op_stored")]);
        assert!(!r.surely_new("op_stored"));
        assert!(!r.surely_new("op_during_load"));
        assert!(r.surely_new("op_x"));
        r.remember(&[result("op_x")]);
        assert!(!r.surely_new("op_x"), "answered now");
        // Forgetting the results keeps the filter: a retry still gets its pre-check.
        r.forget();
        assert!(!r.surely_new("op_x"));
    }
}
