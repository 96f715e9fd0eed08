//! `docsync-bench`: a load generator for the docsync HTTP API (PROTOCOL.md §2–§3).
//!
//! By default it starts its own server (the release `docsync` binary next to this one) on a
//! fresh temporary database bound to 127.0.0.1 with port 0, creates a user `bench`, runs the
//! chosen scenarios against it and kills the server at the end. With `--target URL --token T`
//! it uses an existing server instead (then server memory is not measured).
//!
//! Scenarios (`--scenario all|hot|many|snapshot|idle`; `all` runs idle_actors first, then the
//! others in the order below):
//! - `hot_doc`: one document, 10 clients; each inserts its own block, then loops
//!   `set_content` on it (holding its lease), one request in flight per client.
//! - `many_docs`: 200 documents, one such client each, all at once.
//! - `snapshot_10k`: a document with 10,000 blocks (every 10th nested), then 50 sequential
//!   `GET /snapshot` requests.
//! - `idle_actors`: 1,000 small documents opened (create, 5 inserts, snapshot); the server's
//!   RSS before and after gives the memory per open document actor (an upper bound: it also
//!   holds whatever the server cached for those documents, e.g. SQLite pages).
//!
//! Output: exactly one JSON line per scenario on stdout (progress and warnings go to stderr).
//! Latencies (`p50_ms`, `p99_ms`, `max_ms`) are client-side, request start → full response
//! body. `acked_syncs` counts 2xx `/sync` replies inside the measured window; `ops_per_s`
//! counts op results returned; `conflicts` counts op results that were not `applied`;
//! `errors` counts transport failures and non-2xx replies. `server_rss_kib` is the server's
//! VmRSS after the scenario (null when the server is not ours). `snapshot_10k` has only 50
//! samples (its p99 is its max); its `bytes` is the body size and `server_ms` the median
//! `Server-Timing` `dur` (null if the server sends no such header). A scenario that cannot set
//! itself up prints `{"scenario": …, "error": …}` and the bench exits with status 1.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, ValueEnum};
use docsync_actors::collab::order_key::n_keys_between;
use futures::stream::{self, StreamExt, TryStreamExt};
use serde_json::{json, Value};

const HOT_CLIENTS: usize = 10;
const MANY_DOCS: usize = 200;
const SNAPSHOT_BLOCKS: usize = 10_000;
const SNAPSHOT_BATCH: usize = 500;
const SNAPSHOT_GETS: usize = 50;
const IDLE_DOCS: usize = 1_000;
const IDLE_WARMUP_DOCS: usize = 20;
const IDLE_BLOCKS: usize = 5;
/// Parallel requests during setup phases (creating documents and the like).
const SETUP_PARALLELISM: usize = 16;
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
const SERVER_START_TIMEOUT: Duration = Duration::from_secs(30);

#[derive(Parser, Debug)]
#[command(about = "Load generator for the docsync server; one JSON line per scenario")]
struct Args {
    /// The `docsync` binary to start (default: the one next to this executable).
    #[arg(long)]
    server_bin: Option<PathBuf>,
    /// Use a running server at this base URL (e.g. http://127.0.0.1:8080) instead.
    #[arg(long, requires = "token")]
    target: Option<String>,
    /// Bearer token for --target.
    #[arg(long, requires = "target")]
    token: Option<String>,
    #[arg(long, value_enum, default_value_t = ScenarioArg::All)]
    scenario: ScenarioArg,
    /// Measured time of the hot_doc and many_docs loops.
    #[arg(long, default_value_t = 10.0)]
    duration_secs: f64,
    /// `storage.synchronous` of the server we start.
    #[arg(long, value_enum, default_value_t = SyncMode::Full)]
    synchronous: SyncMode,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ScenarioArg {
    All,
    Hot,
    Many,
    Snapshot,
    Idle,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum SyncMode {
    Full,
    Normal,
}

impl SyncMode {
    fn as_str(self) -> &'static str {
        match self {
            SyncMode::Full => "full",
            SyncMode::Normal => "normal",
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Scenario {
    HotDoc,
    ManyDocs,
    Snapshot10k,
    IdleActors,
}

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Scenario::HotDoc => "hot_doc",
            Scenario::ManyDocs => "many_docs",
            Scenario::Snapshot10k => "snapshot_10k",
            Scenario::IdleActors => "idle_actors",
        }
    }

    fn selected(arg: ScenarioArg) -> Vec<Scenario> {
        match arg {
            // idle_actors goes first: on a heap that earlier scenarios grew and freed, new
            // actors reuse freed memory and the RSS difference says little.
            ScenarioArg::All => vec![
                Scenario::IdleActors,
                Scenario::HotDoc,
                Scenario::ManyDocs,
                Scenario::Snapshot10k,
            ],
            ScenarioArg::Hot => vec![Scenario::HotDoc],
            ScenarioArg::Many => vec![Scenario::ManyDocs],
            ScenarioArg::Snapshot => vec![Scenario::Snapshot10k],
            ScenarioArg::Idle => vec![Scenario::IdleActors],
        }
    }
}

fn main() {
    let args = Args::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    match runtime.block_on(run(args)) {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("docsync-bench: {e:#}");
            std::process::exit(2);
        }
    }
}

