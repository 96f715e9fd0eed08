//! `snapshot_10k`: a 10,000-block document fetched with `GET /snapshot`.

use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use docsync_actors::collab::order_key::n_keys_between;
use serde_json::{json, Value};

use crate::client::Api;
use crate::process::rss_kib;
use crate::setup::{expect_applied, insert_op, new_id};
use crate::stats::{micros, percentiles, percentiles_named, ranks_ms, round3, Line};

use super::Scenario;

const SNAPSHOT_BLOCKS: usize = 10_000;
/// Inserts per setup `/sync`.
const SNAPSHOT_BATCH: usize = 500;
const SNAPSHOT_GETS: usize = 50;
/// Encodings a client may ask for (`Accept-Encoding`), each measured on its own.
const ENCODINGS: [&str; 3] = ["gzip", "br", "zstd"];
const ENCODED_GETS: usize = 10;

/// Insert ops for `n` blocks: every 10th block is a child of the top-level block before it.
pub(super) fn tree_ops(n: usize) -> Result<Vec<Value>> {
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
    // The first request at a head encodes the blocks; the rest share that encoding.
    let mut server_first_ms = None;
    for i in 0..SNAPSHOT_GETS {
        let started = Instant::now();
        let reply = api.snapshot(&doc, None).await?;
        latencies_us.push(micros(started.elapsed()));
        bytes = reply.bytes;
        blocks = reply.body["blocks"].as_array().map_or(0, Vec::len);
        server_us.extend(reply.server_ms.map(|ms| (ms * 1000.0).round() as u64));
        if i == 0 {
            server_first_ms = reply.server_ms;
        }
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
        .with("server_first_ms", server_first_ms)
        .with("wire_bytes_plain", bytes)
        .append(encoded_figures(api, &doc).await?)
        .with("errors", 0)
        .with("server_rss_kib", rss_kib(pid)))
}

/// Per encoding in `ENCODINGS`: the bytes that crossed the wire asking for it, the
/// `Content-Encoding` the server answered with (null: it sent the JSON as is), and client
/// and server (`Server-Timing`) p50 over `ENCODED_GETS` requests.
async fn encoded_figures(api: &Api, doc: &str) -> Result<Line> {
    let mut line = Line::fields(Vec::new());
    for (i, enc) in ENCODINGS.into_iter().enumerate() {
        let mut client_us = Vec::with_capacity(ENCODED_GETS);
        let mut server_us = Vec::with_capacity(ENCODED_GETS);
        let mut last = None;
        let mut first_ms = None;
        for j in 0..ENCODED_GETS {
            let started = Instant::now();
            let reply = api.snapshot_encoded(doc, Some(enc)).await?;
            client_us.push(micros(started.elapsed()));
            server_us.extend(reply.server_ms.map(|ms| (ms * 1000.0).round() as u64));
            if j == 0 {
                first_ms = reply.server_ms;
            }
            last = Some(reply);
        }
        let last = last.expect("ENCODED_GETS > 0");
        let [bytes_key, enc_key, client_key, server_key, first_key] = ENCODED_KEYS[i];
        line = line
            .with(bytes_key, last.bytes)
            .with(enc_key, last.content_encoding)
            .with(first_key, first_ms)
            .append(ranks_ms(&mut client_us, &[(client_key, 50.0)]))
            .append(ranks_ms(&mut server_us, &[(server_key, 50.0)]));
    }
    Ok(line)
}

/// Field names per entry of `ENCODINGS` (output keys are static strings).
const ENCODED_KEYS: [[&str; 5]; 3] = [
    [
        "wire_bytes_gzip",
        "content_encoding_gzip",
        "p50_ms_gzip",
        "server_p50_ms_gzip",
        "server_first_ms_gzip",
    ],
    [
        "wire_bytes_br",
        "content_encoding_br",
        "p50_ms_br",
        "server_p50_ms_br",
        "server_first_ms_br",
    ],
    [
        "wire_bytes_zstd",
        "content_encoding_zstd",
        "p50_ms_zstd",
        "server_p50_ms_zstd",
        "server_first_ms_zstd",
    ],
];
