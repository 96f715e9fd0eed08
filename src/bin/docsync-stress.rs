//! `docsync-stress`: load shapes that are about the server's resources over time rather than
//! its speed (speed is `docsync-bench`). Today one scenario:
//!
//! `docsync-stress ws` — N cycles of opening K authenticated WebSocket subscribers (each
//! joins a document room), then closing them all; after each cycle it waits until the server
//! counts no WebSocket subscriber and its open descriptors are back where they started, then
//! prints the server's resident memory (`VmRSS` of `/proc/<pid>/status`). Memory that keeps
//! growing from cycle to cycle while nothing is open is a leak or allocator fragmentation.
//!
//! By default it starts `docsync serve` itself (the `docsync` binary beside this one, on a
//! fresh database in a temporary folder). `--url U --pid P --token T` measures a server
//! started elsewhere instead (e.g. under `heaptrack` or `valgrind --tool=massif`).
//! Linux only (it reads `/proc`).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::{Parser, Subcommand};
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::HeaderValue;
use tokio_tungstenite::tungstenite::Message;

#[derive(Parser)]
#[command(
    name = "docsync-stress",
    about = "Resource stress scenarios for docsync"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Scenario,
}

#[derive(Subcommand)]
enum Scenario {
    /// Open and close WebSocket subscribers in cycles; print server RSS after each cycle.
    Ws(WsArgs),
}

#[derive(Parser)]
struct WsArgs {
    /// Cycles of open-all-then-close-all.
    #[arg(long, default_value_t = 8)]
    cycles: usize,
    /// WebSocket subscribers opened per cycle (all open at once before closing).
    #[arg(long, default_value_t = 3000)]
    sockets: usize,
    /// Documents the subscribers are spread over (room joins).
    #[arg(long, default_value_t = 1)]
    docs: usize,
    /// Handshakes in flight at once.
    #[arg(long, default_value_t = 200)]
    concurrency: usize,
    /// Seconds to wait after each cycle's sockets are gone before reading RSS a second time
    /// (the server hands free memory back to the OS every 10 s; see `src/memory.rs`).
    #[arg(long, default_value_t = 0)]
    linger: u64,
    /// Drop the TCP connection without a WebSocket close frame (a vanished client).
    #[arg(long)]
    abrupt: bool,
    /// The `docsync` binary to start (default: the one beside this executable).
    #[arg(long)]
    server_bin: Option<PathBuf>,
    /// Measure a running server instead of starting one (needs --pid and --token).
    #[arg(long, requires_all = ["pid", "token"])]
    url: Option<String>,
    /// Process ID of the server given by --url (its RSS is read from /proc).
    #[arg(long)]
    pid: Option<u32>,
    /// API token of a user of the server given by --url.
    #[arg(long)]
    token: Option<String>,
    /// Extra `KEY=VALUE` environment for the server this tool starts (repeatable), e.g.
    /// `MALLOC_ARENA_MAX=2`.
    #[arg(long = "server-env")]
    server_env: Vec<String>,
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    match cli.cmd {
        Scenario::Ws(args) => rt.block_on(ws_cycles(args)),
    }
}

/// The server under test: one this tool started (killed on drop) or one given by URL.
struct Target {
    base: String,
    pid: u32,
    token: String,
    _own: Option<OwnServer>,
}