/// Runs the selected scenarios; `Ok(false)` when at least one of them failed.
async fn run(args: Args) -> Result<bool> {
    if !(args.duration_secs > 0.0 && args.duration_secs <= 3600.0) {
        bail!("--duration-secs must be in (0, 3600]");
    }
    // Dropping `server` kills it and removes its temporary directory.
    let (api, server) = match (&args.target, &args.token) {
        (Some(url), Some(token)) => (Api::new(url, token, false)?, None),
        _ => {
            let bin = server_binary(args.server_bin.as_deref())?;
            let server = LocalServer::start(&bin, args.synchronous)?;
            let api = Api::new(&server.base_url, &server.token, true)?;
            (api, Some(server))
        }
    };
    let pid = server.as_ref().map(|s| s.pid);
    let duration = Duration::from_secs_f64(args.duration_secs);
    let mut all_ok = true;
    for scenario in Scenario::selected(args.scenario) {
        eprintln!("docsync-bench: running {}", scenario.name());
        let outcome = tokio::select! {
            r = run_scenario(scenario, &api, duration, pid) => r,
            _ = tokio::signal::ctrl_c() => {
                eprintln!("docsync-bench: interrupted");
                drop(server);
                std::process::exit(130);
            }
        };
        let line = match outcome {
            Ok(line) => line,
            Err(e) => {
                all_ok = false;
                Line::new(scenario).with("error", format!("{e:#}"))
            }
        };
        println!("{line}");
    }
    drop(server);
    Ok(all_ok)
}

async fn run_scenario(
    scenario: Scenario,
    api: &Api,
    duration: Duration,
    pid: Option<u32>,
) -> Result<Line> {
    match scenario {
        Scenario::HotDoc => hot_doc(api, duration, pid).await,
        Scenario::ManyDocs => many_docs(api, duration, pid).await,
        Scenario::Snapshot10k => snapshot_10k(api, pid).await,
        Scenario::IdleActors => idle_actors(api, pid).await,
    }
}

// ---------------------------------------------------------------------------------------
// The server we start ourselves
// ---------------------------------------------------------------------------------------

fn server_binary(explicit: Option<&Path>) -> Result<PathBuf> {
    let bin = match explicit {
        Some(p) => p.to_path_buf(),
        None => std::env::current_exe()
            .context("locating this executable")?
            .parent()
            .ok_or_else(|| anyhow!("executable has no directory"))?
            .join("docsync"),
    };
    if !bin.is_file() {
        bail!(
            "server binary {} not found (build it with `cargo build --release --bin docsync` \
             or pass --server-bin)",
            bin.display()
        );
    }
    Ok(bin)
}

/// A `docsync serve` child process on a fresh temporary database.
struct LocalServer {
    child: Child,
    pid: u32,
    dir: PathBuf,
    base_url: String,
    token: String,
}

