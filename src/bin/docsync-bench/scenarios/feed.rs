//! `feed`: the change feed read end to end (PROTOCOL §11) on a server of its own whose
//! database holds 100,000 log entries in 10 documents before it starts: the owner reads
//! all of it in pages of 1,000; then a reader who may read one document of the ten reads
//! the same feed (nine entries in ten passed over by the role function); then, with a
//! reader long-polling the feed, 200 edits one after another: edit sent → entry received.

use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use docsync_actors::storage::seed::long_history;
use serde_json::{json, Value};

use crate::client::Api;
use crate::setup::{insert_op, new_id, unix_ms};
use crate::stats::{percentiles_named, round3, Line};

use super::{Env, Scenario};

const DOCS: usize = 10;
const ENTRIES_PER_DOC: i64 = 10_000;
const PAGE: usize = 1_000;

pub async fn run(env: &Env) -> Result<Line> {
    let launcher = env
        .launcher
        .clone()
        .ok_or_else(|| anyhow!("needs a server of its own; it cannot run with --target"))?;
    let (server, docs, reader, fill_s) = tokio::task::spawn_blocking(move || {
        let dir = launcher.prepare()?;
        let owner = dir.user.id.clone();
        let reader = dir.add_user("feed_reader", false)?;
        let started = Instant::now();
        let docs = dir.write_before_serving(move |c| {
            (0..DOCS)
                .map(|_| long_history(c, &owner, 100, ENTRIES_PER_DOC, unix_ms()).map(|(d, _)| d))
                .collect::<Result<Vec<_>, _>>()
        })?;
        let fill_s = started.elapsed().as_secs_f64();
        anyhow::Ok((dir.serve()?, docs, reader, fill_s))
    })
    .await??;
    let owner = server.api()?;
    let total = DOCS as i64 * ENTRIES_PER_DOC;
    let (owner_s, owner_n, owner_pages) = read_all(&owner).await?;
    if owner_n != total {
        bail!("the owner read {owner_n} entries of {total}");
    }
    // A reader of one document of the ten.
    owner
        .put_json(
            &format!("/docs/{}/shares", docs[0]),
            &json!([{"kind": "user", "id": reader.id, "access": "read"}]),
        )
        .await?;
    let reader_api = Api::new(&server.base_url, &reader.token, true)?;
    let (reader_s, reader_n, reader_pages) = read_all(&reader_api).await?;
    if reader_n != ENTRIES_PER_DOC {
        bail!("the reader read {reader_n} entries of {ENTRIES_PER_DOC}");
    }
    let mut live_us = live(&owner, &docs[1]).await?;
    Ok(Scenario::Feed
        .line()
        .with("entries", total)
        .with("documents", DOCS)
        .with("page", PAGE)
        .with("fill_s", round3(fill_s))
        .with("owner_s", round3(owner_s))
        .with("owner_pages", owner_pages)
        .with("owner_entries_per_s", (owner_n as f64 / owner_s).round())
        .with("one_doc_reader_s", round3(reader_s))
        .with("one_doc_reader_pages", reader_pages)
        .with(
            "one_doc_reader_rows_looked_at_per_s",
            (total as f64 / reader_s).round(),
        )
        .with("live_edits", LIVE_EDITS)
        .append(percentiles_named(
            &mut live_us,
            [
                "edit_to_feed_p50_ms",
                "edit_to_feed_p99_ms",
                "edit_to_feed_max_ms",
            ],
        )))
}

const LIVE_EDITS: usize = 200;

/// Edit sent → its entry received by a reader long-polling the feed, one edit at a time
/// (each sent once the reader has the one before); microseconds.
async fn live(api: &Api, doc: &str) -> Result<Vec<u64>> {
    let mut since = api.feed("0", 1, 0).await?["cursor"]
        .as_str()
        .ok_or_else(|| anyhow!("no cursor"))?
        .to_string();
    // Straight to the end of the feed.
    loop {
        let page = api.feed(&since, PAGE, 0).await?;
        since = page["cursor"].as_str().unwrap_or_default().to_string();
        if page["more"] != true {
            break;
        }
    }
    // One bullet, its text rewritten by every edit (as typing does).
    let block = new_id("blk_");
    let reply = api
        .sync(
            doc,
            &json!({"clientId": "cl_feed_bench", "lastSeq": 0, "ops": [
                insert_op(&block, None, "a0", "live")]}),
        )
        .await?;
    let mut head = reply["headSeq"].as_i64().unwrap_or(0);
    let page = api.feed(&since, PAGE, 5).await?;
    since = page["cursor"].as_str().unwrap_or_default().to_string();
    let mut out = Vec::with_capacity(LIVE_EDITS);
    for n in 0..LIVE_EDITS {
        let reader = {
            let api = api.clone();
            let since = since.clone();
            tokio::spawn(async move {
                let page = api.feed(&since, PAGE, 5).await;
                (page, Instant::now())
            })
        };
        // The reader is on its way; the edit goes out after it asked (a long-poll that
        // already waits, or that finds the entry at once: both are how a consumer sees it).
        tokio::task::yield_now().await;
        let started = Instant::now();
        let reply = api
            .sync(
                doc,
                &json!({"clientId": "cl_feed_bench", "lastSeq": head, "ops": [{
                    "opId": new_id("op_"), "kind": "set_content", "blockId": block,
                    "content": format!("live {n}"), "baseVersion": n + 1}]}),
            )
            .await?;
        head = reply["headSeq"].as_i64().unwrap_or(head);
        let (page, received) = reader.await?;
        let page = page?;
        let got = page["entries"].as_array().map_or(0, Vec::len);
        if got == 0 {
            bail!("the reader's wait ended without the entry: {page}");
        }
        out.push(received.saturating_duration_since(started).as_micros() as u64);
        since = page["cursor"].as_str().unwrap_or_default().to_string();
    }
    Ok(out)
}

/// Reads the whole feed from the start; (seconds, entries, pages).
async fn read_all(api: &Api) -> Result<(f64, i64, usize)> {
    let started = Instant::now();
    let mut since = "0".to_string();
    let mut n = 0i64;
    let mut pages = 0;
    loop {
        let page: Value = api.feed(&since, PAGE, 0).await?;
        pages += 1;
        n += page["entries"].as_array().map_or(0, Vec::len) as i64;
        since = page["cursor"]
            .as_str()
            .ok_or_else(|| anyhow!("no cursor: {page}"))?
            .to_string();
        if page["more"] != true {
            break;
        }
    }
    Ok((started.elapsed().as_secs_f64(), n, pages))
}