async fn ws_cycles(args: WsArgs) -> Result<()> {
    let nofile = raise_nofile_limit();
    // The client holds `sockets` descriptors and a server started here inherits the limit.
    if nofile < (args.sockets as u64) + 256 {
        bail!(
            "open-file limit {nofile} is too low for {} sockets; raise `ulimit -n`",
            args.sockets
        );
    }
    let target = match (&args.url, args.pid, &args.token) {
        (Some(url), Some(pid), Some(token)) => Target {
            base: url.trim_end_matches('/').to_string(),
            pid,
            token: token.clone(),
            _own: None,
        },
        _ => {
            let bin = server_binary(args.server_bin.as_deref())?;
            let env = args
                .server_env
                .iter()
                .map(|kv| {
                    kv.split_once('=')
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .ok_or_else(|| anyhow!("--server-env wants KEY=VALUE, got {kv}"))
                })
                .collect::<Result<Vec<_>>>()?;
            let own = tokio::task::spawn_blocking(move || OwnServer::start(&bin, &env)).await??;
            Target {
                base: own.base.clone(),
                pid: own.child.id(),
                token: own.token.clone(),
                _own: Some(own),
            }
        }
    };
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()?;
    let mut docs = Vec::new();
    for i in 0..args.docs.max(1) {
        let (status, v) = post_json(
            &http,
            &format!("{}/api/v1/docs", target.base),
            &target.token,
            &json!({"title": format!("stress {i}")}),
        )
        .await?;
        let id = v["docId"].as_str().map(str::to_string);
        docs.push(id.ok_or_else(|| anyhow!("creating a document: {status} {v}"))?);
    }
    // One warm-up connection so the baseline includes what any first WebSocket sets up.
    run_cycle(&target, &docs, 1, 1, args.abrupt).await?;
    settle(&http, &target, None).await?;
    let fds0 = open_fds(target.pid)?;
    let rss0 = rss_kib(target.pid)?;
    println!(
        "docsync-stress ws: server pid {} at {}, {} sockets x {} cycles over {} document(s){}",
        target.pid,
        target.base,
        args.sockets,
        args.cycles,
        docs.len(),
        if args.abrupt { ", abrupt closes" } else { "" }
    );
    let lingered = |rss: u64| {
        if args.linger > 0 {
            format!(" {:.1} |", mib(rss))
        } else {
            String::new()
        }
    };
    let linger_head = if args.linger > 0 {
        format!(" RSS MiB {} s later |", args.linger)
    } else {
        String::new()
    };
    println!(
        "| cycle | closed so far | RSS MiB | Δ MiB since start | open fds | cycle s |{linger_head}"
    );
    println!(
        "|---:|---:|---:|---:|---:|---:|{}",
        if args.linger > 0 { "---:|" } else { "" }
    );
    println!(
        "| 0 | 0 | {:.1} | 0.0 | {fds0} | - |{}",
        mib(rss0),
        lingered(rss0)
    );
    let mut after_first = None;
    let mut last = rss0;
    for cycle in 1..=args.cycles {
        let started = Instant::now();
        run_cycle(&target, &docs, args.sockets, args.concurrency, args.abrupt).await?;
        let fds = settle(&http, &target, Some(fds0)).await?;
        last = rss_kib(target.pid)?;
        let secs = started.elapsed().as_secs_f64();
        let later = if args.linger > 0 {
            tokio::time::sleep(Duration::from_secs(args.linger)).await;
            rss_kib(target.pid)?
        } else {
            last
        };
        if cycle == 1 {
            after_first = Some(last);
        }
        println!(
            "| {cycle} | {} | {:.1} | {:+.1} | {fds} | {secs:.1} |{}",
            cycle * args.sockets,
            mib(last),
            mib(last) - mib(rss0),
            lingered(later)
        );
    }
    if let (Some(first), true) = (after_first, args.cycles > 1) {
        let closed = ((args.cycles - 1) * args.sockets) as f64;
        let per = (last as f64 - first as f64) * 1024.0 / closed;
        println!(
            "growth after cycle 1: {:+.1} MiB over {} closed connections = {per:+.0} bytes each",
            mib(last) - mib(first),
            closed as u64
        );
    }
    Ok(())
}

/// Opens `sockets` subscribers (each joins one of `docs`), then closes them all.
async fn run_cycle(
    target: &Target,
    docs: &[String],
    sockets: usize,
    concurrency: usize,
    abrupt: bool,
) -> Result<()> {
    let url = format!(
        "ws://{}/api/v1/ws",
        target.base.trim_start_matches("http://")
    );
    let opened: Vec<Result<Ws>> = futures::stream::iter(0..sockets)
        .map(|i| open_joined(&url, &target.token, &docs[i % docs.len()]))
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    let mut open = Vec::with_capacity(sockets);
    for ws in opened {
        open.push(ws?);
    }
    if abrupt {
        drop(open);
        return Ok(());
    }
    let closed: Vec<Result<()>> = futures::stream::iter(open)
        .map(close)
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await;
    closed.into_iter().collect()
}

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn open_joined(url: &str, token: &str, doc: &str) -> Result<Ws> {
    let mut req = url.into_client_request()?;
    req.headers_mut().insert(
        "Authorization",
        HeaderValue::from_str(&format!("Bearer {token}"))?,
    );
    let (mut ws, _) = tokio::time::timeout(
        Duration::from_secs(30),
        tokio_tungstenite::connect_async(req),
    )
    .await
    .context("WebSocket handshake timed out")??;
    let room = format!("doc:{doc}");
    ws.send(Message::text(
        json!({"type": "JOIN", "room": room}).to_string(),
    ))
    .await?;
    let joined = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(msg) = ws.next().await {
            if let Message::Text(t) = msg? {
                let v: Value = serde_json::from_str(t.as_str())?;
                if v["room"] == room.as_str() {
                    return Ok(v);
                }
            }
        }
        Err(anyhow!("socket closed before JOINED"))
    })
    .await
    .context("no JOINED within 30 s")??;
    if joined["type"] != "JOINED" {
        bail!("JOIN {room}: {joined}");
    }
    Ok(ws)
}

/// A clean close: our close frame, then read until the server's close ends the stream.
async fn close(mut ws: Ws) -> Result<()> {
    ws.close(None).await.ok();
    let drained = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(m) = ws.next().await {
            if m.is_err() {
                break;
            }
        }
    })
    .await;
    drained.map_err(|_| anyhow!("server did not close the WebSocket within 30 s"))
}

