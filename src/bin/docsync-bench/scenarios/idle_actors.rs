//! `idle_actors`: server memory per open (idle) document actor.

use std::time::{Duration, Instant};

use anyhow::Result;
use docsync_actors::collab::order_key::n_keys_between;
use serde_json::{json, Value};

use crate::client::Api;
use crate::process::rss_kib;
use crate::setup::{expect_applied, in_parallel, insert_op, new_id};
use crate::stats::{bytes_per, round3, Line};

use super::Scenario;

const IDLE_DOCS: usize = 1_000;
/// Opened before measuring, so one-time allocations are not charged to actors.
const IDLE_WARMUP_DOCS: usize = 20;
const IDLE_BLOCKS: usize = 5;

/// Opens one small document like an editor would: create, 5 inserts, snapshot.
async fn open_small_doc(api: &Api, i: usize) -> Result<()> {
    let doc = api.create_doc(&format!("bench idle {i}")).await?;
    let client_id = new_id("cl_");
    let ops: Vec<Value> = n_keys_between(None, None, IDLE_BLOCKS)?
        .iter()
        .enumerate()
        .map(|(j, key)| insert_op(&new_id("blk_"), None, key, &format!("line {j}")))
        .collect();
    let body = json!({"clientId": client_id, "lastSeq": 0, "ops": ops, "leases": {"hold": []}});
    expect_applied(&api.sync(&doc, &body).await?, IDLE_BLOCKS)?;
    api.snapshot(&doc, Some(&client_id)).await?;
    Ok(())
}

async fn open_small_docs(api: &Api, n: usize) -> Result<()> {
    in_parallel((0..n).collect(), |i| open_small_doc(api, i)).await?;
    Ok(())
}

pub async fn run(api: &Api, pid: Option<u32>) -> Result<Line> {
    // Warm up first so one-time allocations (caches, buffers) are not charged to actors.
    open_small_docs(api, IDLE_WARMUP_DOCS).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = rss_kib(pid);
    let started = Instant::now();
    open_small_docs(api, IDLE_DOCS).await?;
    let open_s = started.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = rss_kib(pid);
    let per_actor = bytes_per(before, after, IDLE_DOCS);
    Ok(Scenario::IdleActors
        .line()
        .with("docs", IDLE_DOCS)
        .with("open_s", round3(open_s))
        .with("rss_before_kib", before)
        .with("rss_after_kib", after)
        .with("rss_per_actor_bytes", per_actor)
        .with("errors", 0)
        .with("server_rss_kib", after))
}
