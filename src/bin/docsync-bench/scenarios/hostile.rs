//! `hostile`: what one user can do to everyone else, and what it costs them now.
//! - placement: a 40,000-deep chain typed in 500-op syncs (past `limits.max_depth` every
//!   insert lands last under the deepest allowed parent), and 30,000 inserts naming unknown
//!   parents (all land last at top level), while another document's editor syncs one op at
//!   a time: how long a 500-op sync takes, and how long the other editor waits;
//! - tags: edits of one bullet holding 12,500 `#tags` while the other editor syncs;
//! - logins: 200 at once from 200 addresses (unknown names: each costs one argon2 run all
//!   the same) on a server as deployed: the server's RSS at its peak, how many were refused
//!   busy, and snapshot latency meanwhile;
//! - write budget: one user sending maximal syncs for 10 s on a server as deployed: how
//!   fast the database grows and how many syncs were refused;
//! - what a login's audit row costs beside its argon2 run, on the storage the server uses
//!   (SQLite, `synchronous = FULL`): a failed login's own commit of its row, and the row a
//!   good login adds to its session's transaction.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use serde_json::{json, Value};

use crate::client::Api;
use crate::process::rss_kib;
use crate::setup::{expect_applied, insert_op, new_id};
use crate::stats::{micros, percentiles_named, round3, Line};

use super::{Env, Scenario};

const CHAIN: usize = 40_000;
const UNKNOWN_PARENT_INSERTS: usize = 30_000;
const BATCH: usize = 500;
const TAGS: usize = 12_500;
const TAG_EDITS: usize = 10;
const LOGINS: usize = 200;
/// The budget run: a first stretch that spends the full bucket (one minute's worth), then the
/// stretch measured at the refill rate.
const BUDGET_BURST: Duration = Duration::from_secs(10);
const BUDGET_RUN: Duration = Duration::from_secs(25);

/// Another document's editor: one-op syncs back to back until `stop`; their latencies (µs).
fn other_editor(api: Api, stop: Arc<AtomicBool>) -> tokio::task::JoinHandle<Result<Vec<u64>>> {
    tokio::spawn(async move {
        let doc = api.create_doc("bench hostile: the other document").await?;
        let client = new_id("cl_");
        let mut head = 0;
        let mut lat = Vec::new();
        while !stop.load(Ordering::Acquire) {
            let op = insert_op(&new_id("blk_"), None, "a0", "x");
            let body = json!({"clientId": client, "lastSeq": head, "ops": [op]});
            let t = Instant::now();
            let r = api.sync(&doc, &body).await?;
            lat.push(micros(t.elapsed()));
            head = r["headSeq"].as_i64().unwrap_or(head);
        }
        Ok(lat)
    })
}

/// Sends `ops` in 500-op syncs; the time of each (ms).
async fn send_batches(api: &Api, doc: &str, ops: Vec<Value>) -> Result<Vec<f64>> {
    let client = new_id("cl_");
    let mut head = 0;
    let mut times = Vec::new();
    for chunk in ops.chunks(BATCH) {
        let body =
            json!({"clientId": client, "lastSeq": head, "ops": chunk, "leases": {"hold": []}});
        let t = Instant::now();
        let r = api.sync(doc, &body).await?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        expect_applied(&r, chunk.len())?;
        // The reply pages the log; the next request asks from the head it reported.
        head = r["headSeq"].as_i64().unwrap_or(head);
    }
    Ok(times)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn other_line(prefix: &'static [&'static str; 3], mut lat: Vec<u64>) -> Line {
    percentiles_named(&mut lat, *prefix)
}

