//! `snapshot_10k`: a 10,000-block document fetched with `GET /snapshot`.

use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use docsync_actors::collab::order_key::n_keys_between;
use serde_json::{json, Value};

use crate::client::Api;
use crate::process::rss_kib;
use crate::setup::{expect_applied, insert_op, new_id};
use crate::stats::{micros, percentiles, percentiles_named, round3, Line};

use super::Scenario;

const SNAPSHOT_BLOCKS: usize = 10_000;
/// Inserts per setup `/sync`.
const SNAPSHOT_BATCH: usize = 500;
const SNAPSHOT_GETS: usize = 50;

/// Insert ops for `n` blocks: every 10th block is a child of the top-level block before it.
fn tree_ops(n: usize) -> Result<Vec<Value>> {
    let top_level = n - n / 10;
    let mut keys = n_keys_between(None, None, top_level)?.into_iter();
    let child_key = n_keys_between(None, None, 1)?.remove(0);
    let mut last_top: Option<String> = None;
    let mut ops = Vec::with_capacity(n);
    for i in 0..n {
        let block_id = new_id("blk_");
        let content = format!("block {i}: some outline text with a #tag{}", i % 20);
        let op = match (&last_top, i % 10 == 9) {
            (Some(parent), true) => insert_op(&block_id, Some(parent), &child_key, &content),
            _ => {
                let key = keys
                    .next()
                    .ok_or_else(|| anyhow!("ran out of order keys"))?;
                last_top = Some(block_id.clone());
                insert_op(&block_id, None, &key, &content)
            }
        };
        ops.push(op);
    }
    Ok(ops)
}

pub async fn run(api: &Api, pid: Option<u32>) -> Result<Line> {
    let doc = api.create_doc("bench snapshot_10k").await?;
    let client_id = new_id("cl_");
    let started = Instant::now();
    let mut ops = tree_ops(SNAPSHOT_BLOCKS)?;
    let mut last_seq = 0;
    while !ops.is_empty() {
        let batch: Vec<Value> = ops.drain(..SNAPSHOT_BATCH.min(ops.len())).collect();
        let n = batch.len();
        let body = json!({"clientId": client_id, "lastSeq": last_seq, "ops": batch,
                          "leases": {"hold": []}});
        let reply = api.sync(&doc, &body).await?;
        expect_applied(&reply, n)?;
        last_seq = reply["headSeq"].as_i64().unwrap_or(last_seq);
    }
    let insert_s = started.elapsed().as_secs_f64();

    let mut latencies_us = Vec::with_capacity(SNAPSHOT_GETS);
    let mut server_us = Vec::new();
    let mut bytes = 0;
    let mut blocks = 0;
    for _ in 0..SNAPSHOT_GETS {
        let started = Instant::now();
        let reply = api.snapshot(&doc, None).await?;
        latencies_us.push(micros(started.elapsed()));
        bytes = reply.bytes;
        blocks = reply.body["blocks"].as_array().map_or(0, Vec::len);
        server_us.extend(reply.server_ms.map(|ms| (ms * 1000.0).round() as u64));
    }
    if blocks != SNAPSHOT_BLOCKS {
        bail!("snapshot has {blocks} blocks, expected {SNAPSHOT_BLOCKS}");
    }
    Ok(Scenario::Snapshot10k
        .line()
        .with("blocks", blocks)
        .with("requests", SNAPSHOT_GETS)
        .with("insert_s", round3(insert_s))
        .with("bytes", bytes)
        .append(percentiles(&mut latencies_us))
        .append(percentiles_named(
            &mut server_us,
            ["server_p50_ms", "server_p99_ms", "server_max_ms"],
        ))
        .with("errors", 0)
        .with("server_rss_kib", rss_kib(pid)))
}
