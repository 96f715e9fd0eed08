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

mod channel;
mod client;
mod editor;
mod listeners;
mod process;
mod scenarios;
mod server;
mod setup;
mod stats;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Result};
use clap::Parser;

use channel::Channel;
use client::Api;
use scenarios::fanout::{self, FanoutPlan};
use scenarios::{Env, Scenario, ScenarioArg};
use server::{server_binary, Launcher, SyncMode};

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
    /// fanout: wake-up channels of the readers.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [Channel::WebSocket, Channel::Sse])]
    fanout_channels: Vec<Channel>,
    /// fanout: reader counts, one run each (e.g. 10,100,1000).
    #[arg(long, value_delimiter = ',', default_values_t = fanout::DEFAULT_READERS)]
    fanout_readers: Vec<usize>,
    /// fanout: the writer's offered edits per second, one run each (e.g. 10,50).
    #[arg(long, value_delimiter = ',', default_values_t = [fanout::DEFAULT_RATE])]
    fanout_rate: Vec<u32>,
    /// fanout: how long the writer edits.
    #[arg(long, default_value_t = fanout::DEFAULT_WINDOW_SECS)]
    fanout_secs: f64,
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
    if !(args.fanout_secs > 0.0 && args.fanout_secs <= 3600.0) {
        bail!("--fanout-secs must be in (0, 3600]");
    }
    if args.fanout_rate.contains(&0) || args.fanout_readers.contains(&0) {
        bail!("--fanout-rate and --fanout-readers must be positive");
    }
    let fanout_plan = FanoutPlan {
        channels: args.fanout_channels.clone(),
        readers: args.fanout_readers.clone(),
        rates: args.fanout_rate.clone(),
    };
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
        fanout_window: Duration::from_secs_f64(args.fanout_secs),
        nofile,
    };
    let mut all_ok = true;
    for scenario in Scenario::selected(args.scenario, &fanout_plan) {
        eprintln!("docsync-bench: running {}", scenario.line());
        let outcome = tokio::select! {
            r = scenarios::run(scenario, &env) => r,
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
                scenario.line().with("error", format!("{e:#}"))
            }
        };
        println!("{line}");
    }
    drop(server);
    Ok(all_ok)
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