impl LocalServer {
    fn start(bin: &Path, sync: SyncMode) -> Result<LocalServer> {
        let dir = std::env::temp_dir().join(format!("docsync-bench-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let token = match create_user(bin, &dir, sync) {
            Ok(t) => t,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let mut child = server_command(bin, &dir, sync)
            .arg("serve")
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        let pid = child.id();
        let stdout = child.stdout.take().expect("piped stdout");
        // The server is owned from here on, so a failure below still kills it.
        let mut server = LocalServer {
            child,
            pid,
            dir,
            base_url: String::new(),
            token,
        };
        server.base_url = wait_for_listen_line(stdout, &mut server.child)?;
        ensure_loopback(&server.base_url)?;
        eprintln!(
            "docsync-bench: server pid {pid} at {} (synchronous={})",
            server.base_url,
            sync.as_str()
        );
        Ok(server)
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `docsync` with the bench's environment; run in the temp dir so no `config/local.toml`
/// of the caller's working directory is picked up.
fn server_command(bin: &Path, dir: &Path, sync: SyncMode) -> Command {
    let mut cmd = Command::new(bin);
    cmd.current_dir(dir)
        .env_remove("RUST_LOG")
        .env("DOCSYNC_SERVER__BIND", "127.0.0.1:0")
        .env("DOCSYNC_STORAGE__PATH", dir.join("docsync.db"))
        .env("DOCSYNC_STORAGE__SYNCHRONOUS", sync.as_str())
        .env("DOCSYNC_LOGGING__LEVEL", "warn")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit());
    cmd
}

fn create_user(bin: &Path, dir: &Path, sync: SyncMode) -> Result<String> {
    let out = server_command(bin, dir, sync)
        .args(["user", "add", "bench"])
        .stderr(Stdio::piped())
        .output()
        .context("running `docsync user add bench`")?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        bail!(
            "`docsync user add bench` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("token: "))
        .map(|t| t.trim().to_string())
        .ok_or_else(|| anyhow!("no `token:` line in `docsync user add` output: {stdout}"))
}

/// Reads the server's stdout until `docsync listening on http://…`; a thread keeps draining
/// it afterwards so the server never blocks on a full pipe.
fn wait_for_listen_line(stdout: std::process::ChildStdout, child: &mut Child) -> Result<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut sent = false;
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if !sent {
                if let Some(url) = line.strip_prefix("docsync listening on ") {
                    sent = tx.send(url.trim().to_string()).is_ok();
                }
            }
        }
    });
    let deadline = Instant::now() + SERVER_START_TIMEOUT;
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(url) => return Ok(url),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let status = child.wait()?;
                bail!("server exited before listening ({status})");
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Some(status) = child.try_wait()? {
                    bail!("server exited before listening ({status})");
                }
                if Instant::now() > deadline {
                    bail!(
                        "server did not print its listening line within {SERVER_START_TIMEOUT:?}"
                    );
                }
            }
        }
    }
}

fn ensure_loopback(url: &str) -> Result<()> {
    let host = url
        .strip_prefix("http://")
        .and_then(|rest| rest.rsplit_once(':'))
        .map(|(host, _port)| host)
        .ok_or_else(|| anyhow!("unexpected listen address {url}"))?;
    match host {
        "127.0.0.1" | "localhost" | "[::1]" => Ok(()),
        _ => bail!("server listens on {url}, not on loopback; refusing to send load there"),
    }
}

/// The server's resident set size in KiB (`VmRSS` of `/proc/<pid>/status`).
fn rss_kib(pid: Option<u32>) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", pid?)).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

// ---------------------------------------------------------------------------------------
// HTTP API client
// ---------------------------------------------------------------------------------------

#[derive(Clone)]
struct Api {
    http: reqwest::Client,
    base: Arc<str>,
    auth: Arc<str>,
}

/// One `GET /snapshot`: body size, the parsed body, and `Server-Timing` duration if sent.
struct SnapshotReply {
    bytes: usize,
    body: Value,
    server_ms: Option<f64>,
}

impl Api {
    fn new(base_url: &str, token: &str, local: bool) -> Result<Api> {
        let mut builder = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .pool_max_idle_per_host(256)
            .tcp_nodelay(true);
        if local {
            // Our own server is on loopback: never route it through an HTTP proxy.
            builder = builder.no_proxy();
        }
        Ok(Api {
            http: builder.build()?,
            base: format!("{}/api/v1", base_url.trim_end_matches('/')).into(),
            auth: format!("Bearer {token}").into(),
        })
    }

    async fn create_doc(&self, title: &str) -> Result<String> {
        let reply = self
            .send(
                self.http
                    .post(format!("{}/docs", self.base))
                    .json(&json!({ "title": title })),
            )
            .await?;
        let body: Value = serde_json::from_slice(&reply)?;
        body["docId"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| anyhow!("no docId in {body}"))
    }

    async fn sync(&self, doc_id: &str, request: &Value) -> Result<Value> {
        let url = format!("{}/docs/{doc_id}/sync", self.base);
        let reply = self.send(self.http.post(url).json(request)).await?;
        Ok(serde_json::from_slice(&reply)?)
    }