async fn placement(api: &Api) -> Result<Line> {
    let stop = Arc::new(AtomicBool::new(false));
    let other = other_editor(api.fresh_pool()?, stop.clone());
    let chain_doc = api.create_doc("bench hostile: deep chain").await?;
    let mut parent: Option<String> = None;
    let ops: Vec<Value> = (0..CHAIN)
        .map(|i| {
            let id = new_id("blk_");
            let op = insert_op(&id, parent.as_deref(), "a0", &format!("level {i}"));
            parent = Some(id);
            op
        })
        .collect();
    let t = Instant::now();
    let mut chain_times = send_batches(api, &chain_doc, ops).await?;
    let chain_s = t.elapsed().as_secs_f64();
    let unknown_doc = api.create_doc("bench hostile: unknown parents").await?;
    let ops: Vec<Value> = (0..UNKNOWN_PARENT_INSERTS)
        .map(|i| {
            insert_op(
                &new_id("blk_"),
                Some(&new_id("blk_gone_")),
                "a0",
                &format!("orphan {i}"),
            )
        })
        .collect();
    let mut unknown_times = send_batches(api, &unknown_doc, ops).await?;
    stop.store(true, Ordering::Release);
    let lat = other.await.map_err(|e| anyhow!("other editor: {e}"))??;
    let last: Vec<f64> = unknown_times.split_off(unknown_times.len().saturating_sub(10));
    Ok(Line::fields(vec![
        ("deep_chain_40000_s", json!(round3(chain_s))),
        (
            "deep_chain_sync_500_ms_p50",
            json!(round3(median(&mut chain_times))),
        ),
        (
            "unknown_parent_sync_500_ms_last10_p50",
            json!(round3(median(&mut last.clone()))),
        ),
    ])
    .append(other_line(
        &[
            "other_doc_sync_ms_p50",
            "other_doc_sync_ms_p99",
            "other_doc_sync_ms_max",
        ],
        lat,
    )))
}

async fn tags(api: &Api) -> Result<Line> {
    let doc = api.create_doc("bench hostile: tags").await?;
    let client = new_id("cl_");
    let blk = new_id("blk_");
    let r = api
        .sync(&doc, &json!({"clientId": client, "lastSeq": 0, "ops": [insert_op(&blk, None, "a0", "tags")]}))
        .await?;
    expect_applied(&r, 1)?;
    let text: String = (0..TAGS).map(|i| format!("#t{i} ")).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let other = other_editor(api.fresh_pool()?, stop.clone());
    let mut times = Vec::new();
    let mut head = r["headSeq"].as_i64().unwrap_or(1);
    for i in 0..TAG_EDITS {
        let content = format!("{i} {text}");
        let op = json!({"opId": new_id("op_"), "kind": "set_content", "blockId": blk,
                        "content": content, "baseVersion": 1 + i});
        let t = Instant::now();
        let r = api
            .sync(
                &doc,
                &json!({"clientId": client, "lastSeq": head, "ops": [op]}),
            )
            .await?;
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        head = r["headSeq"].as_i64().unwrap_or(head);
    }
    stop.store(true, Ordering::Release);
    let lat = other.await.map_err(|e| anyhow!("other editor: {e}"))??;
    Ok(Line::fields(vec![
        ("tags_per_bullet", json!(TAGS)),
        ("tag_edit_ms_p50", json!(round3(median(&mut times)))),
    ])
    .append(other_line(
        &[
            "tags_other_doc_sync_ms_p50",
            "tags_other_doc_sync_ms_p99",
            "tags_other_doc_sync_ms_max",
        ],
        lat,
    )))
}

