//! The results of the document's most recent ops, kept in memory so a retried op gets its
//! first answer without a database read (op IDs make every retry harmless, PROTOCOL §3).
//!
//! Older results are only in SQLite, where the HTTP layer's pre-check finds them before the
//! request reaches the actor. A result may be dropped from memory only once it is on disk,
//! and a pre-check begun before the drop may have missed it: such a pre-check is no longer
//! trusted (`trusts`), and the caller redoes it.

use std::collections::{HashMap, VecDeque};
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
        }
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
}
