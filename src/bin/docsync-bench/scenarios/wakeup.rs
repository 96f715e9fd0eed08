//! `wakeup`: `/sync` acknowledged → other subscribers hear of it (`websocket`, `sse`,
//! `longpoll`; 2 and 100 subscribers on one fresh document).

use std::time::Duration;

use anyhow::Result;
use tokio::sync::watch;

use crate::channel::Channel;
use crate::client::{subscriber_count, wait_for_subscribers, Api};
use crate::editor::{Editor, Timed};
use crate::listeners::{join_listener, open_listener, Wake};
use crate::process::rss_kib;
use crate::setup::in_parallel;
use crate::stats::{micros, percentiles_named, signed_percentiles, Line, Stats};

use super::Scenario;

const WAKE_WRITES: usize = 200;
const WAKE_PAUSE: Duration = Duration::from_millis(20);
/// Time for the last events to arrive after the last write.
const WAKE_DRAIN: Duration = Duration::from_millis(500);

/// Wake-up latencies over all subscribers of one configuration: from the writer's reply to
/// the event (signed: events often come first) and from the writer's request to the event.
#[derive(Default)]
struct WakeStats {
    after_ack_us: Vec<i64>,
    after_send_us: Vec<u64>,
    before_ack: u64,
    missed: u64,
    not_waiting: u64,
    errors: u64,
}

impl WakeStats {
    /// Matches every acknowledged write with the subscriber's first wake-up at or past its
    /// headSeq (`wakes` are in arrival order, their heads never go down).
    fn add(&mut self, acks: &[Timed], wakes: &[Wake]) {
        let mut next = 0;
        for ack in acks {
            while wakes.get(next).is_some_and(|w| w.head < ack.head_seq) {
                next += 1;
            }
            let Some(wake) = wakes.get(next) else {
                self.missed += 1;
                continue;
            };
            if wake.polled_at.is_some_and(|p| p > ack.sent) {
                self.not_waiting += 1;
                continue;
            }
            let after_ack = match wake.at.checked_duration_since(ack.acked) {
                Some(d) => micros(d) as i64,
                None => {
                    self.before_ack += 1;
                    -(micros(ack.acked - wake.at) as i64)
                }
            };
            self.after_ack_us.push(after_ack);
            self.after_send_us
                .push(micros(wake.at.saturating_duration_since(ack.sent)));
        }
    }
}

pub async fn run(api: &Api, channel: Channel, n: usize, pid: Option<u32>) -> Result<Line> {
    let title = format!("bench wakeup {} {n}", channel.name());
    let doc = api.create_doc(&title).await?;
    let mut writer = Editor::join(api.clone(), doc.clone(), 0).await?;
    let already = subscriber_count(api, channel).await.unwrap_or(0);
    let (stop_tx, stop_rx) = watch::channel(false);
    let listeners = in_parallel(vec![(); n], |()| {
        open_listener(api, channel, &doc, stop_rx.clone())
    })
    .await?;
    if channel == Channel::LongPoll {
        if let Err(e) = wait_for_subscribers(api, channel, already + n as u64).await {
            eprintln!("docsync-bench: {e:#}");
        }
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut stats = Stats::default();
    let mut acks = Vec::with_capacity(WAKE_WRITES);
    for _ in 0..WAKE_WRITES {
        tokio::time::sleep(WAKE_PAUSE).await;
        acks.extend(writer.edit_once(&mut stats).await);
    }
    tokio::time::sleep(WAKE_DRAIN).await;
    let _ = stop_tx.send(true);
    if channel == Channel::LongPoll {
        // Answers the polls still waiting, so every long-poller ends (not measured).
        writer.edit_once(&mut Stats::default()).await;
    }
    let mut wake = WakeStats::default();
    for listener in listeners {
        match join_listener(listener).await {
            Ok(wakes) => wake.add(&acks, &wakes),
            Err(e) => {
                wake.errors += 1;
                eprintln!("docsync-bench: subscriber failed: {e:#}");
            }
        }
    }
    Ok(Scenario::Wakeup(channel, n)
        .line()
        .with("writes", acks.len())
        .with("samples", wake.after_ack_us.len())
        .append(signed_percentiles(
            &mut wake.after_ack_us,
            ["p50_ms", "p99_ms", "max_ms"],
        ))
        .with("before_ack", wake.before_ack)
        .append(percentiles_named(
            &mut wake.after_send_us,
            ["from_send_p50_ms", "from_send_p99_ms", "from_send_max_ms"],
        ))
        .with("missed", wake.missed)
        .with("not_waiting", wake.not_waiting)
        .append(percentiles_named(
            &mut stats.latencies_us,
            ["sync_p50_ms", "sync_p99_ms", "sync_max_ms"],
        ))
        .with("conflicts", stats.conflicts)
        .with("errors", stats.errors + wake.errors)
        .with("server_rss_kib", rss_kib(pid)))
}
