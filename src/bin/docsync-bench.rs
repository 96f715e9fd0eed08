//! `docsync-bench`: a load generator for the docsync HTTP API (PROTOCOL.md §2–§4, §6).
//!
//! By default it starts its own server (the release `docsync` binary next to this one) on a
//! fresh temporary database bound to 127.0.0.1 with port 0 (compaction never runs by itself:
//! `compaction.run_at_start = false`), creates a user `bench`, runs the chosen scenarios
//! against it and kills the server at the end. `idle_subscribers` and `compaction` start
//! servers of their own as well, on fresh databases. With `--target URL --token T` it uses an
//! existing server instead (then server memory is not measured and `compaction` cannot run).
//! It raises its own open-file limit to the hard limit first (the servers inherit it).
//!
//! Scenarios (`--scenario all|idle|idle-subscribers|hot|many|snapshot|wakeup|compaction`; the
//! names of the output lines work too; `all` runs them in this order):
//! - `idle_actors`: 1,000 small documents opened (create, 5 inserts, snapshot); the server's
//!   RSS before and after gives the memory per open document actor (an upper bound: it also
//!   holds whatever the server cached for those documents, e.g. SQLite pages).
//! - `idle_subscribers`: one line per channel (`websocket`, `longpoll`), each on a server of
//!   its own: 100 documents, 100 warm-up subscribers, then 10,000 idle subscribers spread over
//!   the documents, opened 500 at a time (at most 64 connecting at once), each batch waited for
//!   until the server's `docsync_subscribers` gauge counts it. WebSocket sessions JOIN one
//!   document each and PING every 15 s; long-polls use `wait=25` and are re-issued when they
//!   return. `bytes_per_subscriber` = RSS growth over the 10,000 / 10,000; `rss_closed_kib` and
//!   `server_counted_after_close` are the RSS and the gauge 1 s after all were closed.
//! - `hot_doc`: one document, 10 clients; each inserts its own block, then loops
//!   `set_content` on it (holding its lease), one request in flight per client.
//! - `many_docs`: 200 documents, one such client each, all at once.
//! - `snapshot_10k`: a document with 10,000 blocks (every 10th nested), then 50 sequential
//!   `GET /snapshot` requests.
//! - `wakeup`: one line per (channel, subscribers) for `websocket`, `sse`, `longpoll` with 2
//!   and 100 subscribers on one fresh document; one writer does 200 sequential `set_content`
//!   syncs, 20 ms apart. For every acknowledged sync and every subscriber, the wake-up latency
//!   is from the writer receiving the sync reply to that subscriber receiving the first event
//!   (WebSocket `DOC_SEQ`, SSE `doc_seq`, long-poll answer) with at least that sync's
//!   `headSeq`. Long-pollers re-poll at once with `since` = the last headSeq; a write counts
//!   for a long-poller only if its poll was sent before the writer sent that sync
//!   (`not_waiting` counts the others).
//! - `compaction`: a server on a database prepared before it starts: 1,000 documents with
//!   1,000 log rows each, all 60 days old, written straight into the migrated database. One
//!   editor on a fresh document syncs `set_content` back to back: 3 s alone (`baseline_*`),
//!   then during one `POST /api/v1/admin/compact` pass (`pass_*`; syncs sent before the pass
//!   answered). `summary` is the pass's own answer; `commits`, `commit_mean_ms`,
//!   `commits_over_50ms` and `jobs_per_commit` come from the server's SQLite writer metrics
//!   over the pass; `within_target` says whether `pass_p99_ms` < 50.
//!
//! Output: exactly one JSON line per scenario (per configuration for `idle_subscribers` and
//! `wakeup`) on stdout; progress and warnings go to stderr. Latencies (`p50_ms`, `p99_ms`,
//! `max_ms`, and the prefixed ones) are nearest-rank percentiles in milliseconds; for syncs
//! and snapshots they are client-side, request start → full response body. `acked_syncs`
//! counts 2xx `/sync` replies inside the measured window; `ops_per_s` counts op results
//! returned; `conflicts` counts op results that were not `applied`; `errors` counts transport
//! failures, non-2xx replies and subscribers that failed. `server_rss_kib` is the server's
//! VmRSS after the scenario (null when the server is not ours). `snapshot_10k` has only 50
//! samples (its p99 is its max); its `bytes` is the body size and `server_p50_ms` /
//! `server_p99_ms` come from the replies' `Server-Timing: app;dur=…` (null without it).
//! `wakeup`: `samples` = writes × subscribers that were measured; `p50_ms`/`p99_ms`/`max_ms`
//! are signed: negative when the event arrived before the writer had its reply (the server
//! wakes subscribers and answers the writer after the same commit), `before_ack` counts
//! those; `from_send_*` is measured from the writer sending its sync instead (includes the
//! commit); `missed` counts writes a subscriber never heard of; `sync_*` is the writer's own
//! sync latency. A scenario that cannot set itself up prints `{"scenario": …, "error": …}`
//! (with `channel`/`subscribers` where it has them) and the bench exits with status 1.

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
use futures::SinkExt;
use rusqlite::params;
use serde_json::{json, Value};
use tokio::sync::watch;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

