//! `feed`: the change feed read end to end (PROTOCOL §11) on a server of its own whose
//! database holds 100,000 log entries in 10 documents before it starts: the owner reads
//! all of it in pages of 1,000; then a reader who may read one document of the ten reads
//! the same feed (nine entries in ten passed over by the role function).

use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use docsync_actors::storage::seed::long_history;
use serde_json::{json, Value};

use crate::client::Api;
use crate::setup::unix_ms;
use crate::stats::{round3, Line};

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
        ))
}

/// Reads the whole feed from the start; (seconds, entries, pages).
async fn read_all(api: &Api) -> Result<(f64, i64, usize)> {
    let started = Instant::now();
    let mut since = "0".to_string();
    let mut n = 0i64;
    let mut pages = 0;
    loop {
        let page: Value = api.feed(&since, PAGE).await?;
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
