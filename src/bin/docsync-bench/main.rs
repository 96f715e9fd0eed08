//! `docsync-bench`: a load generator for the docsync HTTP API (PROTOCOL.md §2–§6). What each
//! scenario does and prints is in `help.txt` (shown by `--help`), so there is one description.
//!
//! The map: `main` parses the options and runs the selected scenarios; `server` starts
//! servers on fresh temporary databases (and fills one through the storage API before it
//! starts, never with SQL of its own); `client` is the HTTP/WebSocket/SSE client; `listeners`
//! record wake-ups; `editor` is a client that keeps editing its block; `process` reads a
//! process's memory and CPU time from /proc; `stats` holds percentiles and the output line;
//! `scenarios/` has one file (or folder) per scenario.

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
#[command(
    about = "Load generator for the docsync server; one JSON line per scenario",
    after_long_help = include_str!("help.txt")
)]
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
    /// Which scenario to run (see SCENARIOS below; `all` runs every one).
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