const HOT_CLIENTS: usize = 10;
const MANY_DOCS: usize = 200;
const SNAPSHOT_BLOCKS: usize = 10_000;
const SNAPSHOT_BATCH: usize = 500;
const SNAPSHOT_GETS: usize = 50;
const IDLE_DOCS: usize = 1_000;
const IDLE_WARMUP_DOCS: usize = 20;
const IDLE_BLOCKS: usize = 5;
const IDLE_SUB_DOCS: usize = 100;
const IDLE_SUBSCRIBERS: usize = 10_000;
const IDLE_SUB_WARMUP: usize = 100;
/// Subscribers opened before waiting for the server to count them.
const IDLE_SUB_BATCH: usize = 500;
/// Connections being opened at once while building up idle subscribers.
const CONNECT_PARALLELISM: usize = 64;
const WAKE_SUBSCRIBERS: [usize; 2] = [2, 100];
const WAKE_WRITES: usize = 200;
const WAKE_PAUSE: Duration = Duration::from_millis(20);
/// Time for the last events to arrive after the last write.
const WAKE_DRAIN: Duration = Duration::from_millis(500);
const COMPACT_DOCS: usize = 1_000;
const COMPACT_ROWS_PER_DOC: i64 = 1_000;
const COMPACT_AGE_DAYS: i64 = 60;
const COMPACT_BASELINE: Duration = Duration::from_secs(3);
const COMPACT_TARGET_P99_MS: f64 = 50.0;
const COMPACT_TIMEOUT: Duration = Duration::from_secs(600);
const PING_EVERY: Duration = Duration::from_secs(15);
const LONGPOLL_WAIT_S: i64 = 25;
/// How long the server may take to count subscribers we opened.
const SUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(20);
/// How long a listener may take to stop once told to.
const LISTENER_STOP_TIMEOUT: Duration = Duration::from_secs(30);
/// Parallel requests during setup phases (creating documents and the like).
const SETUP_PARALLELISM: usize = 16;
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Whole-response limit for event streams (reqwest's timeout covers the body too).
const STREAM_TIMEOUT: Duration = Duration::from_secs(3600);
const SERVER_START_TIMEOUT: Duration = Duration::from_secs(30);
const DAY_MS: i64 = 86_400_000;

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
    /// `storage.synchronous` of the servers we start.
    #[arg(long, value_enum, default_value_t = SyncMode::Full)]
    synchronous: SyncMode,
    /// `storage.cache_kib` (SQLite page cache per connection) of the servers we start;
    /// a small value isolates the actors' own memory in `idle_actors`.
    #[arg(long)]
    cache_kib: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ScenarioArg {
    All,
    #[value(alias = "hot_doc")]
    Hot,
    #[value(alias = "many_docs")]
    Many,
    #[value(alias = "snapshot_10k")]
    Snapshot,
    #[value(alias = "idle_actors")]
    Idle,
    #[value(alias = "idle_subscribers")]
    IdleSubscribers,
    Wakeup,
    Compaction,
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

/// A wake-up channel (PROTOCOL §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Channel {
    WebSocket,
    Sse,
    LongPoll,
}

impl Channel {
    const ALL: [Channel; 3] = [Channel::WebSocket, Channel::Sse, Channel::LongPoll];

    fn name(self) -> &'static str {
        match self {
            Channel::WebSocket => "websocket",
            Channel::Sse => "sse",
            Channel::LongPoll => "longpoll",
        }
    }

    /// The `channel` label of the server's `docsync_subscribers` gauge.
    fn metric_label(self) -> &'static str {
        match self {
            Channel::WebSocket => "websocket",
            Channel::Sse => "sse",
            Channel::LongPoll => "long_poll",
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Scenario {
    HotDoc,
    ManyDocs,
    Snapshot10k,
    IdleActors,
    IdleSubscribers(Channel),
    /// Channel and number of subscribers.
    Wakeup(Channel, usize),
    Compaction,
}

impl Scenario {
    fn name(self) -> &'static str {
        match self {
            Scenario::HotDoc => "hot_doc",
            Scenario::ManyDocs => "many_docs",
            Scenario::Snapshot10k => "snapshot_10k",
            Scenario::IdleActors => "idle_actors",
            Scenario::IdleSubscribers(_) => "idle_subscribers",
            Scenario::Wakeup(..) => "wakeup",
            Scenario::Compaction => "compaction",
        }
    }

    fn selected(arg: ScenarioArg) -> Vec<Scenario> {
        let idle_subscribers = vec![
            Scenario::IdleSubscribers(Channel::WebSocket),
            Scenario::IdleSubscribers(Channel::LongPoll),
        ];
        let wakeups: Vec<Scenario> = Channel::ALL
            .into_iter()
            .flat_map(|c| WAKE_SUBSCRIBERS.map(|n| Scenario::Wakeup(c, n)))
            .collect();
        match arg {
            // idle_actors goes first: on a heap that earlier scenarios grew and freed, new
            // actors reuse freed memory and the RSS difference says little.
            ScenarioArg::All => [
                vec![Scenario::IdleActors],
                idle_subscribers,
                vec![Scenario::HotDoc, Scenario::ManyDocs, Scenario::Snapshot10k],
                wakeups,
                vec![Scenario::Compaction],
            ]
            .concat(),
            ScenarioArg::Hot => vec![Scenario::HotDoc],
            ScenarioArg::Many => vec![Scenario::ManyDocs],
            ScenarioArg::Snapshot => vec![Scenario::Snapshot10k],
            ScenarioArg::Idle => vec![Scenario::IdleActors],
            ScenarioArg::IdleSubscribers => idle_subscribers,
            ScenarioArg::Wakeup => wakeups,
            ScenarioArg::Compaction => vec![Scenario::Compaction],
        }
    }
}

/// What scenarios work with: the main server's API and pid (None if it is not ours), a way
/// to start further servers (None with --target), and the soft open-file limit.
struct Env {
    api: Api,
    pid: Option<u32>,
    launcher: Option<Launcher>,
    duration: Duration,
    nofile: u64,
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
    let nofile = raise_nofile_limit();
    let launcher = match &args.target {
        Some(_) => None,
        None => Some(Launcher {
            bin: server_binary(args.server_bin.as_deref())?,
            sync: args.synchronous,
            cache_kib: args.cache_kib,
        }),
    };
    // Dropping `server` kills it and removes its temporary directory.
    let server = match &launcher {
        Some(l) => Some(l.start().await?),
        None => None,
    };
    let api = match (&server, &args.target, &args.token) {
        (Some(s), _, _) => s.api()?,
        (None, Some(url), Some(token)) => Api::new(url, token, false)?,
        _ => bail!("--target needs --token"),
    };
    let env = Env {
        api,
        pid: server.as_ref().map(|s| s.pid),
        launcher,
        duration: Duration::from_secs_f64(args.duration_secs),
        nofile,
    };
    let mut all_ok = true;
    for scenario in Scenario::selected(args.scenario) {
        eprintln!("docsync-bench: running {}", Line::new(scenario));
        let outcome = tokio::select! {
            r = run_scenario(scenario, &env) => r,
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

async fn run_scenario(scenario: Scenario, env: &Env) -> Result<Line> {
    let (api, pid) = (&env.api, env.pid);
    match scenario {
        Scenario::HotDoc => hot_doc(api, env.duration, pid).await,
        Scenario::ManyDocs => many_docs(api, env.duration, pid).await,
        Scenario::Snapshot10k => snapshot_10k(api, pid).await,
        Scenario::IdleActors => idle_actors(api, pid).await,
        Scenario::IdleSubscribers(channel) => idle_subscribers(env, channel).await,
        Scenario::Wakeup(channel, n) => wakeup(api, channel, n, pid).await,
        Scenario::Compaction => compaction(env).await,
    }
}

/// Raises the soft limit on open files to the hard limit (servers we start inherit it) and
/// returns the soft limit now in force.
fn raise_nofile_limit() -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed to them.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 0;
        }
        if lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                lim = raised;
            }
        }
    }
    #[allow(clippy::unnecessary_cast)] // `rlim_t` is not `u64` on every target
    let soft = lim.rlim_cur as u64;
    soft
}

