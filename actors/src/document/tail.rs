//! The newest log entries of a document, kept in memory so catching-up readers and
//! wake-ups need no database read, and the pages of them already encoded for the current
//! head: when a hundred readers pull the same change, the JSON array is built once and the
//! same bytes go into every reply (and into the wake-up that announced it).
//!
//! Entries may be pushed before they are durable; callers only ever ask for ranges up to
//! the durable head, and an entry at or below the durable head never changes, so an
//! encoded page stays true for as long as it is kept.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use serde_json::value::RawValue;

use crate::storage::log::LogRecord;

/// Pages kept for one head. Readers asking at the same moment mostly ask for the same page
/// (they all had the previous head); a few more cover stragglers.
const PAGES_PER_HEAD: usize = 8;

#[derive(Default)]
pub(super) struct LogTail {
    records: VecDeque<Arc<LogRecord>>,
    /// Encoded pages `(after, upto)` for the durable head `pages_head`.
    pages: HashMap<(i64, i64), Arc<RawValue>>,
    pages_head: i64,
}

impl LogTail {
    /// Appends an entry, keeping at most `cap`.
    pub(super) fn push(&mut self, rec: Arc<LogRecord>, cap: usize) {
        self.records.push_back(rec);
        while self.records.len() > cap {
            self.records.pop_front();
        }
    }

    /// Drops entries at or below the log floor (compaction deleted them).
    pub(super) fn drop_through(&mut self, floor: i64) {
        while self.records.front().is_some_and(|r| r.seq <= floor) {
            self.records.pop_front();
        }
        self.pages.retain(|(after, _), _| *after >= floor);
    }

    /// Forgets everything (an idle document; the entries are on disk).
    pub(super) fn clear(&mut self) {
        *self = LogTail::default();
    }

    /// Whether entries `after < seq <= upto` are all here.
    pub(super) fn covers(&self, after: i64) -> bool {
        self.records.front().is_some_and(|r| r.seq <= after + 1)
    }

    fn range(&self, after: i64, upto: i64) -> impl Iterator<Item = &Arc<LogRecord>> {
        let first = self.records.front().map_or(after + 1, |r| r.seq);
        let start = (after + 1 - first).max(0) as usize;
        let n = (upto - after).max(0) as usize;
        self.records.iter().skip(start).take(n)
    }

    /// Entries `after < seq <= upto` (≤ `head`, the durable head) as one JSON array,
    /// encoded on first request and shared until the head moves. None when not all here.
    pub(super) fn page(&mut self, after: i64, upto: i64, head: i64) -> Option<Arc<RawValue>> {
        if !self.covers(after) {
            return None;
        }
        if head != self.pages_head {
            self.pages.clear();
            self.pages_head = head;
        }
        if let Some(p) = self.pages.get(&(after, upto)) {
            return Some(p.clone());
        }
        let records: Vec<&Arc<LogRecord>> = self.range(after, upto).collect();
        let len: usize = records.iter().map(|r| r.json.get().len() + 1).sum();
        let mut text = String::with_capacity(len + 2);
        text.push('[');
        for (i, r) in records.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            text.push_str(r.json.get());
        }
        text.push(']');
        let raw: Arc<RawValue> = RawValue::from_string(text)
            .expect("log records are JSON")
            .into();
        // Full: the pages kept are the ones asked for first, i.e. the popular ones.
        if self.pages.len() < PAGES_PER_HEAD {
            self.pages.insert((after, upto), raw.clone());
        }
        Some(raw)
    }

    /// Encoded size of entries `after < seq <= upto`, if they are all here.
    pub(super) fn encoded_len(&self, after: i64, upto: i64) -> Option<usize> {
        if !self.covers(after) {
            return None;
        }
        Some(
            self.range(after, upto)
                .map(|r| r.json.get().len() + 1)
                .sum::<usize>()
                + 1,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::collab::op::LogEntry;

    fn rec(seq: i64) -> Arc<LogRecord> {
        Arc::new(LogRecord::from_entry(&LogEntry {
            seq,
            op_id: format!("op_{seq}"),
            kind: "insert".into(),
            client_id: "cl_a".into(),
            user_id: "usr_a".into(),
            at: 0,
            effects: Vec::new(),
        }))
    }

    fn seqs(page: &RawValue) -> Vec<i64> {
        let v: Vec<serde_json::Value> = serde_json::from_str(page.get()).unwrap();
        v.iter().map(|e| e["seq"].as_i64().unwrap()).collect()
    }

    #[test]
    fn a_page_is_encoded_once_per_head_and_shared() {
        let mut t = LogTail::default();
        for s in 1..=5 {
            t.push(rec(s), 100);
        }
        let a = t.page(3, 5, 5).unwrap();
        let b = t.page(3, 5, 5).unwrap();
        assert!(Arc::ptr_eq(&a, &b), "the same bytes for every reader");
        assert_eq!(seqs(&a), [4, 5]);
        assert_eq!(t.encoded_len(3, 5), Some(a.get().len()));
        t.push(rec(6), 100);
        let c = t.page(3, 5, 6).unwrap();
        assert!(!Arc::ptr_eq(&a, &c), "a new head starts a new set of pages");
        assert_eq!(seqs(&c), [4, 5]);
    }

    #[test]
    fn a_range_that_left_the_tail_is_not_served() {
        let mut t = LogTail::default();
        for s in 1..=5 {
            t.push(rec(s), 3);
        }
        assert!(t.page(1, 5, 5).is_none(), "2 fell out");
        assert_eq!(seqs(&t.page(2, 5, 5).unwrap()), [3, 4, 5]);
        t.drop_through(4);
        assert!(t.page(2, 5, 5).is_none());
        assert_eq!(seqs(&t.page(4, 5, 5).unwrap()), [5]);
    }
}
