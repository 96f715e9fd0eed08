//! `fanout`: one writer, N readers on one document (many people watching one outline).
//!
//! On a server of its own (when we start servers): a document, a writer with its block,
//! then N readers that each pull once (so their sessions exist before anyone listens: a new
//! client's first `/sync` is news to every subscriber) and subscribe by WebSocket or SSE.
//! After a quiet second the writer edits at the offered rate for the window; then the
//! scenario waits until every reader has every acknowledged edit (at most `DRAIN_TIMEOUT`).
//! The server's CPU time is its own rusage over writing and draining, so the load
//! generator's work (the readers run in this process) is not part of it.
//!
//! `bullet_fanout` runs the same with some readers as bullet guests (PROTOCOL §10): people
//! of their own, the writer's bullet shared with them read-only, so each edit reaches them
//! as their view's news rather than as log entries.

mod reader;
mod writer;

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};
use tokio::sync::{oneshot, watch};

use crate::channel::Channel;
use crate::client::Api;
use crate::listeners::CONNECT_PARALLELISM;
use crate::process::{own_cpu_secs, rss_kib, CpuMeter};
use crate::setup::in_parallel_n;
use crate::stats::{bytes_per, micros, ranks_ms, round3, Line};

pub(super) use self::reader::Counters;
use self::reader::Reader;
use self::writer::{Writer, WriterRun};
use super::{Env, Scenario};

/// Reader counts run when none are given (1,000 only when asked: it takes a while).
pub const DEFAULT_READERS: [usize; 2] = [10, 100];
pub const DEFAULT_RATE: u32 = 20;
pub const DEFAULT_WINDOW_SECS: f64 = 10.0;
/// After subscribing, before measuring: the server has settled every new subscriber.
const SETTLE: Duration = Duration::from_secs(1);
/// Longest wait, after the writer's last reply, for every reader to have every edit.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);
/// Drained within this (after the last reply) counts as keeping up.
pub(super) const KEEP_UP_DRAIN: Duration = Duration::from_secs(1);
const READER_STOP_TIMEOUT: Duration = Duration::from_secs(30);

/// Which fan-out configurations to run (`--fanout-*` options).
#[derive(Clone, Debug)]
pub struct FanoutPlan {
    pub channels: Vec<Channel>,
    pub readers: Vec<usize>,
    /// Offered edits per second.
    pub rates: Vec<u32>,
}

impl FanoutPlan {
    pub fn scenarios(&self) -> Vec<Scenario> {
        let mut out = Vec::new();
        for &readers in &self.readers {
            for &rate in &self.rates {
                for &channel in &self.channels {
                    out.push(Scenario::Fanout(channel, readers, rate));
                }
            }
        }
        out
    }
}

pub async fn run(env: &Env, channel: Channel, readers: usize, rate: u32) -> Result<Line> {
    let line = Scenario::Fanout(channel, readers, rate).line();
    measure(env, channel, readers, rate, 0, line).await
}

/// `readers` WebSocket readers, `guests` of them bullet guests of the writer's bullet.
pub async fn run_with_guests(env: &Env, readers: usize, guests: usize) -> Result<Line> {
    let line = Scenario::BulletFanout(guests)
        .line()
        .with("channel", Channel::WebSocket.name())
        .with("readers", readers)
        .with("offered_edits_per_s", DEFAULT_RATE);
    measure(env, Channel::WebSocket, readers, DEFAULT_RATE, guests, line).await
}

