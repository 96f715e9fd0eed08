//! `history`: a bullet's history on a document whose log holds 100,000 entries (PROTOCOL
//! §8), on a server of its own whose database is filled before it starts.

use std::time::Instant;

use anyhow::{anyhow, bail, Result};
use docsync_actors::storage::seed::long_history;

use crate::setup::unix_ms;
use crate::stats::{percentiles, round3, Line};

use super::{Env, Scenario};

const LOG_ENTRIES: i64 = 100_000;
const BULLETS: usize = 1_000;
/// Requests, spread over the bullets (each has LOG_ENTRIES / BULLETS changes).
const QUERIES: usize = 500;
const PAGE: usize = 100;

pub async fn run(env: &Env) -> Result<Line> {
    let launcher = env
        .launcher
        .clone()
        .ok_or_else(|| anyhow!("needs a server of its own; it cannot run with --target"))?;
    let (server, doc, bullets, fill_s) = tokio::task::spawn_blocking(move || {
        let dir = launcher.prepare()?;
        let owner = dir.user.id.clone();
        let started = Instant::now();
        let (doc, bullets) = dir.write_before_serving(move |c| {
            long_history(c, &owner, BULLETS, LOG_ENTRIES, unix_ms())
        })?;
        let fill_s = started.elapsed().as_secs_f64();
        anyhow::Ok((dir.serve()?, doc, bullets, fill_s))
    })
    .await??;
    let api = server.api()?;
    let mut latencies_us = Vec::with_capacity(QUERIES);
    let mut changes = 0usize;
    for q in 0..QUERIES {
        let bullet = &bullets[(q * 7919) % bullets.len()];
        let started = Instant::now();
        let page = api.history(&doc, bullet, PAGE).await?;
        latencies_us.push(started.elapsed().as_micros() as u64);
        let n = page["changes"].as_array().map_or(0, Vec::len);
        if n == 0 {
            bail!("no history for {bullet}: {page}");
        }
        changes += n;
    }
    Ok(Scenario::History
        .line()
        .with("log_entries", LOG_ENTRIES)
        .with("bullets", BULLETS)
        .with("changes_per_bullet", LOG_ENTRIES as usize / BULLETS)
        .with("queries", QUERIES)
        .with(
            "changes_per_answer",
            round3(changes as f64 / QUERIES as f64),
        )
        .with("fill_s", round3(fill_s))
        .append(percentiles(&mut latencies_us)))
}
