//! `cluster`: docsync on PostgreSQL (a local one the bench starts: Debian's postgresql-15,
//! fsync on) with 1, 2 and 3 nodes. Editors each keep editing their own document and send
//! every request to the next node in turn (no proxy: the worst case, most requests
//! forwarded). Per node count: acknowledged syncs per second, CPU per acknowledged op of the
//! docsync nodes and of PostgreSQL apart, PostgreSQL transactions and row writes per op,
//! the forwarded fraction, RSS per node. Then `kill -9` of a document's owner under load,
//! several rounds: the longest pause in acknowledgements (p50, max).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use docsync_actors::storage::postgres::testing::TempPostgres;
use serde_json::{json, Value};

use crate::client::Api;
use crate::process::{cpu_secs, rss_kib};
use crate::server::{Launcher, LocalServer};
use crate::setup::new_id;
use crate::stats::{round3, Line};

use super::{Env, Scenario};

const EDITORS: usize = 12;
const FAILOVER_ROUNDS: usize = 5;
const SECRET: &str = "bench-cluster-secret-0123456789";

pub async fn run(env: &Env) -> Result<Line> {
    let launcher = env
        .launcher
        .clone()
        .ok_or_else(|| anyhow!("the cluster scenario starts its own servers (no --target)"))?;
    let mut line = Scenario::Cluster.line().with("editors", EDITORS);
    for (n, key) in [(1, "nodes_1"), (2, "nodes_2"), (3, "nodes_3")] {
        let figures = throughput(&launcher, n, env.duration).await?;
        line = line.with(key, figures);
    }
    let mut pauses = Vec::new();
    for _ in 0..FAILOVER_ROUNDS {
        pauses.push(failover(&launcher).await?);
    }
    pauses.sort_unstable();
    Ok(line.with(
        "kill9_failover_ms",
        json!({"p50": pauses[pauses.len() / 2], "max": pauses[pauses.len() - 1], "rounds": pauses}),
    ))
}

/// A PostgreSQL and `n` nodes on it; the token of the user `bench`.
pub(super) struct Cluster {
    pub(super) pg: Arc<TempPostgres>,
    pub(super) nodes: Vec<LocalServer>,
    pub(super) apis: Vec<Api>,
}

fn free_port() -> Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