async fn measure(
    env: &Env,
    channel: Channel,
    readers: usize,
    rate: u32,
    guests: usize,
    line: Line,
) -> Result<Line> {
    if channel == Channel::LongPoll {
        bail!("fanout measures WebSocket and SSE wake-ups (--fanout-channels websocket,sse)");
    }
    // A WebSocket or stream plus a pull connection per reader, on both ends.
    let needed = (2 * readers + 200) as u64;
    if env.nofile < needed {
        bail!(
            "open-file limit {} is below the {needed} this needs",
            env.nofile
        );
    }
    // A server of its own when we can: its CPU time and memory then belong to this run.
    let (server, guest_users) = match &env.launcher {
        Some(l) if guests > 0 => {
            let l = l.clone();
            let (server, users) = tokio::task::spawn_blocking(move || {
                let dir = l.prepare()?;
                let users = (0..guests)
                    .map(|i| dir.add_user(&format!("guest{i}"), false))
                    .collect::<Result<Vec<_>>>()?;
                anyhow::Ok((dir.serve()?, users))
            })
            .await??;
            (Some(server), users)
        }
        Some(l) => (Some(l.start().await?), Vec::new()),
        None if guests > 0 => bail!("bullet guests need a server of its own (not --target)"),
        None => (None, Vec::new()),
    };
    let (api, pid) = match &server {
        Some(s) => (s.api()?, Some(s.pid)),
        None => (env.api.fresh_pool()?, env.pid),
    };
    let title = format!("bench fanout {} {readers}", channel.name());
    let doc: Arc<str> = api.create_doc(&title).await?.into();
    let window = env.fanout_window;
    let (writer, bullet) =
        WriterThread::start(api.fresh_pool()?, doc.to_string(), rate, window).await?;
    // The guests' share of the writer's bullet, before they first pull.
    if !guest_users.is_empty() {
        let shares: Vec<serde_json::Value> = guest_users
            .iter()
            .map(|u| serde_json::json!({"kind": "user", "id": u.id, "access": "read"}))
            .collect();
        api.put_json(
            &format!("/docs/{doc}/blocks/{bullet}/shares"),
            &serde_json::Value::Array(shares),
        )
        .await?;
    }

    let pulls = api.sized_pool(readers + 8)?;
    let base_url = server
        .as_ref()
        .map(|s| s.base_url.clone())
        .unwrap_or_default();
    // Each reader's connection pool: the document's own readers share the owner's, each
    // guest has their own (their token).
    let mut pools = Vec::with_capacity(readers);
    for i in 0..readers {
        pools.push(match guest_users.get(i) {
            Some(u) => (Api::new(&base_url, &u.token, true)?, true),
            None => (pulls.clone(), false),
        });
    }
    let counters = Arc::new(Counters::default());
    let joined = Listening::join(pools, &doc, &counters).await?;
    let rss_before = rss_kib(pid);
    let listening = joined.listen(channel).await?;
    let rss_after = rss_kib(pid);

    let counts_before = counters.snapshot();
    let server_cpu = CpuMeter::start(pid);
    let own_cpu_before = own_cpu_secs();
    let start = Instant::now() + Duration::from_millis(20);
    let run = writer.go(start).await?;
    let last_reply = run.ended.unwrap_or_else(Instant::now);
    let drained = wait_until_caught_up(&listening.progress, run.last_seq, last_reply).await;
    let measured_s = Instant::now().duration_since(start).as_secs_f64();
    let server_cpu_s = server_cpu.elapsed();
    let client_cpu_s = own_cpu_secs().zip(own_cpu_before).map(|(a, b)| a - b);
    let counts = counters.snapshot();
    let rss_end = rss_kib(pid);

    let visible = listening.stop().await?;
    let delivery = Delivery::measure(&run.made, &visible, start, window);
    let [wakeups, pull_count, applied, errors] = [0, 1, 2, 3].map(|i| counts[i] - counts_before[i]);
    let edits = run.made.len() as u64;
    let per_edit = |n: u64| (edits > 0).then(|| round3(n as f64 / edits as f64));
    let per_edit_reader =
        |n: u64| (edits > 0).then(|| round3(n as f64 / (edits * readers as u64) as f64));
    let edits_per_s = edits as f64 / window.as_secs_f64();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let busy = server_cpu_s.map(|cpu| cpu / measured_s);
    let Delivery {
        mut all_us,
        mut first_third_us,
        mut last_third_us,
        delivered,
    } = delivery;
    let mut ack_us = run.ack_us;
    let client_threads = tokio::runtime::Handle::current().metrics().num_workers() + 1;
    Ok(line
        .with("bullet_guests", guests)
        .with("window_s", round3(window.as_secs_f64()))
        .with("client_threads", client_threads)
        .with("acked_edits", edits)
        .with("edits_per_s", round3(edits_per_s))
        .with("writer_syncs", run.syncs)
        .append(ranks_ms(
            &mut ack_us,
            &[("writer_ack_p50_ms", 50.0), ("writer_ack_p99_ms", 99.0)],
        ))
        .with("deliveries", delivered)
        .with("missed", edits * readers as u64 - delivered)
        .append(ranks_ms(
            &mut all_us,
            &[
                ("visible_p50_ms", 50.0),
                ("visible_p95_ms", 95.0),
                ("visible_p99_ms", 99.0),
                ("visible_max_ms", 100.0),
            ],
        ))
        .append(ranks_ms(
            &mut first_third_us,
            &[("visible_p50_first_third_ms", 50.0)],
        ))
        .append(ranks_ms(
            &mut last_third_us,
            &[("visible_p50_last_third_ms", 50.0)],
        ))
        .with("wakeups_per_edit_per_reader", per_edit_reader(wakeups))
        .with("pulls_per_edit_per_reader", per_edit_reader(pull_count))
        .with(
            "applied_wakeups_per_edit_per_reader",
            per_edit_reader(applied),
        )
        .with("pulls_per_edit", per_edit(pull_count))
        .with("server_cpu_s", server_cpu_s.map(round3))
        .with(
            "server_cpu_ms_per_delivered_edit",
            server_cpu_s
                .filter(|_| delivered > 0)
                .map(|cpu| round3(cpu * 1000.0 / delivered as f64)),
        )
        .with(
            "server_cpu_ms_per_edit",
            server_cpu_s
                .filter(|_| edits > 0)
                .map(|cpu| round3(cpu * 1000.0 / edits as f64)),
        )
        .with("server_cores_busy", busy.map(round3))
        .with(
            "server_cpu_bound_edits_per_s",
            busy.filter(|b| *b > 0.0)
                .map(|b| round3(edits_per_s * cores / b)),
        )
        .with("client_cpu_s", client_cpu_s.map(round3))
        .with("deliveries_per_s", round3(delivered as f64 / measured_s))
        .with(
            "needed_deliveries_per_s",
            round3(edits_per_s * readers as f64),
        )
        .with(
            "drain_ms",
            drained.map(|d| round3(d.as_secs_f64() * 1000.0)),
        )
        .with(
            "keeps_up",
            drained.is_some_and(|d| d <= KEEP_UP_DRAIN) && delivered == edits * readers as u64,
        )
        .with(
            "rss_per_reader_bytes",
            bytes_per(rss_before, rss_after, readers),
        )
        .with("conflicts", run.conflicts)
        .with("errors", run.errors + errors)
        .with("server_rss_kib", rss_end))
}