async fn logins(env: &Env) -> Result<Line> {
    let Some(launcher) = env.launcher.clone() else {
        return Ok(Line::fields(vec![(
            "logins",
            json!("needs a server of its own"),
        )]));
    };
    let server = launcher
        .start_as_deployed(vec![(
            "DOCSYNC_AUTH__TRUST_FORWARDED_FOR".into(),
            "true".into(),
        )])
        .await?;
    let api = server.api()?;
    let pid = Some(server.pid);
    // A 1,000-bullet document to snapshot while the logins run.
    let doc = api
        .create_doc("bench hostile: snapshot during logins")
        .await?;
    let ops: Vec<Value> = (0..1_000)
        .map(|i| insert_op(&new_id("blk_"), None, "a0", &format!("b{i}")))
        .collect();
    send_batches(&api, &doc, ops).await?;
    let mut base = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        api.snapshot(&doc, None).await?;
        base.push(micros(t.elapsed()));
    }
    let rss_before = rss_kib(pid);
    let stop = Arc::new(AtomicBool::new(false));
    let (flag, reader) = (stop.clone(), api.fresh_pool()?);
    let snapshots = tokio::spawn(async move {
        let mut lat = Vec::new();
        let mut peak = 0;
        while !flag.load(Ordering::Acquire) {
            let t = Instant::now();
            reader.snapshot(&doc, None).await?;
            lat.push(micros(t.elapsed()));
            peak = peak.max(rss_kib(pid).unwrap_or(0));
        }
        Ok::<_, anyhow::Error>((lat, peak))
    });
    let attempts = (0..LOGINS).map(|i| {
        let api = api.fresh_pool();
        async move {
            let api = api?;
            let addr = format!("198.51.{}.{}", i / 250, i % 250 + 1);
            let body = json!({"username": format!("nobody{i}"), "password": "wrong guess"});
            api.post_anonymous("/auth/login", &body, &[("X-Forwarded-For", addr)])
                .await
        }
    });
    let statuses: Vec<Result<u16>> = futures::future::join_all(attempts).await;
    stop.store(true, Ordering::Release);
    let (during, peak) = snapshots.await.map_err(|e| anyhow!("snapshots: {e}"))??;
    let count = |s: u16| {
        statuses
            .iter()
            .filter(|r| matches!(r, Ok(x) if *x == s))
            .count()
    };
    Ok(Line::fields(vec![
        ("logins", json!(LOGINS)),
        ("logins_checked_401", json!(count(401))),
        ("logins_refused_busy_503", json!(count(503))),
        (
            "logins_rss_before_mib",
            json!(rss_before.map(|k| round3(k as f64 / 1024.0))),
        ),
        ("logins_rss_peak_mib", json!(round3(peak as f64 / 1024.0))),
    ])
    .append(percentiles_named(
        &mut base,
        [
            "snapshot_ms_p50_quiet",
            "snapshot_ms_p99_quiet",
            "snapshot_ms_max_quiet",
        ],
    ))
    .append(percentiles_named(
        &mut during.clone(),
        [
            "snapshot_ms_p50_logins",
            "snapshot_ms_p99_logins",
            "snapshot_ms_max_logins",
        ],
    )))
}

async fn write_budget(env: &Env) -> Result<Line> {
    let Some(launcher) = env.launcher.clone() else {
        return Ok(Line::fields(vec![(
            "write_budget",
            json!("needs a server of its own"),
        )]));
    };
    let server = launcher.start_as_deployed(Vec::new()).await?;
    let api = server.api()?;
    let size = || {
        std::fs::metadata(server.db_path())
            .map(|m| m.len())
            .unwrap_or(0)
            + std::fs::metadata(server.db_path().with_extension("db-wal"))
                .map(|m| m.len())
                .unwrap_or(0)
    };
    let client = new_id("cl_");
    let text = "y".repeat(99_000);
    let (mut ok, mut refused) = (0u64, 0u64);
    let before = size();
    let started = Instant::now();
    let mut after_burst: Option<(u64, Instant)> = None;
    let mut n = 0;
    while started.elapsed() < BUDGET_RUN {
        if after_burst.is_none() && started.elapsed() >= BUDGET_BURST {
            after_burst = Some((size(), Instant::now()));
        }
        // A fresh document now and then keeps the per-document size budget out of it.
        let doc = api
            .create_doc(&format!("bench hostile: budget {n}"))
            .await?;
        n += 1;
        for _ in 0..2 {
            let ops: Vec<Value> = (0..20)
                .map(|_| insert_op(&new_id("blk_"), None, "a0", &text))
                .collect();
            let body = json!({"clientId": client, "lastSeq": 0, "ops": ops}).to_string();
            match api.sync_status(&doc, body).await? {
                200 => ok += 1,
                429 => refused += 1,
                s => return Err(anyhow!("budget run: status {s}")),
            }
        }
    }
    let end = size();
    let burst = after_burst.map_or(end, |(s, _)| s).saturating_sub(before) as f64 / 1_048_576.0;
    let sustained = after_burst.map_or(0.0, |(s, at)| {
        end.saturating_sub(s) as f64 / 1_048_576.0 / at.elapsed().as_secs_f64()
    });
    Ok(Line::fields(vec![
        ("budget_syncs_accepted", json!(ok)),
        ("budget_syncs_refused_429", json!(refused)),
        ("budget_db_growth_first_10s_mib", json!(round3(burst))),
        ("budget_db_growth_after_mib_per_s", json!(round3(sustained))),
    ]))
}

