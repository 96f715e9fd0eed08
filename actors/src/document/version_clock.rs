//! When the document's actor keeps an automatic version (PROTOCOL §8): whenever the document
//! changed since the newest version and that version is at least `every_ms` old. One version
//! write at a time; a failed one is tried again on a later tick.

#[derive(Debug, Default)]
pub(super) struct VersionClock {
    /// `(seq, at)` of the newest version; `None` until loaded, and for a document with none.
    last: Option<(i64, i64)>,
    loaded: bool,
    taking: bool,
}

impl VersionClock {
    /// The newest version as the database had it when the actor loaded.
    pub(super) fn loaded(&mut self, last: Option<(i64, i64)>) {
        self.last = last;
        self.loaded = true;
    }

    /// Whether an automatic version is due for a document at `head` at `now`.
    pub(super) fn due(&self, head: i64, now: i64, every_ms: i64) -> bool {
        if every_ms <= 0 || !self.loaded || self.taking || head == 0 {
            return false;
        }
        match self.last {
            None => true,
            Some((seq, at)) => head > seq && now - at >= every_ms,
        }
    }

    pub(super) fn started(&mut self) {
        self.taking = true;
    }

    /// A version write ended; `taken` is the version's `(seq, at)` when it landed.
    pub(super) fn finished(&mut self, taken: Option<(i64, i64)>) {
        self.taking = false;
        if let Some((seq, at)) = taken {
            if self.last.is_none_or(|(s, _)| seq >= s) {
                self.last = Some((seq, at));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn due_when_changed_and_old_enough_one_at_a_time() {
        let mut c = VersionClock::default();
        assert!(!c.due(5, 0, 60), "not before the newest version is known");
        c.loaded(None);
        assert!(!c.due(0, 0, 60), "an empty new document needs none");
        assert!(c.due(5, 0, 60), "a changed document without any version");
        c.started();
        assert!(!c.due(5, 0, 60), "one write at a time");
        c.finished(Some((5, 1_000)));
        assert!(!c.due(5, 1_000_000, 60), "unchanged since");
        assert!(!c.due(6, 1_059, 60), "changed, but too soon");
        assert!(c.due(6, 1_060, 60));
        assert!(!c.due(6, 1_060, 0), "turned off");
        c.started();
        c.finished(None);
        assert!(c.due(6, 1_060, 60), "a failed write is tried again");
    }
}