/// Readers that pulled once (their sessions exist before anyone listens: a new client's
/// first `/sync` is news to every subscriber).
pub(super) struct Joined(Vec<Reader>);

/// Readers listening on their wake-up channel, each recording when it saw which seq.
pub(super) struct Listening {
    pub(super) progress: Vec<Arc<AtomicI64>>,
    tasks: Vec<tokio::task::JoinHandle<Vec<(i64, Instant)>>>,
    stop: watch::Sender<bool>,
}

impl Listening {
    /// One reader per pool (`true`: a bullet guest of the writer's bullet).
    pub(super) async fn join(
        pools: Vec<(Api, bool)>,
        doc: &Arc<str>,
        counters: &Arc<Counters>,
    ) -> Result<Joined> {
        let joined = in_parallel_n(pools, CONNECT_PARALLELISM, |(pool, guest)| {
            let (doc, counters) = (doc.clone(), counters.clone());
            async move {
                match guest {
                    true => Reader::join_as_guest(pool, doc, counters).await,
                    false => Reader::join(pool, doc, counters).await,
                }
            }
        })
        .await?;
        Ok(Joined(joined))
    }

    /// Every reader recorded what it saw; they stop listening.
    pub(super) async fn stop(self) -> Result<Vec<Vec<(i64, Instant)>>> {
        let _ = self.stop.send(true);
        let mut visible = Vec::with_capacity(self.tasks.len());
        for task in self.tasks {
            match tokio::time::timeout(READER_STOP_TIMEOUT, task).await {
                Ok(Ok(v)) => visible.push(v),
                _ => bail!("a reader did not stop within {READER_STOP_TIMEOUT:?}"),
            }
        }
        Ok(visible)
    }
}