    async fn snapshot(&self, doc_id: &str, client_id: Option<&str>) -> Result<SnapshotReply> {
        let mut req = self
            .http
            .get(format!("{}/docs/{doc_id}/snapshot", self.base));
        if let Some(c) = client_id {
            req = req.query(&[("clientId", c)]);
        }
        let resp = self.checked(req).await?;
        let server_ms = resp
            .headers()
            .get("server-timing")
            .and_then(|h| h.to_str().ok())
            .and_then(parse_server_timing);
        let bytes = resp.bytes().await?;
        Ok(SnapshotReply {
            bytes: bytes.len(),
            body: serde_json::from_slice(&bytes)?,
            server_ms,
        })
    }

    async fn send(&self, req: reqwest::RequestBuilder) -> Result<Vec<u8>> {
        Ok(self.checked(req).await?.bytes().await?.to_vec())
    }

    /// Sends with auth; a non-2xx status becomes an error naming status and body.
    async fn checked(&self, req: reqwest::RequestBuilder) -> Result<reqwest::Response> {
        let resp = req.header("Authorization", &*self.auth).send().await?;
        let status = resp.status();
        if status.is_success() {
            return Ok(resp);
        }
        let body = resp.text().await.unwrap_or_default();
        let body: String = body.chars().take(300).collect();
        bail!("HTTP {status}: {body}")
    }
}

/// The first `dur=` value of a `Server-Timing` header, in milliseconds.
fn parse_server_timing(header: &str) -> Option<f64> {
    header
        .split([',', ';'])
        .find_map(|part| part.trim().strip_prefix("dur="))
        .and_then(|v| v.trim().parse().ok())
}

fn new_id(prefix: &str) -> String {
    format!("{prefix}{}", uuid::Uuid::new_v4())
}

fn insert_op(block_id: &str, parent_id: Option<&str>, order_key: &str, content: &str) -> Value {
    json!({
        "opId": new_id("op_"),
        "kind": "insert",
        "blockId": block_id,
        "parentId": parent_id,
        "orderKey": order_key,
        "content": content,
    })
}

/// Checks that every op result of a setup sync is `applied`.
fn expect_applied(reply: &Value, expected: usize) -> Result<()> {
    let results = reply["results"]
        .as_array()
        .ok_or_else(|| anyhow!("sync reply without results"))?;
    if results.len() != expected {
        bail!("{} results for {expected} ops", results.len());
    }
    match results.iter().find(|r| r["status"] != "applied") {
        Some(bad) => bail!("setup op not applied: {bad}"),
        None => Ok(()),
    }
}

/// Runs `f` over `items` with bounded parallelism, failing on the first error.
async fn in_parallel<T, R, F, Fut>(items: Vec<T>, f: F) -> Result<Vec<R>>
where
    F: Fn(T) -> Fut,
    Fut: std::future::Future<Output = Result<R>>,
{
    stream::iter(items.into_iter().map(f))
        .buffer_unordered(SETUP_PARALLELISM)
        .try_collect()
        .await
}

// ---------------------------------------------------------------------------------------
// Statistics
// ---------------------------------------------------------------------------------------

#[derive(Default)]
struct Stats {
    latencies_us: Vec<u64>,
    acked_syncs: u64,
    ops: u64,
    conflicts: u64,
    errors: u64,
}

impl Stats {
    fn merge(&mut self, other: Stats) {
        self.latencies_us.extend(other.latencies_us);
        self.acked_syncs += other.acked_syncs;
        self.ops += other.ops;
        self.conflicts += other.conflicts;
        self.errors += other.errors;
    }
}

/// One output line: a JSON object whose fields keep the order they were added in.
struct Line(Vec<(&'static str, Value)>);

impl Line {
    fn new(scenario: Scenario) -> Line {
        Line(vec![("scenario", json!(scenario.name()))])
    }

    fn with(mut self, key: &'static str, value: impl Into<Value>) -> Line {
        self.0.push((key, value.into()));
        self
    }

    fn append(mut self, other: Line) -> Line {
        self.0.extend(other.0);
        self
    }
}

impl std::fmt::Display for Line {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("{")?;
        for (i, (key, value)) in self.0.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(f, "{sep}{}:{value}", Value::from(*key))?;
        }
        f.write_str("}")
    }
}

