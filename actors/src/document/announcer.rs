//! What the document has told its wake-up channels, and what it has not told them yet.
//!
//! Two counters move: the durable head (`headSeq` once a write committed) and `leaseSeq`
//! (every lease or presence change). One change is one wake-up (PROTOCOL §4): handlers only
//! record news here, and it is told once — at the end of the message, or, while a sync's
//! write is on its way to the disk, by that write's commit, so the lease and presence news
//! of a sync travel with the head it produced.

use std::collections::HashSet;

/// News to tell: the head moved from `after` to `head` and/or `leaseSeq` is `lease_seq`;
/// `touched`: the blocks whose state or lease changed meanwhile (what decides whether a
/// bullet guest hears of it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct News {
    pub(super) after: i64,
    pub(super) head: i64,
    pub(super) lease_seq: u64,
    pub(super) touched: HashSet<String>,
}

#[derive(Debug, Default)]
pub(super) struct Announcer {
    durable_head: i64,
    lease_seq: u64,
    /// Blocks changed (state or lease) since the news was last told.
    touched: HashSet<String>,
    /// `(headSeq, leaseSeq)` as last told.
    told: (i64, u64),
    /// Syncs queued on the writer: each tells what changed once it committed.
    sync_writes: usize,
}

impl Announcer {
    /// The document was loaded at `head`: that much is durable and needs no telling.
    pub(super) fn loaded(&mut self, head: i64) {
        self.durable_head = head;
        self.told = (head, self.lease_seq);
    }

    pub(super) fn durable_head(&self) -> i64 {
        self.durable_head
    }

    pub(super) fn lease_seq(&self) -> u64 {
        self.lease_seq
    }

    /// `(headSeq, leaseSeq)` as last told (what a stream confirmed late is brought up to).
    pub(super) fn told(&self) -> (i64, u64) {
        self.told
    }

    /// A lease or presence change.
    pub(super) fn presence_changed(&mut self) {
        self.lease_seq += 1;
    }

    /// These blocks changed (their state, or their lease): part of the next news.
    pub(super) fn touched<'a>(&mut self, ids: impl IntoIterator<Item = &'a str>) {
        self.touched.extend(ids.into_iter().map(str::to_string));
    }

    /// Writes up to `head` are on disk.
    pub(super) fn committed(&mut self, head: i64) {
        self.durable_head = self.durable_head.max(head);
    }

    /// A sync's write was queued: its news waits for its commit.
    pub(super) fn sync_write_queued(&mut self) {
        self.sync_writes += 1;
    }

    /// A sync's write was answered (committed or failed).
    pub(super) fn sync_write_answered(&mut self) {
        self.sync_writes -= 1;
    }

    /// The news to tell at the end of a message: none while a sync's write is on its way
    /// (its commit tells everything at once).
    pub(super) fn settle(&mut self) -> Option<News> {
        if self.sync_writes == 0 {
            self.take()
        } else {
            None
        }
    }

    /// The news to tell now, if anything moved since it was last told.
    pub(super) fn take(&mut self) -> Option<News> {
        let now = (self.durable_head, self.lease_seq);
        if now == self.told {
            return None;
        }
        let after = self.told.0;
        self.told = now;
        Some(News {
            after,
            head: now.0,
            lease_seq: now.1,
            touched: std::mem::take(&mut self.touched),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn news_waits_for_the_commit_of_a_sync_and_is_told_once() {
        let mut a = Announcer::default();
        a.loaded(5);
        assert_eq!(a.settle(), None);
        a.sync_write_queued();
        a.presence_changed();
        assert_eq!(a.settle(), None, "the sync's commit tells it");
        a.sync_write_answered();
        a.committed(7);
        let news = a.take().expect("news");
        assert_eq!(
            news,
            News {
                after: 5,
                head: 7,
                lease_seq: 1,
                touched: HashSet::new(),
            }
        );
        assert_eq!(a.take(), None);
        a.committed(6);
        assert_eq!(a.durable_head(), 7, "the durable head never goes back");
    }
}