// ---------------------------------------------------------------------------------------
// Servers we start ourselves
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

/// How to start servers: the `docsync` binary and the `storage.synchronous` to give it.
#[derive(Clone)]
struct Launcher {
    bin: PathBuf,
    sync: SyncMode,
    cache_kib: Option<u32>,
}

impl Launcher {
    /// A fresh temporary directory with a migrated database and the user `bench` (blocking).
    fn prepare(&self) -> Result<ServerDir> {
        let path = std::env::temp_dir().join(format!("docsync-bench-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&path).with_context(|| format!("creating {}", path.display()))?;
        // Owned from here on, so a failure below still removes the directory.
        let mut dir = ServerDir {
            launcher: self.clone(),
            path,
            user: BenchUser::default(),
        };
        dir.user = dir.add_user("bench", false)?;
        Ok(dir)
    }

    /// A server on a fresh database (`prepare`, then `serve`, off the async workers).
    async fn start(&self) -> Result<LocalServer> {
        let launcher = self.clone();
        tokio::task::spawn_blocking(move || launcher.prepare()?.serve()).await?
    }
}

#[derive(Default)]
struct BenchUser {
    id: String,
    token: String,
}

/// A temporary directory holding a server's database; removed when dropped.
struct ServerDir {
    launcher: Launcher,
    path: PathBuf,
    user: BenchUser,
}

impl ServerDir {
    fn db_path(&self) -> PathBuf {
        self.path.join("docsync.db")
    }

    /// `docsync` with the bench's environment; run in the temp dir so no `config/local.toml`
    /// of the caller's working directory is picked up.
    fn command(&self) -> Command {
        let mut cmd = Command::new(&self.launcher.bin);
        cmd.current_dir(&self.path)
            .env_remove("RUST_LOG")
            .env("DOCSYNC_SERVER__BIND", "127.0.0.1:0")
            .env("DOCSYNC_STORAGE__PATH", self.db_path())
            .env("DOCSYNC_STORAGE__SYNCHRONOUS", self.launcher.sync.as_str())
            .env("DOCSYNC_COMPACTION__RUN_AT_START", "false")
            .env("DOCSYNC_LOGGING__LEVEL", "warn")
            .stdin(Stdio::null())
            .stderr(Stdio::inherit());
        if let Some(kib) = self.launcher.cache_kib {
            cmd.env("DOCSYNC_STORAGE__CACHE_KIB", kib.to_string());
        }
        cmd
    }

    /// `docsync user add NAME [--admin]` (creates and migrates the database if needed).
    fn add_user(&self, name: &str, admin: bool) -> Result<BenchUser> {
        let mut cmd = self.command();
        cmd.args(["user", "add", name]);
        if admin {
            cmd.arg("--admin");
        }
        let out = cmd
            .stderr(Stdio::piped())
            .output()
            .with_context(|| format!("running `docsync user add {name}`"))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            bail!(
                "`docsync user add {name}` failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        parse_user_add(&stdout)
            .ok_or_else(|| anyhow!("unexpected `docsync user add` output: {stdout}"))
    }

    /// Starts `docsync serve` on this directory and waits for its listening line.
    fn serve(self) -> Result<LocalServer> {
        let mut child = self
            .command()
            .arg("serve")
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {}", self.launcher.bin.display()))?;
        let pid = child.id();
        let stdout = child.stdout.take().expect("piped stdout");
        // The server is owned from here on, so a failure below still kills it.
        let mut server = LocalServer {
            child,
            pid,
            base_url: String::new(),
            dir: self,
        };
        server.base_url = wait_for_listen_line(stdout, &mut server.child)?;
        ensure_loopback(&server.base_url)?;
        eprintln!(
            "docsync-bench: server pid {pid} at {} (synchronous={})",
            server.base_url,
            server.dir.launcher.sync.as_str()
        );
        Ok(server)
    }
}

impl Drop for ServerDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// `created user NAME (ID)` and `token: T` from `docsync user add`.
fn parse_user_add(stdout: &str) -> Option<BenchUser> {
    let created = stdout
        .lines()
        .find_map(|l| l.strip_prefix("created user "))?;
    let id = created.rsplit_once(" (")?.1.trim().strip_suffix(')')?;
    let token = stdout.lines().find_map(|l| l.strip_prefix("token: "))?;
    Some(BenchUser {
        id: id.to_string(),
        token: token.trim().to_string(),
    })
}

/// A `docsync serve` child process; killed when dropped (then its directory goes).
struct LocalServer {
    child: Child,
    pid: u32,
    base_url: String,
    dir: ServerDir,
}

impl LocalServer {
    /// A client acting as the user `bench`.
    fn api(&self) -> Result<Api> {
        Api::new(&self.base_url, &self.dir.user.token, true)
    }
}

impl Drop for LocalServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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

/// `(after - before)` KiB spread over `n`, in bytes; null without both figures.
fn bytes_per(before: Option<u64>, after: Option<u64>, n: usize) -> Value {
    match (before, after) {
        (Some(b), Some(a)) => json!((a as i64 - b as i64) * 1024 / n as i64),
        _ => Value::Null,
    }
}

// ---------------------------------------------------------------------------------------
// HTTP API client
// ---------------------------------------------------------------------------------------

#[derive(Clone)]
struct Api {
    http: reqwest::Client,
    /// The server's base URL (`/metrics` lives here).
    root: Arc<str>,
    /// `root` + `/api/v1`.
    base: Arc<str>,
    token: Arc<str>,
    auth: Arc<str>,
    local: bool,
}

/// One `GET /snapshot`: body size, the parsed body, and `Server-Timing` duration if sent.
struct SnapshotReply {
    bytes: usize,
    body: Value,
    server_ms: Option<f64>,
}

type WebSocket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

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
        let root = base_url.trim_end_matches('/');
        Ok(Api {
            http: builder.build()?,
            root: root.into(),
            base: format!("{root}/api/v1").into(),
            token: token.into(),
            auth: format!("Bearer {token}").into(),
            local,
        })
    }

    /// The same server and user with a connection pool of its own.
    fn fresh_pool(&self) -> Result<Api> {
        Api::new(&self.root, &self.token, self.local)
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

    /// One long-poll: `(headSeq, leaseSeq)` once the document passes `since` or its
    /// leaseSeq differs from `lease_seq`, at the latest after `wait` seconds.
    async fn changes(
        &self,
        doc_id: &str,
        since: i64,
        lease_seq: u64,
        wait: i64,
    ) -> Result<(i64, u64)> {
        let req = self
            .http
            .get(format!("{}/docs/{doc_id}/changes", self.base))
            .query(&[
                ("since", since),
                ("leaseSeq", lease_seq as i64),
                ("wait", wait),
            ])
            .timeout(Duration::from_secs(wait.max(1) as u64) + REQUEST_TIMEOUT);
        let body: Value = serde_json::from_slice(&self.send(req).await?)?;
        let head = body["headSeq"]
            .as_i64()
            .ok_or_else(|| anyhow!("no headSeq in {body}"))?;
        Ok((head, body["leaseSeq"].as_u64().unwrap_or(0)))
    }

    /// `GET /docs/{id}/events`, read up to its `event: ready`.
    async fn events(&self, doc_id: &str) -> Result<EventStream> {
        let req = self
            .http
            .get(format!("{}/docs/{doc_id}/events", self.base))
            .timeout(STREAM_TIMEOUT);
        let mut events = EventStream {
            resp: self.checked(req).await?,
            buf: String::new(),
        };
        let first = tokio::time::timeout(REQUEST_TIMEOUT, events.next_event())
            .await
            .context("waiting for `event: ready`")??;
        match first {
            Some((name, _)) if name == "ready" => Ok(events),
            other => bail!("expected `event: ready` first, got {other:?}"),
        }
    }

    /// A WebSocket on `/api/v1/ws` that has JOINed `doc:<doc_id>`.
    async fn ws_join(&self, doc_id: &str) -> Result<WebSocket> {
        let url = format!("{}/ws", self.base.replacen("http://", "ws://", 1));
        let mut req = url.into_client_request()?;
        req.headers_mut()
            .insert("Authorization", self.auth.parse()?);
        let connect = tokio_tungstenite::connect_async_with_config(req, None, true);
        let (mut ws, _) = tokio::time::timeout(REQUEST_TIMEOUT, connect)
            .await
            .context("WebSocket connect")??;
        let room = format!("doc:{doc_id}");
        let join = json!({"type": "JOIN", "room": room}).to_string();
        ws.send(Message::text(join)).await?;
        loop {
            let msg = tokio::time::timeout(REQUEST_TIMEOUT, ws.next())
                .await
                .context("waiting for JOINED")?
                .ok_or_else(|| anyhow!("WebSocket closed before JOINED"))??;
            let Message::Text(text) = msg else { continue };
            let v: Value = serde_json::from_str(text.as_str())?;
            match v["type"].as_str() {
                Some("JOINED") => return Ok(ws),
                Some("ERROR") => bail!("JOIN {room} refused: {v}"),
                _ => {}
            }
        }
    }

    /// `POST /admin/compact` (admin users only): one compaction pass and its summary.
    async fn compact(&self) -> Result<Value> {
        let req = self
            .http
            .post(format!("{}/admin/compact", self.base))
            .timeout(COMPACT_TIMEOUT);
        Ok(serde_json::from_slice(&self.send(req).await?)?)
    }

    /// `GET /metrics` (Prometheus text).
    async fn metrics(&self) -> Result<String> {
        let req = self.http.get(format!("{}/metrics", self.root));
        Ok(String::from_utf8(self.send(req).await?)?)
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

/// A Server-Sent Events response being read frame by frame.
struct EventStream {
    resp: reqwest::Response,
    buf: String,
}

impl EventStream {
    /// The next event's name and JSON data (comments skipped); `None` when the stream ends.
    async fn next_event(&mut self) -> Result<Option<(String, Value)>> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let frame: String = self.buf.drain(..end + 2).collect();
                if let Some(event) = parse_sse_frame(&frame)? {
                    return Ok(Some(event));
                }
                continue;
            }
            match self.resp.chunk().await? {
                Some(bytes) => self.buf.push_str(&String::from_utf8_lossy(&bytes)),
                None => return Ok(None),
            }
        }
    }
}

/// `event:` and `data:` of one SSE frame; `None` for a comment-only frame.
fn parse_sse_frame(frame: &str) -> Result<Option<(String, Value)>> {
    let mut event = None;
    let mut data = Value::Null;
    for line in frame.lines() {
        if let Some(name) = line.strip_prefix("event:") {
            event = Some(name.trim().to_string());
        } else if let Some(d) = line.strip_prefix("data:") {
            data = serde_json::from_str(d.trim())?;
        }
    }
    Ok(event.map(|e| (e, data)))
}

/// The first `dur=` value of a `Server-Timing` header, in milliseconds.
fn parse_server_timing(header: &str) -> Option<f64> {
    header
        .split([',', ';'])
        .find_map(|part| part.trim().strip_prefix("dur="))
        .and_then(|v| v.trim().parse().ok())
}

/// The value of the sample `name` (labels included, e.g. `x{le="0.05"}`) in Prometheus text.
fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

/// How many subscribers of `channel` the server counts (all documents).
async fn subscriber_count(api: &Api, channel: Channel) -> Result<u64> {
    let name = format!(
        "docsync_subscribers{{channel=\"{}\"}}",
        channel.metric_label()
    );
    Ok(metric(&api.metrics().await?, &name).unwrap_or(0.0) as u64)
}

/// Waits until the server counts at least `n` subscribers of `channel`.
async fn wait_for_subscribers(api: &Api, channel: Channel, n: u64) -> Result<u64> {
    let started = Instant::now();
    loop {
        let count = subscriber_count(api, channel).await?;
        if count >= n {
            return Ok(count);
        }
        if started.elapsed() > SUBSCRIBE_TIMEOUT {
            bail!(
                "the server counts {count} {} subscribers after {SUBSCRIBE_TIMEOUT:?}, expected {n}",
                channel.name()
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn new_id(prefix: &str) -> String {
    format!("{prefix}{}", uuid::Uuid::new_v4())
}

fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
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
    in_parallel_n(items, SETUP_PARALLELISM, f).await
}

async fn in_parallel_n<T, R, F, Fut>(items: Vec<T>, limit: usize, f: F) -> Result<Vec<R>>
where
    F: Fn(T) -> Fut,
    Fut: std::future::Future<Output = Result<R>>,
{
    stream::iter(items.into_iter().map(f))
        .buffer_unordered(limit)
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
    /// `scenario` and, for scenarios with parameters, `channel` and `subscribers`.
    fn new(scenario: Scenario) -> Line {
        let line = Line(vec![("scenario", json!(scenario.name()))]);
        match scenario {
            Scenario::IdleSubscribers(channel) => line.with("channel", channel.name()),
            Scenario::Wakeup(channel, n) => {
                line.with("channel", channel.name()).with("subscribers", n)
            }
            _ => line,
        }
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
    percentiles_named(latencies_us, ["p50_ms", "p99_ms", "max_ms"])
}

/// `percentiles` under other keys (p50, p99, max in this order).
fn percentiles_named(latencies_us: &mut [u64], keys: [&'static str; 3]) -> Line {
    nearest_ranks(latencies_us, keys, |us| us as f64)
}

/// `percentiles_named` for signed microseconds (e.g. events that came before a reply).
fn signed_percentiles(values_us: &mut [i64], keys: [&'static str; 3]) -> Line {
    nearest_ranks(values_us, keys, |us| us as f64)
}

fn nearest_ranks<T: Ord + Copy>(
    values: &mut [T],
    keys: [&'static str; 3],
    as_f64: impl Fn(T) -> f64,
) -> Line {
    values.sort_unstable();
    let rank = |p: f64| -> Value {
        if values.is_empty() {
            return Value::Null;
        }
        let idx = ((p / 100.0 * values.len() as f64).ceil() as usize).max(1) - 1;
        json!(round3(as_f64(values[idx]) / 1000.0))
    };
    Line(vec![
        (keys[0], rank(50.0)),
        (keys[1], rank(99.0)),
        (keys[2], rank(100.0)),
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

/// One acknowledged sync: when it was sent and answered, and the headSeq it answered with.
#[derive(Clone, Copy)]
struct Timed {
    sent: Instant,
    acked: Instant,
    head_seq: i64,
}

impl Timed {
    fn latency_us(&self) -> u64 {
        micros(self.acked - self.sent)
    }
}

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

    /// One `set_content` on the own block, timed. A failure is counted in `stats` (and
    /// followed by a short pause, so a failing server is not hammered).
    async fn edit_once(&mut self, stats: &mut Stats) -> Option<Timed> {
        self.edits += 1;
        let op = json!({
            "opId": new_id("op_"),
            "kind": "set_content",
            "blockId": self.block_id,
            "content": format!("{} edit {}", self.client_id, self.edits),
            "baseVersion": self.version,
        });
        let sent = Instant::now();
        let reply = self.request(vec![op]).await;
        let acked = Instant::now();
        match reply {
            Ok(reply) => {
                stats.latencies_us.push(micros(acked - sent));
                stats.acked_syncs += 1;
                self.count_results(&reply, stats);
                self.absorb(&reply);
                let head_seq = reply["headSeq"].as_i64().unwrap_or(self.last_seq);
                Some(Timed {
                    sent,
                    acked,
                    head_seq,
                })
            }
            Err(e) => {
                stats.errors += 1;
                if stats.errors <= 3 {
                    eprintln!("docsync-bench: sync error on {}: {e:#}", self.doc_id);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
                None
            }
        }
    }

    /// Edits until `deadline`, one request in flight at a time.
    async fn edit_until(mut self, deadline: Instant) -> Stats {
        let mut stats = Stats::default();
        while Instant::now() < deadline {
            self.edit_once(&mut stats).await;
        }
        stats
    }

    /// Edits back to back while `more()` says so; returns the acknowledged syncs.
    async fn edit_while(
        &mut self,
        stats: &mut Stats,
        mut more: impl FnMut() -> bool,
    ) -> Vec<Timed> {
        let mut timed = Vec::new();
        while more() {
            timed.extend(self.edit_once(stats).await);
        }
        timed
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
    Ok(Line::new(Scenario::Snapshot10k)
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
    let per_actor = bytes_per(before, after, IDLE_DOCS);
    Ok(Line::new(Scenario::IdleActors)
        .with("docs", IDLE_DOCS)
        .with("open_s", round3(open_s))
        .with("rss_before_kib", before)
        .with("rss_after_kib", after)
        .with("rss_per_actor_bytes", per_actor)
        .with("errors", 0)
        .with("server_rss_kib", after))
}

// ---------------------------------------------------------------------------------------
// Wake-up channel listeners (idle_subscribers and wakeup)
// ---------------------------------------------------------------------------------------

/// A subscriber heard that the document reached `head` at `at`; for a long-poll, `polled_at`
/// is when the poll that answered was sent.
struct Wake {
    head: i64,
    at: Instant,
    polled_at: Option<Instant>,
}

/// A subscriber's task: it listens until told to stop and returns what it heard.
type Listener = tokio::task::JoinHandle<Result<Vec<Wake>>>;

/// Subscribes to `doc_id` on `channel` and leaves the listening to a task. WebSockets and
/// event streams are subscribed when this returns (JOINED / `event: ready`); a long-poller
/// sends its first poll from the task.
async fn open_listener(
    api: &Api,
    channel: Channel,
    doc_id: &str,
    stop: watch::Receiver<bool>,
) -> Result<Listener> {
    Ok(match channel {
        Channel::WebSocket => tokio::spawn(ws_listen(api.ws_join(doc_id).await?, stop)),
        Channel::Sse => tokio::spawn(sse_listen(api.events(doc_id).await?, stop)),
        Channel::LongPoll => tokio::spawn(longpoll_listen(api.clone(), doc_id.to_string(), stop)),
    })
}

/// Records `DOC_SEQ` messages and PINGs every 15 s; closes the socket on `stop`.
async fn ws_listen(mut ws: WebSocket, mut stop: watch::Receiver<bool>) -> Result<Vec<Wake>> {
    let mut wakes = Vec::new();
    let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + PING_EVERY, PING_EVERY);
    loop {
        tokio::select! {
            msg = ws.next() => {
                let at = Instant::now();
                match msg {
                    Some(Ok(Message::Text(text))) => {
                        if let Some(head) = doc_seq_head(text.as_str()) {
                            wakes.push(Wake { head, at, polled_at: None });
                        }
                    }
                    Some(Ok(Message::Close(reason))) => bail!("server closed the WebSocket: {reason:?}"),
                    Some(Ok(_)) => {}
                    Some(Err(e)) => return Err(e.into()),
                    None => bail!("WebSocket ended"),
                }
            }
            _ = ping.tick() => ws.send(Message::text(r#"{"type":"PING"}"#)).await?,
            _ = stopped(&mut stop) => break,
        }
    }
    let _ = ws.close(None).await;
    Ok(wakes)
}

/// Resolves once `stop` is set or its sender is gone.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// `headSeq` of a `DOC_SEQ` message.
fn doc_seq_head(text: &str) -> Option<i64> {
    let v: Value = serde_json::from_str(text).ok()?;
    (v["type"] == "DOC_SEQ").then(|| v["headSeq"].as_i64())?
}

/// Records `doc_seq` events until `stop` (dropping the stream closes it).
async fn sse_listen(mut events: EventStream, mut stop: watch::Receiver<bool>) -> Result<Vec<Wake>> {
    let mut wakes = Vec::new();
    loop {
        tokio::select! {
            event = events.next_event() => match event? {
                Some((name, data)) if name == "doc_seq" => {
                    if let Some(head) = data["headSeq"].as_i64() {
                        wakes.push(Wake { head, at: Instant::now(), polled_at: None });
                    }
                }
                Some(_) => {}
                None => bail!("the server ended the event stream"),
            },
            _ = stopped(&mut stop) => break,
        }
    }
    Ok(wakes)
}

/// Long-polls again and again, each time from the last headSeq and leaseSeq it was told;
/// stops before the next poll once `stop` is set (or its sender is gone).
async fn longpoll_listen(
    api: Api,
    doc_id: String,
    stop: watch::Receiver<bool>,
) -> Result<Vec<Wake>> {
    let mut wakes = Vec::new();
    let (mut head, mut lease) = (0, 0);
    while !*stop.borrow() && stop.has_changed().is_ok() {
        let polled_at = Instant::now();
        let (h, l) = api.changes(&doc_id, head, lease, LONGPOLL_WAIT_S).await?;
        if h > head {
            let at = Instant::now();
            wakes.push(Wake {
                head: h,
                at,
                polled_at: Some(polled_at),
            });
            head = h;
        }
        lease = l;
    }
    Ok(wakes)
}

/// Waits for a listener that was told to stop; it is aborted if it takes too long.
async fn join_listener(listener: Listener) -> Result<Vec<Wake>> {
    let abort = listener.abort_handle();
    match tokio::time::timeout(LISTENER_STOP_TIMEOUT, listener).await {
        Ok(joined) => joined?,
        Err(_) => {
            abort.abort();
            bail!("listener did not stop within {LISTENER_STOP_TIMEOUT:?}")
        }
    }
}

// ---------------------------------------------------------------------------------------
// idle_subscribers
// ---------------------------------------------------------------------------------------

async fn idle_subscribers(env: &Env, channel: Channel) -> Result<Line> {
    let needed = (IDLE_SUBSCRIBERS + IDLE_SUB_WARMUP + 1_000) as u64;
    if env.nofile < needed {
        bail!(
            "open-file limit {} is below the {needed} this scenario needs (raise `ulimit -n`)",
            env.nofile
        );
    }
    // A server of its own when we can: a heap no other scenario touched, and the thousands
    // of connections leave nothing behind in the main server.
    let server = match &env.launcher {
        Some(l) => Some(l.start().await?),
        None => None,
    };
    let (api, pid) = match &server {
        Some(s) => (s.api()?, Some(s.pid)),
        None => (env.api.fresh_pool()?, env.pid),
    };
    let docs = create_docs(&api, IDLE_SUB_DOCS, "bench idle_subscribers").await?;
    for doc in &docs {
        // Opens the document's actor, so actors are not charged to subscribers.
        api.snapshot(doc, None).await?;
    }
    let already = subscriber_count(&api, channel).await?;
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut listeners = open_idle(&api, channel, &docs, IDLE_SUB_WARMUP, &stop_rx, already).await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = rss_kib(pid);
    let started = Instant::now();
    let base = already + IDLE_SUB_WARMUP as u64;
    let opened = open_idle(&api, channel, &docs, IDLE_SUBSCRIBERS, &stop_rx, base).await;
    let open_s = started.elapsed().as_secs_f64();
    listeners.extend(opened?);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let counted = subscriber_count(&api, channel)
        .await?
        .saturating_sub(already);
    let after = rss_kib(pid);
    let errors = close_listeners(channel, stop_tx, listeners).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let closed = rss_kib(pid);
    let left = subscriber_count(&api, channel)
        .await?
        .saturating_sub(already);
    Ok(Line::new(Scenario::IdleSubscribers(channel))
        .with("subscribers", IDLE_SUBSCRIBERS)
        .with("warmup_subscribers", IDLE_SUB_WARMUP)
        .with("docs", IDLE_SUB_DOCS)
        .with("open_s", round3(open_s))
        .with("server_counted", counted)
        .with("rss_before_kib", before)
        .with("rss_after_kib", after)
        .with(
            "bytes_per_subscriber",
            bytes_per(before, after, IDLE_SUBSCRIBERS),
        )
        .with("rss_closed_kib", closed)
        .with("server_counted_after_close", left)
        .with("errors", errors)
        .with("server_rss_kib", after))
}

/// Opens `n` listeners spread over `docs`, in batches; after each batch waits until the
/// server counts `base` + all opened so far.
async fn open_idle(
    api: &Api,
    channel: Channel,
    docs: &[String],
    n: usize,
    stop: &watch::Receiver<bool>,
    base: u64,
) -> Result<Vec<Listener>> {
    let mut listeners = Vec::with_capacity(n);
    while listeners.len() < n {
        let first = listeners.len();
        let batch: Vec<usize> = (first..n.min(first + IDLE_SUB_BATCH)).collect();
        let opened = in_parallel_n(batch, CONNECT_PARALLELISM, |i| {
            open_listener(api, channel, &docs[i % docs.len()], stop.clone())
        })
        .await?;
        listeners.extend(opened);
        wait_for_subscribers(api, channel, base + listeners.len() as u64).await?;
    }
    Ok(listeners)
}

/// Closes all listeners (WebSockets with a close frame; long-polls are dropped, which closes
/// their connections); returns how many had failed.
async fn close_listeners(
    channel: Channel,
    stop: watch::Sender<bool>,
    listeners: Vec<Listener>,
) -> u64 {
    let _ = stop.send(true);
    if channel == Channel::LongPoll {
        listeners.iter().for_each(|l| l.abort());
    }
    let results: Vec<Result<Vec<Wake>>> = stream::iter(listeners)
        .map(join_listener)
        .buffer_unordered(CONNECT_PARALLELISM)
        .collect()
        .await;
    let failures = results.iter().filter_map(|r| r.as_ref().err());
    let failures = failures.filter(|e| {
        !e.downcast_ref::<tokio::task::JoinError>()
            .is_some_and(|j| j.is_cancelled())
    });
    let mut count = 0;
    for e in failures {
        count += 1;
        if count <= 3 {
            eprintln!("docsync-bench: subscriber failed: {e:#}");
        }
    }
    count
}

// ---------------------------------------------------------------------------------------
// wakeup
// ---------------------------------------------------------------------------------------

/// Wake-up latencies over all subscribers of one configuration: from the writer's reply to
/// the event (signed: events often come first) and from the writer's request to the event.
#[derive(Default)]
struct WakeStats {
    after_ack_us: Vec<i64>,
    after_send_us: Vec<u64>,
    before_ack: u64,
    missed: u64,
    not_waiting: u64,
    errors: u64,
}

impl WakeStats {
    /// Matches every acknowledged write with the subscriber's first wake-up at or past its
    /// headSeq (`wakes` are in arrival order, their heads never go down).
    fn add(&mut self, acks: &[Timed], wakes: &[Wake]) {
        let mut next = 0;
        for ack in acks {
            while wakes.get(next).is_some_and(|w| w.head < ack.head_seq) {
                next += 1;
            }
            let Some(wake) = wakes.get(next) else {
                self.missed += 1;
                continue;
            };
            if wake.polled_at.is_some_and(|p| p > ack.sent) {
                self.not_waiting += 1;
                continue;
            }
            let after_ack = match wake.at.checked_duration_since(ack.acked) {
                Some(d) => micros(d) as i64,
                None => {
                    self.before_ack += 1;
                    -(micros(ack.acked - wake.at) as i64)
                }
            };
            self.after_ack_us.push(after_ack);
            self.after_send_us
                .push(micros(wake.at.saturating_duration_since(ack.sent)));
        }
    }
}

async fn wakeup(api: &Api, channel: Channel, n: usize, pid: Option<u32>) -> Result<Line> {
    let title = format!("bench wakeup {} {n}", channel.name());
    let doc = api.create_doc(&title).await?;
    let mut writer = Editor::join(api.clone(), doc.clone(), 0).await?;
    let already = subscriber_count(api, channel).await.unwrap_or(0);
    let (stop_tx, stop_rx) = watch::channel(false);
    let listeners = in_parallel(vec![(); n], |()| {
        open_listener(api, channel, &doc, stop_rx.clone())
    })
    .await?;
    if channel == Channel::LongPoll {
        if let Err(e) = wait_for_subscribers(api, channel, already + n as u64).await {
            eprintln!("docsync-bench: {e:#}");
        }
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut stats = Stats::default();
    let mut acks = Vec::with_capacity(WAKE_WRITES);
    for _ in 0..WAKE_WRITES {
        tokio::time::sleep(WAKE_PAUSE).await;
        acks.extend(writer.edit_once(&mut stats).await);
    }
    tokio::time::sleep(WAKE_DRAIN).await;
    let _ = stop_tx.send(true);
    if channel == Channel::LongPoll {
        // Answers the polls still waiting, so every long-poller ends (not measured).
        writer.edit_once(&mut Stats::default()).await;
    }
    let mut wake = WakeStats::default();
    for listener in listeners {
        match join_listener(listener).await {
            Ok(wakes) => wake.add(&acks, &wakes),
            Err(e) => {
                wake.errors += 1;
                eprintln!("docsync-bench: subscriber failed: {e:#}");
            }
        }
    }
    Ok(Line::new(Scenario::Wakeup(channel, n))
        .with("writes", acks.len())
        .with("samples", wake.after_ack_us.len())
        .append(signed_percentiles(
            &mut wake.after_ack_us,
            ["p50_ms", "p99_ms", "max_ms"],
        ))
        .with("before_ack", wake.before_ack)
        .append(percentiles_named(
            &mut wake.after_send_us,
            ["from_send_p50_ms", "from_send_p99_ms", "from_send_max_ms"],
        ))
        .with("missed", wake.missed)
        .with("not_waiting", wake.not_waiting)
        .append(percentiles_named(
            &mut stats.latencies_us,
            ["sync_p50_ms", "sync_p99_ms", "sync_max_ms"],
        ))
        .with("conflicts", stats.conflicts)
        .with("errors", stats.errors + wake.errors)
        .with("server_rss_kib", rss_kib(pid)))
}

// ---------------------------------------------------------------------------------------
// compaction
// ---------------------------------------------------------------------------------------

/// Writes `COMPACT_DOCS` documents owned by `owner` with `COMPACT_ROWS_PER_DOC` log rows
/// each, all `COMPACT_AGE_DAYS` old, straight into a migrated database no server has open.
fn fill_old_log(db: &Path, owner: &str) -> Result<()> {
    let mut conn = rusqlite::Connection::open(db)?;
    conn.pragma_update(None, "synchronous", "OFF")?;
    let old = unix_ms() - COMPACT_AGE_DAYS * DAY_MS;
    let tx = conn.transaction()?;
    {
        let mut doc = tx.prepare(
            "INSERT INTO documents (id, owner_id, title, head_seq, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
        )?;
        let mut op = tx.prepare(
            "INSERT INTO doc_ops (doc_id, seq, op_id, kind, client_id, user_id, at, entry)
             VALUES (?1, ?2, ?3, 'set_content', 'cl_bench', ?4, ?5, ?6)",
        )?;
        for d in 0..COMPACT_DOCS {
            let doc_id = format!("doc_{}", uuid::Uuid::new_v4().simple());
            let title = format!("bench old log {d}");
            doc.execute(params![doc_id, owner, title, COMPACT_ROWS_PER_DOC, old])?;
            for seq in 1..=COMPACT_ROWS_PER_DOC {
                let op_id = format!("op_bench_{d}_{seq}");
                let at = old + seq;
                let entry = format!(
                    r#"{{"seq":{seq},"opId":"{op_id}","kind":"set_content","clientId":"cl_bench","userId":"{owner}","at":{at},"effects":[]}}"#
                );
                op.execute(params![doc_id, seq, op_id, owner, at, entry])?;
            }
        }
    }
    tx.commit()?;
    drop(conn);
    // Written with `synchronous = OFF`: flush it now, or the server's first checkpoint pays
    // for writing all of it out (a stall of hundreds of ms in the baseline).
    std::fs::File::open(db)?.sync_all()?;
    Ok(())
}

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
        fill_old_log(&dir.db_path(), &dir.user.id)?;
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
    Line(vec![
        ("commits", json!(commits.map(|c| c as u64))),
        ("commit_mean_ms", per_commit(seconds, 1000.0)),
        ("commits_over_50ms", over),
        ("jobs_per_commit", per_commit(jobs, 1.0)),
    ])
}

async fn compaction(env: &Env) -> Result<Line> {
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
    let within = pass_lines.0[1]
        .1
        .as_f64()
        .map(|p99| p99 < COMPACT_TARGET_P99_MS);
    Ok(Line::new(Scenario::Compaction)
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
