//! `cluster_fanout`: many readers of one document on a node that does not own it. Two nodes
//! on a PostgreSQL the bench starts; the writer edits through the owner (node-0) at the
//! fan-out's rate, the readers all listen on node-1, one line per channel (WebSocket, SSE;
//! their pulls go to node-1 too, and are forwarded). Printed: the owner's and the readers' node's CPU per edit (their own
//! rusage, so the load generator is not in it), PostgreSQL's, edit → visible at a reader,
//! and the streams the owner holds for them (`docsync_subscribers` by channel, read from its
//! `/metrics` while they listen).

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use serde_json::json;

use crate::channel::Channel;
use crate::process::CpuMeter;
use crate::stats::{ranks_ms, round3, Line};

use super::cluster::{pg_cpu_secs, start};
use super::fanout::{
    wait_until_caught_up, Counters, Delivery, Listening, WriterThread, DEFAULT_RATE, KEEP_UP_DRAIN,
};
use super::{Env, Scenario};

const READERS: usize = 100;

pub async fn run(env: &Env, channel: Channel) -> Result<Line> {
    let launcher = env
        .launcher
        .clone()
        .ok_or_else(|| anyhow!("the cluster_fanout scenario starts its own servers"))?;
    let c = start(&launcher, 2).await?;
    let (owner, relay) = (&c.apis[0], &c.apis[1]);
    let doc: Arc<str> = owner.create_doc("bench cluster fanout").await?.into();
    let window = env.fanout_window;
    // The writer's first write claims the document for node-0.
    let (writer, _) =
        WriterThread::start(owner.fresh_pool()?, doc.to_string(), DEFAULT_RATE, window).await?;
    let pulls = relay.sized_pool(READERS + 8)?;
    let pools = (0..READERS).map(|_| (pulls.clone(), false)).collect();
    let counters = Arc::new(Counters::default());
    let listening = Listening::join(pools, &doc, &counters)
        .await?
        .listen(channel)
        .await?;
    let streams = owner_streams(&c.nodes[0].base_url).await;

    let (owner_pid, relay_pid) = (Some(c.nodes[0].pid), Some(c.nodes[1].pid));
    let (owner_cpu, relay_cpu) = (CpuMeter::start(owner_pid), CpuMeter::start(relay_pid));
    let pg_cpu0 = pg_cpu_secs(&c.pg);
    let start = Instant::now() + Duration::from_millis(20);
    let run = writer.go(start).await?;
    let last_reply = run.ended.unwrap_or_else(Instant::now);
    let drained = wait_until_caught_up(&listening.progress, run.last_seq, last_reply).await;
    let (owner_s, relay_s) = (owner_cpu.elapsed(), relay_cpu.elapsed());
    let pg_s = pg_cpu_secs(&c.pg) - pg_cpu0;
    let visible = listening.stop().await?;

    let Delivery {
        mut all_us,
        delivered,
        ..
    } = Delivery::measure(&run.made, &visible, start, window);
    let edits = run.made.len() as u64;
    let per_edit = |s: Option<f64>| {
        s.filter(|_| edits > 0)
            .map(|s| round3(s * 1000.0 / edits as f64))
    };
    Ok(Scenario::ClusterFanout(channel)
        .line()
        .with("readers", READERS)
        .with("offered_edits_per_s", DEFAULT_RATE)
        .with("acked_edits", edits)
        .with("deliveries", delivered)
        .with("missed", edits * READERS as u64 - delivered)
        .append(ranks_ms(
            &mut all_us,
            &[
                ("visible_p50_ms", 50.0),
                ("visible_p95_ms", 95.0),
                ("visible_p99_ms", 99.0),
            ],
        ))
        .with("owner_cpu_ms_per_edit", per_edit(owner_s))
        .with("readers_node_cpu_ms_per_edit", per_edit(relay_s))
        .with("postgres_cpu_ms_per_edit", per_edit(Some(pg_s)))
        .with(
            "owner_streams_for_the_readers",
            json!({"relay": streams.0, "sse": streams.1, "websocket": streams.2}),
        )
        .with(
            "keeps_up",
            drained.is_some_and(|d| d <= KEEP_UP_DRAIN) && delivered == edits * READERS as u64,
        ))
}

/// `docsync_subscribers` on the owner by channel: (relay, sse, websocket).
async fn owner_streams(base: &str) -> (i64, i64, i64) {
    let text = match reqwest::get(format!("{base}/metrics")).await {
        Ok(r) => r.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    };
    let count = |channel: &str| {
        let prefix = format!("docsync_subscribers{{channel=\"{channel}\"}} ");
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .unwrap_or(0.0) as i64
    };
    (count("relay"), count("sse"), count("websocket"))
}
