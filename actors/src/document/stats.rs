//! What the operator page shows of one document actor beyond its parts' sizes: how long it
//! has run and idled, how fast its recent syncs were answered, and how its ops turned out.

use std::collections::VecDeque;
use std::time::Instant;

/// Latencies kept for the percentiles and the chart.
const LATENCY_WINDOW: usize = 256;

pub(super) struct ActorStats {
    started_at: i64,
    last_activity: i64,
    /// Latencies (ms) of the most recent syncs with ops: receipt to reply.
    latencies: VecDeque<f64>,
    applied: u64,
    conflicts: u64,
    rejected: u64,
}

impl ActorStats {
    pub(super) fn new(now: i64) -> ActorStats {
        ActorStats {
            started_at: now,
            last_activity: now,
            latencies: VecDeque::new(),
            applied: 0,
            conflicts: 0,
            rejected: 0,
        }
    }

    /// Someone asked something of the document at `now` (the idle clocks restart).
    pub(super) fn active(&mut self, now: i64) {
        self.last_activity = now;
    }

    pub(super) fn idle_ms(&self, now: i64) -> i64 {
        now - self.last_activity
    }

    pub(super) fn uptime_ms(&self, now: i64) -> i64 {
        now - self.started_at
    }

    /// The outcomes of ops whose write committed (`OpTally::outcomes`): counted once, on
    /// disk, like the metrics.
    pub(super) fn count(&mut self, (applied, conflicts, rejected): (u64, u64, u64)) {
        self.applied += applied;
        self.conflicts += conflicts;
        self.rejected += rejected;
    }

    /// `(applied, conflicts, rejected)` so far.
    pub(super) fn outcomes(&self) -> (u64, u64, u64) {
        (self.applied, self.conflicts, self.rejected)
    }

    /// A sync received at `since` was answered now.
    pub(super) fn answered(&mut self, since: Instant) {
        if self.latencies.len() == LATENCY_WINDOW {
            self.latencies.pop_front();
        }
        self.latencies
            .push_back(since.elapsed().as_secs_f64() * 1000.0);
    }

    pub(super) fn percentile(&self, p: f64) -> f64 {
        if self.latencies.is_empty() {
            return 0.0;
        }
        let mut v: Vec<f64> = self.latencies.iter().copied().collect();
        v.sort_by(|a, b| a.total_cmp(b));
        v[((v.len() as f64 - 1.0) * p).round() as usize]
    }

    /// The latest `n` latencies, oldest first.
    pub(super) fn recent(&self, n: usize) -> Vec<f64> {
        let skip = self.latencies.len().saturating_sub(n);
        self.latencies.iter().skip(skip).copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_recent_latencies_come_from_the_window() {
        let mut s = ActorStats::new(0);
        assert_eq!(s.percentile(0.5), 0.0);
        for _ in 0..300 {
            s.answered(Instant::now());
        }
        assert_eq!(s.recent(60).len(), 60);
        assert_eq!(s.recent(1_000).len(), LATENCY_WINDOW);
        s.count((1, 1, 0));
        s.count((0, 0, 2));
        assert_eq!(s.outcomes(), (1, 1, 2));
        s.active(40);
        assert_eq!((s.idle_ms(100), s.uptime_ms(100)), (60, 100));
    }
}
