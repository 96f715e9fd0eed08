//! Servers the bench starts itself: a fresh temporary directory and database per server,
//! the user `bench` created through `docsync user add`, `docsync serve` as a child process
//! that is killed (and its directory removed) when dropped.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::ValueEnum;
use docsync_actors::storage::{self, Storage, StorageConfig, Synchronous};

use crate::client::Api;

const SERVER_START_TIMEOUT: Duration = Duration::from_secs(30);
const STREAM_LIMIT_KEYS: [&str; 2] = [
    "DOCSYNC_LIMITS__MAX_STREAMS_PER_USER",
    "DOCSYNC_LIMITS__MAX_STREAMS_PER_ADDRESS",
];
/// More than any scenario opens (idle_subscribers: 10,100 at once).
const MANY_STREAMS: &str = "100000";
/// Write budgets off (0): throughput scenarios write far more per minute, as one user on
/// one address, than a person does; the `hostile` scenario measures the budgets themselves.
const BUDGET_KEYS: [&str; 3] = [
    "DOCSYNC_LIMITS__USER_WRITE_BYTES_PER_MINUTE",
    "DOCSYNC_LIMITS__DOC_WRITE_BYTES_PER_MINUTE",
    "DOCSYNC_LIMITS__MAX_DOCUMENT_BYTES",
];

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum SyncMode {
    Full,
    Normal,
}

impl SyncMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SyncMode::Full => "full",
            SyncMode::Normal => "normal",
        }
    }
}

pub fn server_binary(explicit: Option<&Path>) -> Result<PathBuf> {
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
pub struct Launcher {
    pub bin: PathBuf,
    pub sync: SyncMode,
    pub cache_kib: Option<u32>,
}

impl Launcher {
    /// A fresh temporary directory with a migrated database and the user `bench` (blocking).
    pub fn prepare(&self) -> Result<ServerDir> {
        let path = std::env::temp_dir().join(format!("docsync-bench-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&path).with_context(|| format!("creating {}", path.display()))?;
        // Owned from here on, so a failure below still removes the directory.
        let mut dir = ServerDir {
            launcher: self.clone(),
            path,
            user: BenchUser::default(),
            raise_stream_limits: true,
            lift_budgets: true,
            extra_env: Vec::new(),
        };
        // A server from before the write budgets (or the stream limits) existed refuses
        // their unknown keys; it has nothing to lift.
        let first = match dir.add_user("bench", false) {
            Ok(user) => {
                dir.user = user;
                return Ok(dir);
            }
            Err(e) => e,
        };
        dir.lift_budgets = false;
        if let Ok(user) = dir.add_user("bench", false) {
            dir.user = user;
            return Ok(dir);
        }
        dir.raise_stream_limits = false;
        dir.user = dir.add_user("bench", false).map_err(|_| first)?;
        Ok(dir)
    }

    /// A directory for a cluster node: `env` names the database and the node; the user
    /// `bench` is created (in the shared database) only when `add_user`.
    pub fn prepare_node(&self, env: Vec<(String, String)>, add_user: bool) -> Result<ServerDir> {
        let path = std::env::temp_dir().join(format!("docsync-bench-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&path).with_context(|| format!("creating {}", path.display()))?;
        let mut dir = ServerDir {
            launcher: self.clone(),
            path,
            user: BenchUser::default(),
            raise_stream_limits: true,
            lift_budgets: true,
            extra_env: env,
        };
        if add_user {
            dir.user = dir.add_user("bench", false)?;
        }
        Ok(dir)
    }

    /// A server on a fresh database (`prepare`, then `serve`, off the async workers).
    pub async fn start(&self) -> Result<LocalServer> {
        let launcher = self.clone();
        tokio::task::spawn_blocking(move || launcher.prepare()?.serve()).await?
    }

    /// Like `start`, with the write budgets at their defaults and `env` set.
    pub async fn start_as_deployed(&self, env: Vec<(String, String)>) -> Result<LocalServer> {
        let launcher = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut dir = launcher.prepare()?;
            dir.lift_budgets = false;
            dir.extra_env = env;
            dir.serve()
        })
        .await?
    }
}

#[derive(Default)]
pub struct BenchUser {
    pub id: String,
    pub token: String,
}

/// A temporary directory holding a server's database; removed when dropped.
pub struct ServerDir {
    launcher: Launcher,
    path: PathBuf,
    pub user: BenchUser,
    /// Whether `command` lifts the server's per-user and per-address stream limits.
    raise_stream_limits: bool,
    /// Whether `command` turns the write budgets off.
    lift_budgets: bool,
    /// More settings for this server only.
    extra_env: Vec<(String, String)>,
}

impl ServerDir {
    pub fn db_path(&self) -> PathBuf {
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
        if self.raise_stream_limits {
            // Every subscriber of the bench is the user `bench` on 127.0.0.1: thousands of
            // streams from one user and one address, which the defaults rightly refuse.
            for key in STREAM_LIMIT_KEYS {
                cmd.env(key, MANY_STREAMS);
            }
        }
        if self.lift_budgets {
            for key in BUDGET_KEYS {
                cmd.env(key, "0");
            }
        }
        for (k, v) in &self.extra_env {
            cmd.env(k, v);
        }
        cmd
    }

    /// `docsync init` (the database created and migrated if needed), then `docsync user add
    /// NAME [--admin]`.
    pub fn add_user(&self, name: &str, admin: bool) -> Result<BenchUser> {
        let init = self
            .command()
            .arg("init")
            .stderr(Stdio::piped())
            .output()
            .context("running `docsync init`")?;
        if !init.status.success() {
            bail!(
                "`docsync init` failed: {}",
                String::from_utf8_lossy(&init.stderr).trim()
            );
        }
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

    /// Runs `job` in one write transaction on this directory's database, through the storage
    /// layer the server uses (no server may have it open yet). Returns what `job` returned.
    pub fn write_before_serving<T: Send + 'static>(
        &self,
        job: impl FnOnce(&rusqlite::Connection) -> storage::Result<T> + Send + 'static,
    ) -> Result<T> {
        let config = StorageConfig {
            backend: docsync_actors::storage::Backend::Sqlite,
            path: self.db_path(),
            // Fixtures need no durability until the final commit; `Normal` spares the fsyncs.
            synchronous: Synchronous::Normal,
            read_pool_size: 1,
            group_commit_max: 1,
            cache_kib: 16 * 1024,
            metrics: None,
        };
        let (storage, writer) = Storage::open(&config)?;
        let out = storage
            .sqlite_writer()
            .expect("a SQLite directory")
            .call_blocking(job);
        // Closing the last connection checkpoints the WAL into the database file, so the
        // server does not pay for that during a measurement.
        drop(storage);
        let _ = writer.join();
        Ok(out?)
    }

    /// One more setting for this server.
    pub fn set_env(&mut self, key: &str, value: &str) {
        self.extra_env.push((key.to_string(), value.to_string()));
    }

    /// Starts `docsync serve` on this directory and waits for its listening line.
    pub fn serve(self) -> Result<LocalServer> {
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
pub struct LocalServer {
    child: Child,
    pub pid: u32,
    pub base_url: String,
    dir: ServerDir,
}

impl LocalServer {
    /// The server's database file.
    pub fn db_path(&self) -> PathBuf {
        self.dir.db_path()
    }

    /// A client acting as the user `bench`.
    pub fn api(&self) -> Result<Api> {
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