/// p50 / p99 / max in milliseconds (nearest rank); nulls when there are no samples.
fn percentiles(latencies_us: &mut [u64]) -> Line {
    latencies_us.sort_unstable();
    let rank = |p: f64| -> Value {
        if latencies_us.is_empty() {
            return Value::Null;
        }
        let idx = ((p / 100.0 * latencies_us.len() as f64).ceil() as usize).max(1) - 1;
        json!(round3(latencies_us[idx] as f64 / 1000.0))
    };
    Line(vec![
        ("p50_ms", rank(50.0)),
        ("p99_ms", rank(99.0)),
        ("max_ms", rank(100.0)),
    ])
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn micros(d: Duration) -> u64 {
    d.as_micros().min(u64::MAX as u128) as u64
}

// ---------------------------------------------------------------------------------------
// hot_doc and many_docs: clients that keep editing their own block
// ---------------------------------------------------------------------------------------

/// One simulated editor tab: its own block in a document, the version it last saw.
struct Editor {
    api: Api,
    doc_id: String,
    client_id: String,
    block_id: String,
    version: i64,
    last_seq: i64,
    edits: u64,
}

impl Editor {
    /// Joins `doc_id` and inserts the editor's block (setup; not measured).
    async fn join(api: Api, doc_id: String, index: usize) -> Result<Editor> {
        let mut editor = Editor {
            api,
            doc_id,
            client_id: new_id("cl_"),
            block_id: new_id("blk_"),
            version: 1,
            last_seq: 0,
            edits: 0,
        };
        // Client `index` takes the `index`-th top-level key, so the blocks of one document
        // get distinct keys without coordination.
        let key = n_keys_between(None, None, index + 1)?
            .pop()
            .expect("one key");
        let op = insert_op(&editor.block_id, None, &key, &format!("client {index}"));
        let reply = editor.request(vec![op]).await?;
        expect_applied(&reply, 1)?;
        editor.absorb(&reply);
        Ok(editor)
    }

    async fn request(&self, ops: Vec<Value>) -> Result<Value> {
        let body = json!({
            "clientId": self.client_id,
            "lastSeq": self.last_seq,
            "ops": ops,
            "leases": { "hold": [self.block_id] },
        });
        self.api.sync(&self.doc_id, &body).await
    }

    /// Follows the log (`lastSeq`) and the own block's version from a sync reply.
    fn absorb(&mut self, reply: &Value) {
        let entries = reply["ops"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let has_more = reply["hasMore"].as_bool().unwrap_or(false);
        let last_entry = entries.last().and_then(|e| e["seq"].as_i64());
        self.last_seq = match (has_more, last_entry) {
            (true, Some(seq)) => seq,
            _ => reply["headSeq"].as_i64().unwrap_or(self.last_seq),
        };
        // Log effects carry the resulting block, so they are authoritative for the version.
        for effect in entries
            .iter()
            .flat_map(|e| e["effects"].as_array().into_iter().flatten())
        {
            let block = &effect["block"];
            if block["id"] == self.block_id.as_str() {
                if let Some(v) = block["version"].as_i64() {
                    self.version = v;
                }
            }
        }
    }

    /// Edits until `deadline`, one request in flight at a time.
    async fn edit_until(mut self, deadline: Instant) -> Stats {
        let mut stats = Stats::default();
        while Instant::now() < deadline {
            self.edits += 1;
            let op = json!({
                "opId": new_id("op_"),
                "kind": "set_content",
                "blockId": self.block_id,
                "content": format!("{} edit {}", self.client_id, self.edits),
                "baseVersion": self.version,
            });
            let started = Instant::now();
            let reply = self.request(vec![op]).await;
            let latency = started.elapsed();
            match reply {
                Ok(reply) => {
                    stats.latencies_us.push(micros(latency));
                    stats.acked_syncs += 1;
                    self.count_results(&reply, &mut stats);
                    self.absorb(&reply);
                }
                Err(e) => {
                    stats.errors += 1;
                    if stats.errors <= 3 {
                        eprintln!("docsync-bench: sync error on {}: {e:#}", self.doc_id);
                    }
                    // Do not spin on a failing server.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
        stats
    }

    fn count_results(&mut self, reply: &Value, stats: &mut Stats) {
        for result in reply["results"].as_array().into_iter().flatten() {
            stats.ops += 1;
            if result["status"] == "applied" {
                if !result["seq"].is_null() {
                    self.version += 1;
                }
            } else {
                stats.conflicts += 1;
                if stats.conflicts <= 3 {
                    eprintln!("docsync-bench: non-applied result: {result}");
                }
            }
        }
    }
}

/// Joins one editor per entry of `doc_ids`, then lets them all edit for `duration`.
async fn run_editors(api: &Api, doc_ids: Vec<String>, duration: Duration) -> Result<(Stats, f64)> {
    let setups = doc_ids.into_iter().enumerate().collect();
    let editors = in_parallel(setups, |(i, d)| Editor::join(api.clone(), d, i)).await?;
    let started = Instant::now();
    let deadline = started + duration;
    let tasks: Vec<_> = editors
        .into_iter()
        .map(|e| tokio::spawn(e.edit_until(deadline)))
        .collect();
    let mut total = Stats::default();
    for task in tasks {
        total.merge(task.await?);
    }
    Ok((total, started.elapsed().as_secs_f64()))
}

fn editors_line(
    scenario: Scenario,
    clients: usize,
    mut stats: Stats,
    secs: f64,
    pid: Option<u32>,
) -> Line {
    Line::new(scenario)
        .with("clients", clients)
        .with("duration_s", round3(secs))
        .with("acked_syncs", stats.acked_syncs)
        .with("syncs_per_s", round3(stats.acked_syncs as f64 / secs))
        .with("ops_per_s", round3(stats.ops as f64 / secs))
        .append(percentiles(&mut stats.latencies_us))
        .with("conflicts", stats.conflicts)
        .with("errors", stats.errors)
        .with("server_rss_kib", rss_kib(pid))
}

async fn hot_doc(api: &Api, duration: Duration, pid: Option<u32>) -> Result<Line> {
    let doc = api.create_doc("bench hot_doc").await?;
    let (stats, secs) = run_editors(api, vec![doc; HOT_CLIENTS], duration).await?;
    Ok(editors_line(
        Scenario::HotDoc,
        HOT_CLIENTS,
        stats,
        secs,
        pid,
    ))
}

async fn many_docs(api: &Api, duration: Duration, pid: Option<u32>) -> Result<Line> {
    let docs = create_docs(api, MANY_DOCS, "bench many_docs").await?;
    let (stats, secs) = run_editors(api, docs, duration).await?;
    Ok(editors_line(
        Scenario::ManyDocs,
        MANY_DOCS,
        stats,
        secs,
        pid,
    ))
}

async fn create_docs(api: &Api, n: usize, title: &str) -> Result<Vec<String>> {
    in_parallel((0..n).collect(), |i| {
        let title = format!("{title} {i}");
        async move { api.create_doc(&title).await }
    })
    .await
}

// ---------------------------------------------------------------------------------------
// snapshot_10k
// ---------------------------------------------------------------------------------------

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

async fn snapshot_10k(api: &Api, pid: Option<u32>) -> Result<Line> {
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
    let mut server_ms = Vec::new();
    let mut bytes = 0;
    let mut blocks = 0;
    for _ in 0..SNAPSHOT_GETS {
        let started = Instant::now();
        let reply = api.snapshot(&doc, None).await?;
        latencies_us.push(micros(started.elapsed()));
        bytes = reply.bytes;
        blocks = reply.body["blocks"].as_array().map_or(0, Vec::len);
        server_ms.extend(reply.server_ms);
    }
    if blocks != SNAPSHOT_BLOCKS {
        bail!("snapshot has {blocks} blocks, expected {SNAPSHOT_BLOCKS}");
    }
    server_ms.sort_by(f64::total_cmp);
    Ok(Line::new(Scenario::Snapshot10k)
        .with("blocks", blocks)
        .with("requests", SNAPSHOT_GETS)
        .with("insert_s", round3(insert_s))
        .with("bytes", bytes)
        .append(percentiles(&mut latencies_us))
        .with("server_ms", server_ms.get(server_ms.len() / 2).copied())
        .with("errors", 0)
        .with("server_rss_kib", rss_kib(pid)))
}

// ---------------------------------------------------------------------------------------
// idle_actors
// ---------------------------------------------------------------------------------------

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

async fn idle_actors(api: &Api, pid: Option<u32>) -> Result<Line> {
    // Warm up first so one-time allocations (caches, buffers) are not charged to actors.
    open_small_docs(api, IDLE_WARMUP_DOCS).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = rss_kib(pid);
    let started = Instant::now();
    open_small_docs(api, IDLE_DOCS).await?;
    let open_s = started.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = rss_kib(pid);
    let per_actor = match (before, after) {
        (Some(b), Some(a)) => json!((a as i64 - b as i64) * 1024 / IDLE_DOCS as i64),
        _ => Value::Null,
    };
    Ok(Line::new(Scenario::IdleActors)
        .with("docs", IDLE_DOCS)
        .with("open_s", round3(open_s))
        .with("rss_before_kib", before)
        .with("rss_after_kib", after)
        .with("rss_per_actor_bytes", per_actor)
        .with("errors", 0)
        .with("server_rss_kib", after))
}