impl Joined {
    /// Subscribes every reader on `channel`; returns once the server has settled them.
    pub(super) async fn listen(self, channel: Channel) -> Result<Listening> {
        let subscribed = in_parallel_n(self.0, CONNECT_PARALLELISM, |r| async move {
            let source = r.subscribe(channel).await?;
            Ok((r, source))
        })
        .await?;
        let (stop, stop_rx) = watch::channel(false);
        let mut progress = Vec::with_capacity(subscribed.len());
        let mut tasks = Vec::with_capacity(subscribed.len());
        for (reader, source) in subscribed {
            progress.push(reader.progress());
            tasks.push(tokio::spawn(reader.listen(source, stop_rx.clone())));
        }
        tokio::time::sleep(SETTLE).await;
        Ok(Listening {
            progress,
            tasks,
            stop,
        })
    }
}

/// Waits until every reader's `lastSeq` reached `seq`; how long that took after
/// `last_reply`, or `None` if not within `DRAIN_TIMEOUT`.
pub(super) async fn wait_until_caught_up(
    progress: &[Arc<AtomicI64>],
    seq: i64,
    last_reply: Instant,
) -> Option<Duration> {
    let deadline = Instant::now() + DRAIN_TIMEOUT;
    loop {
        if progress.iter().all(|p| p.load(Ordering::Relaxed) >= seq) {
            return Some(Instant::now().saturating_duration_since(last_reply));
        }
        if Instant::now() > deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Edit → visible latencies of every (reader, acknowledged edit) that arrived.
pub(super) struct Delivery {
    pub(super) all_us: Vec<u64>,
    /// Edits made in the first and last third of the window: a growing lag means the
    /// server does not keep up.
    pub(super) first_third_us: Vec<u64>,
    pub(super) last_third_us: Vec<u64>,
    pub(super) delivered: u64,
}

impl Delivery {
    pub(super) fn measure(
        made: &HashMap<i64, Instant>,
        visible: &[Vec<(i64, Instant)>],
        start: Instant,
        window: Duration,
    ) -> Delivery {
        let (first_end, last_start) = (start + window / 3, start + window * 2 / 3);
        let mut d = Delivery {
            all_us: Vec::new(),
            first_third_us: Vec::new(),
            last_third_us: Vec::new(),
            delivered: 0,
        };
        for (seq, at) in visible.iter().flatten() {
            let Some(made_at) = made.get(seq) else {
                continue;
            };
            let us = micros(at.saturating_duration_since(*made_at));
            d.delivered += 1;
            d.all_us.push(us);
            if *made_at < first_end {
                d.first_third_us.push(us);
            } else if *made_at >= last_start {
                d.last_third_us.push(us);
            }
        }
        d
    }
}

/// The writer on a thread and runtime of its own: joined first, then told when to start.
pub(super) struct WriterThread {
    go: oneshot::Sender<Instant>,
    done: std::thread::JoinHandle<Result<WriterRun>>,
}

impl WriterThread {
    /// Starts the thread and waits until the writer has joined the document; with the
    /// bullet it edits.
    pub(super) async fn start(
        api: Api,
        doc: String,
        rate: u32,
        window: Duration,
    ) -> Result<(WriterThread, String)> {
        let (ready_tx, ready_rx) = oneshot::channel::<Result<String, String>>();
        let (go, go_rx) = oneshot::channel::<Instant>();
        let done = std::thread::Builder::new()
            .name("fanout-writer".into())
            .spawn(move || {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                rt.block_on(async move {
                    let writer = match Writer::join(api, doc).await {
                        Ok(w) => {
                            let _ = ready_tx.send(Ok(w.block_id().to_string()));
                            w
                        }
                        Err(e) => {
                            let _ = ready_tx.send(Err(format!("{e:#}")));
                            return Err(e);
                        }
                    };
                    let start = go_rx.await.map_err(|_| anyhow!("fanout cancelled"))?;
                    Ok(writer.run(f64::from(rate), start, window).await)
                })
            })?;
        match ready_rx.await {
            Ok(Ok(block)) => Ok((WriterThread { go, done }, block)),
            Ok(Err(e)) => bail!("the writer could not join: {e}"),
            Err(_) => bail!("the writer thread ended before joining"),
        }
    }

    /// Lets the writer start at `start` and waits for its window to end.
    pub(super) async fn go(self, start: Instant) -> Result<WriterRun> {
        let _ = self.go.send(start);
        let done = self.done;
        tokio::task::spawn_blocking(move || done.join())
            .await?
            .map_err(|_| anyhow!("the writer thread panicked"))?
    }
}
