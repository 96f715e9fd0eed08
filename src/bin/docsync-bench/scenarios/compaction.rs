//! `compaction`: an editor's sync latency while a compaction pass runs, on a server
//! of its own whose database is filled before it starts.

use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use docsync_actors::storage::seed::{aged_documents, AgedLog};
use serde_json::{json, Value};

use crate::client::{metric, Api};
use crate::editor::{Editor, Timed};
use crate::process::rss_kib;
use crate::server::LocalServer;
use crate::setup::unix_ms;
use crate::stats::{percentiles_named, round3, Line, Stats};

use super::{Env, Scenario};

const COMPACT_DOCS: usize = 1_000;
const COMPACT_ROWS_PER_DOC: i64 = 1_000;
/// Older than every retention period (PROTOCOL §6), so the pass has all of it to remove.
const COMPACT_AGE_DAYS: i64 = 60;
const COMPACT_BASELINE: Duration = Duration::from_secs(3);
const COMPACT_TARGET_P99_MS: f64 = 50.0;
const DAY_MS: i64 = 86_400_000;

/// A server on a database with the old log in it, and an admin user's token.
async fn start_compaction_server(env: &Env) -> Result<(LocalServer, String, f64)> {
    let launcher = env
        .launcher
        .clone()
        .ok_or_else(|| anyhow!("needs a server of its own; it cannot run with --target"))?;
    tokio::task::spawn_blocking(move || {
        let dir = launcher.prepare()?;
        let admin = dir.add_user("bench-admin", true)?;
        let started = Instant::now();
        // 1,000 documents with 1,000 log rows each, all 60 days old, written through the
        // storage layer before the server opens the database.
        let owner = dir.user.id.clone();
        dir.write_before_serving(move |c| {
            let spec = AgedLog {
                owner: &owner,
                docs: COMPACT_DOCS,
                rows_per_doc: COMPACT_ROWS_PER_DOC,
                at: unix_ms() - COMPACT_AGE_DAYS * DAY_MS,
            };
            aged_documents(c, &spec)
        })?;
        let fill_s = started.elapsed().as_secs_f64();
        Ok((dir.serve()?, admin.token, fill_s))
    })
    .await?
}

/// Writer commits between two `/metrics` scrapes.
fn commit_stats(before: &str, after: &str) -> Line {
    let delta = |name: &str| Some(metric(after, name)? - metric(before, name)?);
    let commits = delta("docsync_sqlite_commit_seconds_count");
    let seconds = delta("docsync_sqlite_commit_seconds_sum");
    let jobs = delta("docsync_sqlite_commit_jobs_sum");
    let fast = delta("docsync_sqlite_commit_seconds_bucket{le=\"0.05\"}");
    let per_commit = |x: Option<f64>, scale: f64| match (x, commits) {
        (Some(x), Some(c)) if c > 0.0 => json!(round3(x * scale / c)),
        _ => Value::Null,
    };
    let over = match (commits, fast) {
        (Some(c), Some(f)) => json!((c - f) as u64),
        _ => Value::Null,
    };
    Line::fields(vec![
        ("commits", json!(commits.map(|c| c as u64))),
        ("commit_mean_ms", per_commit(seconds, 1000.0)),
        ("commits_over_50ms", over),
        ("jobs_per_commit", per_commit(jobs, 1.0)),
    ])
}

pub async fn run(env: &Env) -> Result<Line> {
    let (server, admin_token, fill_s) = start_compaction_server(env).await?;
    let api = server.api()?;
    let admin = Api::new(&server.base_url, &admin_token, true)?;
    let doc = api.create_doc("bench compaction editor").await?;
    let mut editor = Editor::join(api.clone(), doc, 0).await?;
    let mut stats = Stats::default();
    let baseline_end = Instant::now() + COMPACT_BASELINE;
    let mut baseline: Vec<u64> = editor
        .edit_while(&mut stats, || Instant::now() < baseline_end)
        .await
        .iter()
        .map(Timed::latency_us)
        .collect();
    let metrics_before = api.metrics().await?;
    let pass_started = Instant::now();
    let pass = tokio::spawn(async move { (admin.compact().await, Instant::now()) });
    let during = editor.edit_while(&mut stats, || !pass.is_finished()).await;
    let (summary, pass_ended) = pass.await?;
    let summary = summary.context("compaction pass")?;
    let metrics_after = api.metrics().await?;
    let mut in_pass: Vec<u64> = during
        .iter()
        .filter(|t| t.sent <= pass_ended)
        .map(Timed::latency_us)
        .collect();
    let pass_syncs = in_pass.len();
    let pass_lines = percentiles_named(&mut in_pass, ["pass_p50_ms", "pass_p99_ms", "pass_max_ms"]);
    let within = pass_lines
        .get("pass_p99_ms")
        .and_then(Value::as_f64)
        .map(|p99| p99 < COMPACT_TARGET_P99_MS);
    Ok(Scenario::Compaction
        .line()
        .with("docs", COMPACT_DOCS)
        .with("log_rows", COMPACT_DOCS as i64 * COMPACT_ROWS_PER_DOC)
        .with("fill_s", round3(fill_s))
        .with("baseline_syncs", baseline.len())
        .append(percentiles_named(
            &mut baseline,
            ["baseline_p50_ms", "baseline_p99_ms", "baseline_max_ms"],
        ))
        .with("pass_syncs", pass_syncs)
        .append(pass_lines)
        .with("pass_s", round3((pass_ended - pass_started).as_secs_f64()))
        .with("summary", summary)
        .append(commit_stats(&metrics_before, &metrics_after))
        .with("target_p99_ms", COMPACT_TARGET_P99_MS)
        .with("within_target", within)
        .with("conflicts", stats.conflicts)
        .with("errors", stats.errors)
        .with("server_rss_kib", rss_kib(Some(server.pid))))
}