/// Waits until the server counts no WebSocket subscriber and (when `fds0` is given) its
/// open descriptors are back to `fds0` or below, so RSS is read with nothing open.
/// Returns the descriptor count seen.
async fn settle(http: &reqwest::Client, target: &Target, fds0: Option<usize>) -> Result<usize> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let subs = ws_subscribers(http, &target.base).await?;
        let fds = open_fds(target.pid)?;
        if subs == 0 && fds0.is_none_or(|f| fds <= f) {
            return Ok(fds);
        }
        if Instant::now() > deadline {
            bail!("server still has {subs} WebSocket subscribers and {fds} open fds after 60 s");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn ws_subscribers(http: &reqwest::Client, base: &str) -> Result<u64> {
    let text = http
        .get(format!("{base}/metrics"))
        .send()
        .await?
        .text()
        .await?;
    let line = text
        .lines()
        .find(|l| l.starts_with("docsync_subscribers{channel=\"websocket\"}"));
    Ok(line
        .and_then(|l| l.rsplit_once(' '))
        .and_then(|(_, v)| v.parse::<f64>().ok())
        .unwrap_or(0.0) as u64)
}

async fn post_json(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    body: &Value,
) -> Result<(u16, Value)> {
    let r = http
        .post(url)
        .bearer_auth(token)
        .header("Content-Type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .with_context(|| format!("POST {url}"))?;
    let status = r.status().as_u16();
    let text = r.text().await?;
    Ok((
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    ))
}

fn rss_kib(pid: u32) -> Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .with_context(|| format!("reading /proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| anyhow!("no VmRSS in /proc/{pid}/status"))
}

fn open_fds(pid: u32) -> Result<usize> {
    Ok(std::fs::read_dir(format!("/proc/{pid}/fd"))
        .with_context(|| format!("listing /proc/{pid}/fd"))?
        .count())
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// Raises the soft open-file limit to the hard one; returns the soft limit in force.
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

fn server_binary(explicit: Option<&Path>) -> Result<PathBuf> {
    let bin = match explicit {
        Some(p) => p.to_path_buf(),
        None => std::env::current_exe()?
            .parent()
            .ok_or_else(|| anyhow!("executable has no directory"))?
            .join("docsync"),
    };
    if !bin.is_file() {
        bail!(
            "server binary {} not found (`cargo build --release --bins`, or pass --server-bin)",
            bin.display()
        );
    }
    Ok(bin)
}

/// A `docsync serve` on a fresh database in a temporary folder; killed and removed on drop.
struct OwnServer {
    child: Child,
    dir: PathBuf,
    base: String,
    token: String,
}

impl OwnServer {
    fn start(bin: &Path, env: &[(String, String)]) -> Result<OwnServer> {
        let dir = std::env::temp_dir().join(format!("docsync-stress-{}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let command = |args: &[&str]| {
            let mut cmd = Command::new(bin);
            // Run in the temp folder so no config/local.toml of the caller is read.
            cmd.current_dir(&dir)
                .args(args)
                .env_remove("RUST_LOG")
                .env("DOCSYNC_SERVER__BIND", "127.0.0.1:0")
                .env("DOCSYNC_STORAGE__PATH", dir.join("docsync.db"))
                .env("DOCSYNC_COMPACTION__RUN_AT_START", "false")
                .env("DOCSYNC_LOGGING__LEVEL", "warn")
                // Every stress socket is one user on 127.0.0.1: lift the per-user and
                // per-address stream limits (64 / 256), or the tool measures only the 429s.
                .env("DOCSYNC_LIMITS__MAX_STREAMS_PER_USER", "1000000")
                .env("DOCSYNC_LIMITS__MAX_STREAMS_PER_ADDRESS", "1000000")
                .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .stdin(Stdio::null());
            cmd
        };
        let init = command(&["init"])
            .output()
            .context("running `docsync init`")?;
        if !init.status.success() {
            bail!(
                "`docsync init` failed: {}",
                String::from_utf8_lossy(&init.stderr).trim()
            );
        }
        let out = command(&["user", "add", "stress"])
            .output()
            .context("running `docsync user add stress`")?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let token = stdout
            .lines()
            .find_map(|l| l.strip_prefix("token: "))
            .map(|t| t.trim().to_string())
            .ok_or_else(|| {
                anyhow!(
                    "`docsync user add` printed no token: {stdout} {}",
                    String::from_utf8_lossy(&out.stderr)
                )
            })?;
        let mut child = command(&["serve"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("starting {}", bin.display()))?;
        let stdout = child.stdout.take().expect("piped stdout");
        let mut server = OwnServer {
            child,
            dir,
            base: String::new(),
            token,
        };
        server.base = listen_line(stdout)?;
        Ok(server)
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Reads `docsync listening on http://…`; a thread keeps draining stdout afterwards so the
/// server never blocks on a full pipe.
fn listen_line(stdout: std::process::ChildStdout) -> Result<String> {
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
    rx.recv_timeout(Duration::from_secs(30))
        .map_err(|_| anyhow!("server did not print its listening line within 30 s"))
}
