//! `idle_subscribers`: server memory per idle subscriber (WebSocket, long-poll), each channel on a
//! server of its own.

use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use tokio::sync::watch;

use crate::channel::Channel;
use crate::client::{subscriber_count, wait_for_subscribers, Api};
use crate::listeners::{close_listeners, open_listener, Listener, CONNECT_PARALLELISM};
use crate::process::rss_kib;
use crate::setup::{create_docs, in_parallel_n};
use crate::stats::{bytes_per, round3, Line};

use super::{Env, Scenario};

const IDLE_SUB_DOCS: usize = 100;
const IDLE_SUBSCRIBERS: usize = 10_000;
const IDLE_SUB_WARMUP: usize = 100;
/// Subscribers opened before waiting for the server to count them.
const IDLE_SUB_BATCH: usize = 500;

pub async fn run(env: &Env, channel: Channel) -> Result<Line> {
    let needed = (IDLE_SUBSCRIBERS + IDLE_SUB_WARMUP + 1_000) as u64;
    if env.nofile < needed {
        bail!(
            "open-file limit {} is below the {needed} this scenario needs (raise `ulimit -n`)",
            env.nofile
        );
    }
    // A server of its own when we can: a heap no other scenario touched, and the thousands
    // of connections leave nothing behind in the main server.
    let server = match &env.launcher {
        Some(l) => Some(l.start().await?),
        None => None,
    };
    let (api, pid) = match &server {
        Some(s) => (s.api()?, Some(s.pid)),
        None => (env.api.fresh_pool()?, env.pid),
    };
    let docs = create_docs(&api, IDLE_SUB_DOCS, "bench idle_subscribers").await?;
    for doc in &docs {
        // Opens the document's actor, so actors are not charged to subscribers.
        api.snapshot(doc, None).await?;
    }
    let already = subscriber_count(&api, channel).await?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut listeners = open_idle(&api, channel, &docs, IDLE_SUB_WARMUP, &stop_rx, already).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = rss_kib(pid);
    let started = Instant::now();
    let base = already + IDLE_SUB_WARMUP as u64;
    let opened = open_idle(&api, channel, &docs, IDLE_SUBSCRIBERS, &stop_rx, base).await;
    let open_s = started.elapsed().as_secs_f64();
    listeners.extend(opened?);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let counted = subscriber_count(&api, channel)
        .await?
        .saturating_sub(already);
    let after = rss_kib(pid);
    let errors = close_listeners(channel, stop_tx, listeners).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let closed = rss_kib(pid);
    let left = subscriber_count(&api, channel)
        .await?
        .saturating_sub(already);
    Ok(Scenario::IdleSubscribers(channel)
        .line()
        .with("subscribers", IDLE_SUBSCRIBERS)
        .with("warmup_subscribers", IDLE_SUB_WARMUP)
        .with("docs", IDLE_SUB_DOCS)
        .with("open_s", round3(open_s))
        .with("server_counted", counted)
        .with("rss_before_kib", before)
        .with("rss_after_kib", after)
        .with(
            "bytes_per_subscriber",
            bytes_per(before, after, IDLE_SUBSCRIBERS),
        )
        .with("rss_closed_kib", closed)
        .with("server_counted_after_close", left)
        .with("errors", errors)
        .with("server_rss_kib", after))
}

/// Opens `n` listeners spread over `docs`, in batches; after each batch waits until the
/// server counts `base` + all opened so far.
async fn open_idle(
    api: &Api,
    channel: Channel,
    docs: &[String],
    n: usize,
    stop: &watch::Receiver<bool>,
    base: u64,
) -> Result<Vec<Listener>> {
    let mut listeners = Vec::with_capacity(n);
    while listeners.len() < n {
        let first = listeners.len();
        let batch: Vec<usize> = (first..n.min(first + IDLE_SUB_BATCH)).collect();
        let opened = in_parallel_n(batch, CONNECT_PARALLELISM, |i| {
            open_listener(api, channel, &docs[i % docs.len()], stop.clone())
        })
        .await?;
        listeners.extend(opened);
        wait_for_subscribers(api, channel, base + listeners.len() as u64).await?;
    }
    Ok(listeners)
}