pub(super) async fn start(launcher: &Launcher, n: usize) -> Result<Cluster> {
    let pg = Arc::new(tokio::task::spawn_blocking(TempPostgres::start).await?);
    let mut nodes = Vec::new();
    let mut token = String::new();
    for i in 0..n {
        let port = free_port()?;
        let addr = format!("127.0.0.1:{port}");
        let env: Vec<(String, String)> = [
            ("DOCSYNC_STORAGE__BACKEND", "postgres".to_string()),
            ("DOCSYNC_STORAGE__POSTGRES_URL", pg.url()),
            ("DOCSYNC_CLUSTER__NODE_ID", format!("node-{i}")),
            ("DOCSYNC_CLUSTER__INTERNAL_ADDR", addr.clone()),
            ("DOCSYNC_CLUSTER__SECRET", SECRET.to_string()),
            ("DOCSYNC_SERVER__BIND", addr),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let l = launcher.clone();
        let node = tokio::task::spawn_blocking(move || -> Result<(LocalServer, String)> {
            let dir = l.prepare_node(env, i == 0)?;
            let token = dir.user.token.clone();
            Ok((dir.serve()?, token))
        })
        .await??;
        if i == 0 {
            token = node.1;
        }
        nodes.push(node.0);
    }
    let mut apis = Vec::new();
    for node in &nodes {
        wait_ready(&node.base_url).await?;
        apis.push(Api::new(&node.base_url, &token, true)?);
    }
    Ok(Cluster { pg, nodes, apis })
}

async fn wait_ready(base: &str) -> Result<()> {
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let ok = http
            .get(format!("{base}/readyz"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success());
        if ok {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(anyhow!("{base} did not join the cluster within 30 s"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// CPU seconds used so far by PostgreSQL: the postmaster and every process it started.
pub(super) fn pg_cpu_secs(pg: &TempPostgres) -> f64 {
    let Some(root) = pg.postmaster_pid() else {
        return 0.0;
    };
    let mut total = cpu_secs(Some(root)).unwrap_or(0.0);
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for e in entries.flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let parent = std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(')')?
                        .1
                        .split_whitespace()
                        .nth(1)?
                        .parse::<u32>()
                        .ok()
                });
            if parent == Some(root) {
                total += cpu_secs(Some(pid)).unwrap_or(0.0);
            }
        }
    }
    total
}

/// PostgreSQL's committed transactions and written rows so far (`pg_stat_database`).
async fn pg_counters(pg: &Arc<TempPostgres>) -> Result<(i64, i64)> {
    let pg = pg.clone();
    tokio::task::spawn_blocking(move || -> Result<(i64, i64)> {
        let mut c = pg.client();
        let r = c.query_one(
            "SELECT xact_commit, tup_inserted + tup_updated + tup_deleted
               FROM pg_stat_database WHERE datname = current_database()",
            &[],
        )?;
        Ok((r.get(0), r.get(1)))
    })
    .await?
}

async fn forwarded(apis: &[Api], nodes: &[LocalServer]) -> u64 {
    let http = reqwest::Client::new();
    let mut total = 0;
    for (node, _) in nodes.iter().zip(apis) {
        let Ok(r) = http.get(format!("{}/metrics", node.base_url)).send().await else {
            continue;
        };
        let text = r.text().await.unwrap_or_default();
        total += text
            .lines()
            .find_map(|l| l.strip_prefix("docsync_requests_forwarded_total "))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .unwrap_or(0.0) as u64;
    }
    total
}

/// One editor: inserts its bullet, then edits it until `stop`, sending request k to node
/// `(start + k) % n`; every op is retried (same op ID) until acknowledged.
async fn edit(
    apis: Vec<Api>,
    doc: String,
    first: usize,
    stop: Arc<AtomicBool>,
    acked: Arc<AtomicU64>,
    ack_times: Arc<Mutex<Vec<Instant>>>,
) -> Result<()> {
    let (client, blk) = (new_id("cl_"), new_id("blk_"));
    let mut version = 0;
    let mut k = first;
    while !stop.load(Ordering::Relaxed) {
        let op = if version == 0 {
            json!({"opId": new_id("op_"), "kind": "insert", "blockId": blk, "parentId": Value::Null, "orderKey": "a0", "content": "0"})
        } else {
            json!({"opId": new_id("op_"), "kind": "set_content", "blockId": blk, "content": version.to_string(), "baseVersion": version})
        };
        let body = json!({"clientId": client, "lastSeq": 0, "ops": [op]});
        loop {
            let api = &apis[k % apis.len()];
            k += 1;
            match api.sync(&doc, &body).await {
                Ok(v) if v["results"][0]["status"] == "applied" => break,
                Ok(v) => return Err(anyhow!("not applied: {v}")),
                Err(_) if stop.load(Ordering::Relaxed) => return Ok(()),
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            }
        }
        acked.fetch_add(1, Ordering::Relaxed);
        ack_times.lock().unwrap().push(Instant::now());
        version += 1;
    }
    Ok(())
}

struct Load {
    stop: Arc<AtomicBool>,
    acked: Arc<AtomicU64>,
    ack_times: Arc<Mutex<Vec<Instant>>>,
    tasks: Vec<tokio::task::JoinHandle<Result<()>>>,
}

async fn load(c: &Cluster, editors: usize) -> Result<Load> {
    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicU64::new(0));
    let ack_times = Arc::new(Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for i in 0..editors {
        let doc = c.apis[0].create_doc(&format!("cluster {i}")).await?;
        tasks.push(tokio::spawn(edit(
            c.apis.clone(),
            doc,
            i,
            stop.clone(),
            acked.clone(),
            ack_times.clone(),
        )));
    }
    Ok(Load {
        stop,
        acked,
        ack_times,
        tasks,
    })
}

impl Load {
    async fn finish(self) -> Result<u64> {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.tasks {
            t.await??;
        }
        Ok(self.acked.load(Ordering::Relaxed))
    }
}

async fn throughput(launcher: &Launcher, n: usize, duration: Duration) -> Result<Value> {
    let c = start(launcher, n).await?;
    let l = load(&c, EDITORS).await?;
    // Warm: every document claimed and every editor past its insert.
    while l.acked.load(Ordering::Relaxed) < 2 * EDITORS as u64 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let pids: Vec<Option<u32>> = c.nodes.iter().map(|n| Some(n.pid)).collect();
    let cpu0: f64 = pids.iter().map(|p| cpu_secs(*p).unwrap_or(0.0)).sum();
    let pg_cpu0 = pg_cpu_secs(&c.pg);
    let (x0, w0) = pg_counters(&c.pg).await?;
    let f0 = forwarded(&c.apis, &c.nodes).await;
    let a0 = l.acked.load(Ordering::Relaxed);
    let started = Instant::now();
    tokio::time::sleep(duration).await;
    let ops = l.acked.load(Ordering::Relaxed) - a0;
    let secs = started.elapsed().as_secs_f64();
    let cpu: f64 = pids
        .iter()
        .map(|p| cpu_secs(*p).unwrap_or(0.0))
        .sum::<f64>()
        - cpu0;
    let pg_cpu = pg_cpu_secs(&c.pg) - pg_cpu0;
    let (x1, w1) = pg_counters(&c.pg).await?;
    let f1 = forwarded(&c.apis, &c.nodes).await;
    let rss: Vec<u64> = pids.iter().filter_map(|p| rss_kib(*p)).collect();
    l.finish().await.context("editors")?;
    let per_op = |v: f64| round3(v / ops.max(1) as f64);
    Ok(json!({
        "acked_syncs_per_s": round3(ops as f64 / secs),
        "docsync_cpu_ms_per_op": per_op(cpu * 1000.0),
        "postgres_cpu_ms_per_op": per_op(pg_cpu * 1000.0),
        "postgres_transactions_per_op": per_op((x1 - x0) as f64),
        "postgres_row_writes_per_op": per_op((w1 - w0) as f64),
        "forwarded_fraction": per_op((f1 - f0) as f64),
        "rss_kib_per_node": rss,
    }))
}

/// One round: three nodes, editors through all of them, `kill -9` of the node owning the
/// first document; the longest pause in acknowledgements after the kill, in ms.
async fn failover(launcher: &Launcher) -> Result<u64> {
    let mut c = start(launcher, 3).await?;
    let l = load(&c, 3).await?;
    while l.acked.load(Ordering::Relaxed) < 30 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // The owner of most documents is as good as any: kill node 0's process if it owns one,
    // else the first node that does.
    let pg = c.pg.clone();
    let owners: Vec<String> = tokio::task::spawn_blocking(move || -> Result<Vec<String>> {
        let mut db = pg.client();
        Ok(db
            .query(
                "SELECT n.node_id FROM documents d JOIN nodes n ON n.inc = d.owner_inc",
                &[],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect())
    })
    .await??;
    let victim = owners
        .first()
        .and_then(|o| o.strip_prefix("node-")?.parse::<usize>().ok())
        .ok_or_else(|| anyhow!("no document has an owner"))?;
    let before = l.acked.load(Ordering::Relaxed);
    let killed = Instant::now();
    drop(c.nodes.remove(victim));
    while l.acked.load(Ordering::Relaxed) < before + 30 {
        if killed.elapsed() > Duration::from_secs(60) {
            return Err(anyhow!("acknowledgements did not resume after the kill"));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut times: Vec<Instant> = l
        .ack_times
        .lock()
        .unwrap()
        .iter()
        .copied()
        .filter(|t| *t >= killed)
        .collect();
    times.sort();
    let mut last = killed;
    let mut longest = Duration::ZERO;
    for t in times {
        longest = longest.max(t - last);
        last = t;
    }
    l.finish().await?;
    Ok(longest.as_millis() as u64)
}
