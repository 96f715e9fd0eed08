//! `versions`: versions of a 10,000-bullet document (PROTOCOL §8) — keeping one (the time of
//! `POST /versions`, which includes reading the state in the actor's op order, compressing
//! and the writer's commit), its size on disk, comparing two versions after a tenth of the
//! bullets changed, and restoring the older one as ops. Meanwhile an editor of another
//! document syncs one edit at a time (`other_doc_*`: alone, then while versions are kept):
//! compression runs off the writer thread, so other documents' commits should not wait.

use std::time::Instant;

use anyhow::{anyhow, Result};
use serde_json::{json, Value};

use crate::client::Api;
use crate::setup::{expect_applied, new_id};
use crate::stats::{percentiles_named, round3, Line};

use super::snapshot::tree_ops;
use super::Scenario;

const BULLETS: usize = 10_000;
const BATCH: usize = 500;
const TAKES: usize = 10;
const DIFFS: usize = 10;

async fn send_all(api: &Api, doc: &str, client: &str, mut ops: Vec<Value>) -> Result<()> {
    while !ops.is_empty() {
        let batch: Vec<Value> = ops.drain(..BATCH.min(ops.len())).collect();
        let n = batch.len();
        let body = json!({"clientId": client, "lastSeq": 0, "ops": batch, "leases": {"hold": []}});
        expect_applied(&api.sync(doc, &body).await?, n)?;
    }
    Ok(())
}

/// Edits another document one sync at a time until `stop`; each sync's latency in µs.
async fn other_editor(
    api: Api,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> Result<Vec<u64>> {
    let doc = api.create_doc("bench versions, another document").await?;
    let client = new_id("cl_");
    let block = new_id("blk_");
    let first = json!({"clientId": client, "lastSeq": 0, "leases": {"hold": []},
        "ops": [crate::setup::insert_op(&block, None, "a0", "x")]});
    expect_applied(&api.sync(&doc, &first).await?, 1)?;
    let mut out = Vec::new();
    let mut version = 1;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let body = json!({"clientId": client, "lastSeq": 0, "leases": {"hold": []},
            "ops": [{"opId": new_id("op_"), "kind": "set_content", "blockId": block,
                     "content": format!("edit {version}"), "baseVersion": version}]});
        let started = Instant::now();
        expect_applied(&api.sync(&doc, &body).await?, 1)?;
        out.push(started.elapsed().as_micros() as u64);
        version += 1;
    }
    Ok(out)
}

/// The other editor's latencies while `work` runs.
async fn beside<T>(
    api: &Api,
    work: impl std::future::Future<Output = Result<T>>,
) -> Result<(T, Vec<u64>)> {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let editor = tokio::spawn(other_editor(api.fresh_pool()?, stop.clone()));
    // Let it start editing first.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let out = work.await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let lat = editor.await??;
    Ok((out?, lat))
}

pub async fn run(api: &Api) -> Result<Line> {
    let doc = api.create_doc("bench versions").await?;
    let client = new_id("cl_");
    let ops = tree_ops(BULLETS)?;
    let ids: Vec<String> = ops
        .iter()
        .map(|o| o["blockId"].as_str().unwrap_or_default().to_string())
        .collect();
    send_all(api, &doc, &client, ops).await?;

    // Another document's editor alone, then while versions of the 10,000 bullets are kept.
    let ((), mut alone_us) = beside(api, async {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        Ok(())
    })
    .await?;
    let mut take_us = Vec::with_capacity(TAKES);
    let ((first, take_us_done), mut during_us) = beside(api, async {
        let mut first: Option<Value> = None;
        for i in 0..TAKES {
            let started = Instant::now();
            let v = api.name_version(&doc, &format!("bench {i}")).await?;
            take_us.push(started.elapsed().as_micros() as u64);
            first.get_or_insert(v);
        }
        Ok((first, take_us))
    })
    .await?;
    let mut take_us = take_us_done;
    let first = first.ok_or_else(|| anyhow!("no version kept"))?;
    let stored = first["storedBytes"].as_i64().unwrap_or(0);
    let raw = first["rawBytes"].as_i64().unwrap_or(0);
    let older = first["versionId"].as_str().unwrap_or_default().to_string();

    // A tenth of the bullets edited, 5 % deleted, 500 added: then a second version.
    let mut edits = Vec::new();
    for (i, id) in ids.iter().enumerate() {
        if i % 10 == 3 {
            edits.push(json!({"opId": new_id("op_"), "kind": "set_content", "blockId": id,
                "content": format!("block {i}: some outline text, reworded and longer"), "baseVersion": 1}));
        } else if i % 20 == 7 && i % 10 != 9 {
            edits.push(json!({"opId": new_id("op_"), "kind": "delete", "blockId": id}));
        }
    }
    let changed = edits.len();
    send_all(api, &doc, &client, edits).await?;
    send_all(api, &doc, &client, tree_ops(BULLETS / 20)?).await?;
    let newer = api.name_version(&doc, "after the edits").await?;
    let newer_id = newer["versionId"].as_str().unwrap_or_default().to_string();

    let mut diff_us = Vec::with_capacity(DIFFS);
    let mut sizes = (0, 0, 0);
    for _ in 0..DIFFS {
        let started = Instant::now();
        let d = api.version_diff(&doc, &older, &newer_id).await?;
        diff_us.push(started.elapsed().as_micros() as u64);
        let n = |k: &str| d[k].as_array().map_or(0, Vec::len);
        sizes = (n("added"), n("removed"), n("changed"));
    }
    let mut head_us = Vec::with_capacity(DIFFS);
    for _ in 0..DIFFS {
        let started = Instant::now();
        api.version_diff(&doc, &older, "head").await?;
        head_us.push(started.elapsed().as_micros() as u64);
    }

    // Restoring the older version: the server plans and applies every op in one batch.
    let started = Instant::now();
    let r = api
        .restore_version(
            &doc,
            &older,
            &json!({"clientId": client, "opIdPrefix": new_id("op_")}),
        )
        .await?;
    let restore_ms = started.elapsed().as_secs_f64() * 1000.0;
    let restore_ops = r["results"].as_array().map_or(0, Vec::len);

    Ok(Scenario::Versions
        .line()
        .with("bullets", BULLETS)
        .with("version_raw_bytes", raw)
        .with("version_stored_bytes", stored)
        .with(
            "stored_bytes_per_bullet",
            round3(stored as f64 / BULLETS as f64),
        )
        .append(percentiles_named(
            &mut take_us,
            ["keep_p50_ms", "keep_p99_ms", "keep_max_ms"],
        ))
        .append(percentiles_named(
            &mut alone_us,
            [
                "other_doc_alone_p50_ms",
                "other_doc_alone_p99_ms",
                "other_doc_alone_max_ms",
            ],
        ))
        .append(percentiles_named(
            &mut during_us,
            [
                "other_doc_during_p50_ms",
                "other_doc_during_p99_ms",
                "other_doc_during_max_ms",
            ],
        ))
        .with("ops_between_versions", changed + BULLETS / 20)
        .with("diff_added", sizes.0)
        .with("diff_removed", sizes.1)
        .with("diff_changed", sizes.2)
        .append(percentiles_named(
            &mut diff_us,
            ["diff_p50_ms", "diff_p99_ms", "diff_max_ms"],
        ))
        .append(percentiles_named(
            &mut head_us,
            ["diff_head_p50_ms", "diff_head_p99_ms", "diff_head_max_ms"],
        ))
        .with("restore_ops", restore_ops)
        .with("restore_ms", round3(restore_ms)))
}