pub async fn run(env: &Env) -> Result<Line> {
    let line = Scenario::Hostile
        .line()
        .append(placement(&env.api).await?)
        .append(tags(&env.api).await?)
        .append(logins(env).await?)
        // On a thread of its own: its blocking writes must not run inside this task, whose
        // cooperative budget, once spent, leaves the writer's answer pending for ever.
        .append(
            tokio::task::spawn_blocking(audit_cost)
                .await
                .map_err(|e| anyhow!("audit cost: {e}"))??,
        )
        .append(write_budget(env).await?);
    Ok(line)
}

/// The audit row of a login against the login's own server time (mean ms of each part).
fn audit_cost() -> Result<Line> {
    use docsync_actors::storage::audit::{self, actions, AuditEvent};
    use docsync_actors::storage::{accounts, Backend, Storage, StorageConfig, Synchronous};
    const N: u32 = 200;
    let dir = std::env::temp_dir().join(format!("docsync-bench-audit-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let config = StorageConfig {
        backend: Backend::Sqlite,
        path: dir.join("audit.db"),
        // As deployed.
        synchronous: Synchronous::Full,
        read_pool_size: 1,
        group_commit_max: 1,
        cache_kib: 16 * 1024,
        metrics: None,
    };
    let (storage, writer) = Storage::open(&config)?;
    let user = storage.write_blocking(|c| accounts::create_user(c, "ann", "Ann", false, 1))?;
    let event = |action| AuditEvent {
        actor_name: Some("ann".into()),
        action,
        target: "user:ann".into(),
        ip: "198.51.100.7".into(),
        detail: json!({"method": "password"}),
        ..Default::default()
    };
    let mean_ms = |t: Instant, n: u32| t.elapsed().as_secs_f64() * 1000.0 / f64::from(n);
    // A failed login: its row is a transaction of its own.
    let t = Instant::now();
    for i in 0..N {
        let e = event(actions::LOGIN_FAILED);
        storage.write_blocking(move |c| audit::record(c, i64::from(i), &e))?;
    }
    let failed_row = mean_ms(t, N);
    // A good login: the session alone, then the session with its row.
    let uid = user.id.clone();
    let t = Instant::now();
    for i in 0..N {
        let u = uid.clone();
        storage.write_blocking(move |c| {
            accounts::create_login_session(c, &u, i64::from(i), 1000, "b")
        })?;
    }
    let session = mean_ms(t, N);
    let t = Instant::now();
    for i in 0..N {
        let (u, e) = (uid.clone(), event(actions::LOGIN_OK));
        storage.write_blocking(move |c| {
            accounts::create_login_session(c, &u, i64::from(i), 1000, "b")?;
            audit::record(c, i64::from(i), &e)
        })?;
    }
    let session_and_row = mean_ms(t, N);
    drop(storage);
    let _ = writer.join();
    let _ = std::fs::remove_dir_all(&dir);
    // The argon2 run every login attempt makes (the server's parameters).
    let runs = 20;
    let t = Instant::now();
    for _ in 0..runs {
        docsync::auth::password::verify_dummy("wrong guess");
    }
    let argon2 = mean_ms(t, runs);
    let failed_login = argon2 + failed_row;
    let good_login = argon2 + session_and_row;
    let added = (session_and_row - session).max(0.0);
    Ok(Line::fields(vec![
        ("login_argon2_ms", json!(round3(argon2))),
        ("login_failed_audit_commit_ms", json!(round3(failed_row))),
        (
            "login_failed_audit_share_pct",
            json!(round3(failed_row / failed_login * 100.0)),
        ),
        ("login_ok_session_commit_ms", json!(round3(session))),
        ("login_ok_audit_row_added_ms", json!(round3(added))),
        (
            "login_ok_audit_share_pct",
            json!(round3(added / good_login * 100.0)),
        ),
    ]))
}
